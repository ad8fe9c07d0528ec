package mutants

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of PutWrites and of the pending writes returned with a tuple.

// putW is PutWrites against (thread, "", id) that ignores the error; the
// witness observes the outcome through reads.
func putW(ctx context.Context, s spec.Saver, id, task string, ws ...spec.Write) {
	_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: id}, ws, task, "")
}

func wr(ch string, v any) spec.Write { return spec.Write{Channel: ch, Value: v} }

func init() {
	register(Mutant{
		Name: "regular-write-last-wins", Rule: "WRITES-2",
		Description: "A repeated regular write (same task and index) replaces the stored one instead of being ignored.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{regularLastWins: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr("c", 1))
			putW(ctx, s, "a", "task", wr("c", 2))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "special-write-first-wins", Rule: "WRITES-3",
		Description: "A special write never replaces one stored by an earlier call (first wins, like regular writes).",
		New:         func() spec.Saver { return withWriteStore(writePolicy{specialFirstWins: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr(spec.ErrorChannel, "first"))
			putW(ctx, s, "a", "task", wr(spec.ErrorChannel, "second"))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "special-batch-first-wins", Rule: "WRITES-4",
		Description: "Within one PutWrites call, the first special write to a channel wins over later ones in the slice.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{batchFirstSpecial: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr(spec.InterruptChannel, "first"), wr(spec.InterruptChannel, "second"))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "write-channel-in-key", Rule: "WRITES-1",
		Description: "The channel is part of the write key, so a repeated index with another channel is stored too.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{channelInKey: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr("x", 1))
			putW(ctx, s, "a", "task", wr("y", 2))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "write-index-skips-specials", Rule: "WRITES-1",
		Description: "Regular writes are numbered without counting the positions taken by special writes.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{skipSpecialSlots: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr(spec.ErrorChannel, "e"), wr("x", 1))
			putW(ctx, s, "a", "task", wr("y", 2))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "write-namespace-ignored", Rule: "NS-1",
		Description: "Write keys ignore the namespace: writes to one checkpoint ID show up in every namespace that has it.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{ignoreNamespace: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "sub:1", "a", "", nil, nil)
			_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "a"}, []spec.Write{wr("x", 1)}, "task", "")
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "reput-drops-writes", Rule: "PUT-11",
		Description: "Putting an existing checkpoint again forgets its pending writes.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{dropOnReput: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr("x", 1))
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"again": true}, nil)
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "writes-before-checkpoint-dropped", Rule: "WRITES-7",
		Description: "Writes to a checkpoint that has not been put yet are silently discarded.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{dropIfMissing: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			putW(ctx, s, "a", "task", wr("x", 1))
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "pending-writes-unsorted", Rule: "WRITES-9",
		Description: "Pending writes come back with the tasks in reverse order (each task's writes in order) instead of by task ID.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				slices.SortStableFunc(t.PendingWrites, func(a, b spec.PendingWrite) int { return strings.Compare(b.TaskID, a.TaskID) })
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task-b", wr("x", 1))
			putW(ctx, s, "a", "task-a", wr("y", 2))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "pending-writes-nil", Rule: "GET-6",
		Description: "A checkpoint without pending writes reads back with PendingWrites == nil.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if len(t.PendingWrites) == 0 {
					t.PendingWrites = nil
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
			return err == nil && t.PendingWrites == nil
		},
	})
	register(Mutant{
		Name: "empty-writes-error", Rule: "WRITES-11",
		Description: "PutWrites with an empty slice fails instead of being a no-op.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				if len(ws) == 0 {
					return spec.ErrInvalidArgument
				}
				return w.Inner.PutWrites(ctx, cfg, ws, task, path)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, nil, "task", ""))
		},
	})
	register(Mutant{
		Name: "batch-rule-of-first-write", Rule: "WRITES-5",
		Description: "A whole batch is first-wins or last-wins according to the kind of its first write, not write by write.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{batchRuleOfFirst: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr("x", 1), wr(spec.ResumeChannel, "r1"))
			putW(ctx, s, "a", "task", wr("x", 2), wr(spec.ResumeChannel, "r2"))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "batch-rule-insert-if-mixed", Rule: "WRITES-5",
		Description: "A batch holding a regular write only inserts new keys, its special writes included; an all-special batch replaces (LangGraph's SQL and MongoDB savers).",
		New:         func() spec.Saver { return withWriteStore(writePolicy{batchRuleMixed: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr("x", 1), wr(spec.ResumeChannel, "r1"))
			putW(ctx, s, "a", "task", wr("x", 2), wr(spec.ResumeChannel, "r2"))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "write-task-ignored", Rule: "WRITES-6",
		Description: "The task ID is not part of the write key, so two tasks writing at the same position collide.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{ignoreTask: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "t1", wr("x", 1))
			putW(ctx, s, "a", "t2", wr("x", 2))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "task-path-required", Rule: "WRITES-8",
		Description: "PutWrites rejects an empty task path with ErrInvalidArgument.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				if path == "" {
					return fmt.Errorf("mutant: empty task path: %w", spec.ErrInvalidArgument)
				}
				return w.Inner.PutWrites(ctx, cfg, ws, task, path)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{wr("x", 1)}, "task", ""))
		},
	})
	register(Mutant{
		Name: "write-thread-ignored", Rule: "WRITES-10",
		Description: "Write keys ignore the thread ID, so a checkpoint ID in another thread shows the same pending writes.",
		New:         func() spec.Saver { return withWriteStore(writePolicy{ignoreThread: true}) },
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "other", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr("x", 1))
			return writesOf(ctx, s, "other", "", "a")
		},
	})
}
