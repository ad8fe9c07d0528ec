package mutants

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Engine-driven mutants: savers that pass the method-by-method specs but
// break on a path only an engine exercises. The unit specs write with empty
// task paths and ordinary task IDs and never read a loop checkpoint next to
// its parent's writes; the reference engine does all three, so only the
// engine group (ENGINE-* rules) catches these.

func init() {
	register(Mutant{
		Name: "engine-null-resume-dropped", Rule: "ENGINE-INTERRUPT-1",
		Description: "Resume values written under the null task ID are silently dropped (the all-zero task ID is treated as \"no task\").",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if taskID == spec.NullTaskID {
					writes = slices.DeleteFunc(slices.Clone(writes), func(x spec.Write) bool { return x.Channel == spec.ResumeChannel })
				}
				return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", spec.NullTaskID, wr(spec.ResumeChannel, "yes"))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-loop-inherits-parent-writes", Rule: "ENGINE-LINEAR-1",
		Description: "A checkpoint with source \"loop\", updated channels and no writes of its own is returned with its parent's pending writes.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if t.Metadata["source"] != "loop" || t.Checkpoint.UpdatedChannels == nil || len(t.PendingWrites) > 0 || t.Parent == nil {
					return
				}
				if p, err := w.Inner.GetTuple(context.Background(), *t.Parent); err == nil {
					t.PendingWrites = append(t.PendingWrites, p.PendingWrites...)
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"source": "input"}, nil)
			putW(ctx, s, "a", "task", wr("c", 1))
			cp := spec.Checkpoint{V: 4, ID: "b", UpdatedChannels: []string{"c"}}
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, cp, spec.Metadata{"source": "loop"}, spec.Versions{})
			return writesOf(ctx, s, "t", "", "b")
		},
	})
	register(Mutant{
		Name: "engine-early-task-writes-lost", Rule: "ENGINE-ASYNC-1",
		Description: "Writes with an engine task path (\"~__pregel_...\") that arrive before their checkpoint is stored are dropped (as if a foreign key from the task-path row to the checkpoint failed silently).",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
				if strings.HasPrefix(taskPath, "~__pregel_") {
					if _, err := w.Inner.GetTuple(ctx, cfg); errors.Is(err, spec.ErrNotFound) {
						return nil
					}
				}
				return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{wr("c", 1)}, "task", "~__pregel_pull, node")
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "engine-lookup-ignores-before", Rule: "ENGINE-SUBGRAPH-2",
		Description: "A List of one subgraph namespace with Limit 1 ignores Before and returns the latest checkpoint (a \"latest of namespace\" shortcut).",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.Limit == 1 && o.Namespace != "" && !o.AllNamespaces && o.Before != "" && len(o.Filter) == 0 {
					o.Before = ""
				}
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "sub", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "b", "", nil, nil)
			_ = putCP(ctx, s, "t", "sub", "c", "a", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Namespace: "sub", Before: "b", Limit: 1})
		},
	})
}
