package mutants

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of issue 14's rules: hostile values and bytes, all-or-nothing
// calls under cancellation, live deadlines, goroutines left by List, and
// maintenance racing writes.

// depthOf returns how deeply v nests maps and lists (a scalar is 0), but
// stops counting at limit, so that it ends on a value that contains
// itself.
func depthOf(v any, limit int) int {
	if limit <= 0 {
		return 0
	}
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e, limit-1))
		}
		return 1 + d
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e, limit-1))
		}
		return 1 + d
	case spec.Metadata:
		return depthOf(map[string]any(x), limit)
	}
	return 0
}

// valueGuard builds a mutant that checks the values of every Put,
// PutWrites and List filter with reject before handing the call to the
// memory adapter: reject returns an error for a value it refuses. extra is
// the depth a value of metadata or a filter has more than a channel value
// (one: they are values of a map).
func valueGuard(reject func(v any, extra int) error) func() spec.Saver {
	return func() spec.Saver {
		w := wrap()
		in := w.Inner
		w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
			for _, v := range cp.ChannelValues {
				if err := reject(v, 0); err != nil {
					return spec.Config{}, err
				}
			}
			for _, v := range md {
				if err := reject(v, 1); err != nil {
					return spec.Config{}, err
				}
			}
			return in.Put(ctx, cfg, cp, md, nv)
		}
		w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
			for _, x := range ws {
				if err := reject(x.Value, 0); err != nil {
					return err
				}
			}
			return in.PutWrites(ctx, cfg, ws, task, path)
		}
		w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
			for _, v := range o.Filter {
				if err := reject(v, 1); err != nil {
					return func(yield func(*spec.Tuple, error) bool) { yield(nil, err) }
				}
			}
			return in.List(ctx, o)
		}
		return w
	}
}

// recursionGuard is the depth at which the cycle-wrong-error mutant's
// recursive walk gives up: deep enough for every legitimate value, shallow
// enough not to exhaust the stack.
const recursionGuard = 10_000

// witnessSelf puts a checkpoint holding a map that contains itself and
// reports the error.
func witnessSelf(ctx context.Context, s spec.Saver) any {
	m := map[string]any{}
	m["self"] = m
	return errKind(putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": m}))
}

// witnessNested puts a checkpoint whose value nests exactly
// spec.MaxValueDepth levels and reports the error.
func witnessNested(ctx context.Context, s spec.Saver) any {
	var v any = "leaf"
	for range spec.MaxValueDepth {
		v = []any{v}
	}
	return errKind(putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": v}))
}

// trippingCtx is cancelled on its n-th call of Err: a witness's stand-in
// for a caller cancelling while the call runs.
type trippingCtx struct {
	context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	n      int
}

func (c *trippingCtx) Err() error {
	c.mu.Lock()
	c.n--
	if c.n == 0 {
		c.cancel()
	}
	c.mu.Unlock()
	return c.Context.Err()
}

func newTrippingCtx(ctx context.Context, n int) (*trippingCtx, context.CancelFunc) {
	inner, cancel := context.WithCancel(ctx)
	return &trippingCtx{Context: inner, cancel: cancel, n: n}, cancel
}

// listItem is one result of a List.
type listItem struct {
	t   *spec.Tuple
	err error
}

// leakyListProducer sends the results of seq over ch, then closes it. A
// consumer that stops reading leaves it blocked for ever.
func leakyListProducer(seq iter.Seq2[*spec.Tuple, error], ch chan<- listItem) {
	defer close(ch)
	for t, err := range seq {
		ch <- listItem{t, err}
	}
}

// producers counts the goroutines running leakyListProducer.
func producers() int {
	buf := make([]byte, 8<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "mutants.leakyListProducer(")
}

// yieldAround lets other goroutines run a while, so that a race window a
// mutant opens is wide enough for the suite's races to land in it.
func yieldAround() {
	for range 20 {
		runtime.Gosched()
	}
}

func init() {
	register(Mutant{
		Name: "checkpoint-v-fixed", Rule: "PUT-10",
		Description: "Checkpoint.V is not stored: every checkpoint reads back with V 4, today's format version.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) { t.Checkpoint.V = 4 }
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			cp := spec.Checkpoint{V: 2, ID: "a", TS: "ts"}
			if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil); err != nil {
				return errKind(err)
			}
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
			if err != nil {
				return errKind(err)
			}
			return t.Checkpoint.V
		},
	})
	register(Mutant{
		Name: "cycle-wrong-error", Rule: "VALUE-9",
		Description: "A self-containing value is walked until a recursion guard gives up, with an error that is not ErrUnsupportedValue.",
		New: valueGuard(func(v any, _ int) error {
			if depthOf(v, recursionGuard) >= recursionGuard {
				return errors.New("value nested too deeply for the encoder")
			}
			return nil
		}),
		Witness: witnessSelf,
	})
	register(Mutant{
		Name: "depth-limit-off-by-one", Rule: "VALUE-10",
		Description: "Values are refused from spec.MaxValueDepth levels on, so a value at the documented limit does not round-trip.",
		New: valueGuard(func(v any, extra int) error {
			if depthOf(v, spec.MaxValueDepth+1)+extra >= spec.MaxValueDepth {
				return fmt.Errorf("value nested %d levels or more: %w", spec.MaxValueDepth, spec.ErrUnsupportedValue)
			}
			return nil
		}),
		Witness: witnessNested,
	})
	register(Mutant{
		Name: "task-path-nul-stripped", Rule: "ERR-9",
		Description: "PutWrites drops NUL bytes and invalid UTF-8 from the task path instead of rejecting it.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				path = strings.ToValidUTF8(strings.ReplaceAll(path, "\x00", ""), "")
				return w.Inner.PutWrites(ctx, cfg, ws, task, path)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{{Channel: "c", Value: 1}}, "task", "p\x00"))
		},
	})
	register(Mutant{
		Name: "writes-one-by-one", Rule: "WRITES-12",
		Description: "PutWrites validates the batch, then stores its writes one at a time, checking its context between them, so a cancellation leaves part of the batch.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				if err := spec.ValidatePutWrites(cfg, ws, task, path); err != nil {
					return err
				}
				for _, x := range ws {
					if _, err := spec.Normalize(x.Value); err != nil {
						return err
					}
				}
				if len(ws) == 0 {
					return w.Inner.PutWrites(ctx, cfg, ws, task, path)
				}
				// Growing prefixes keep every write's index, so the stored
				// batch is the same as one call's once all are in.
				for i := range ws {
					if err := ctx.Err(); err != nil {
						return err
					}
					if err := w.Inner.PutWrites(context.WithoutCancel(ctx), cfg, ws[:i+1], task, path); err != nil {
						return err
					}
				}
				return nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			tc, cancel := newTrippingCtx(ctx, 2)
			defer cancel()
			err := s.PutWrites(tc, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{{Channel: "c", Value: 1}, {Channel: "d", Value: 2}}, "task", "")
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return []any{errKind(err), writesOf(ctx, s, "t", "", "a")}
		},
	})
	register(Mutant{
		Name: "put-reports-late-cancel", Rule: "CTX-5",
		Description: "Put checks its context before and after storing, and reports a cancellation that came meanwhile although the checkpoint is stored, as a driver does when the answer to a committed write is cut off.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if err := ctx.Err(); err != nil {
					return spec.Config{}, err
				}
				out, err := w.Inner.Put(context.WithoutCancel(ctx), cfg, cp, md, nv)
				if err == nil && ctx.Err() != nil {
					return spec.Config{}, ctx.Err()
				}
				return out, err
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			tc, cancel := newTrippingCtx(ctx, 2)
			defer cancel()
			err := putCP(tc, s, "t", "", "a", "", nil, nil)
			return []any{errKind(err), get(ctx, s, "t", "", "a")}
		},
	})
	register(Mutant{
		Name: "prune-fails-under-deadline", Rule: "CTX-6",
		Description: "Prune fails whenever its context has a deadline that has not passed, as MongoDB's distinct does on FerretDB once the driver adds maxTimeMS.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				if _, ok := ctx.Deadline(); ok && ctx.Err() == nil {
					return errors.New(`(FailedToParse) distinct: unknown field "maxTimeMS"`)
				}
				return w.Inner.Prune(ctx, threads, strategy)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			dctx, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			return errKind(s.(spec.Pruner).Prune(dctx, []string{"t"}, spec.KeepLatest))
		},
	})
	register(Mutant{
		Name: "list-leaks-goroutine", Rule: "CTX-7",
		Description: "List reads on a goroutine that hands tuples over an unbuffered channel; a loop that stops early leaves it blocked forever.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return func(yield func(*spec.Tuple, error) bool) {
					ch := make(chan listItem)
					go leakyListProducer(w.Inner.List(ctx, o), ch)
					for it := range ch {
						if !yield(it.t, it.err) {
							return
						}
					}
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "b", "a", nil, nil)
			before := producers()
			for range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
				break
			}
			return producers() - before
		},
	})
	register(Mutant{
		Name: "copy-thread-writes-one-by-one", Rule: "CONC-4",
		Description: "CopyThread puts each checkpoint into the destination, then its writes one at a time, so a reader of the destination sees part of a PutWrites call.",
		New: func() spec.Saver {
			w := wrap()
			// The torn state lasts as long as the copy waits after each
			// partial write: until a List of the destination that started
			// after the write has ended, or a short while when nobody
			// reads. Without the wait, a loaded machine can let the whole
			// copy pass between two reads.
			var (
				target  atomic.Value // the destination being copied, a string
				written atomic.Int64 // partial writes so far
				served  = make(chan int64, 1)
			)
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return func(yield func(*spec.Tuple, error) bool) {
					seen := written.Load()
					defer func() {
						if dst, _ := target.Load().(string); dst != "" && o.ThreadID == dst {
							select {
							case served <- seen:
							default:
							}
						}
					}()
					for t, err := range w.Inner.List(ctx, o) {
						if !yield(t, err) {
							return
						}
					}
				}
			}
			awaitRead := func() {
				n := written.Add(1)
				timeout := time.After(20 * time.Millisecond)
				for {
					select {
					case seen := <-served:
						if seen >= n {
							return
						}
					case <-timeout:
						return
					}
				}
			}
			w.OnCopyThread = func(ctx context.Context, src, dst string) error {
				for _, th := range []string{src, dst} {
					if err := spec.ValidateThreadID("copy thread", th); err != nil {
						return err
					}
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				ctx = context.WithoutCancel(ctx)
				ts, err := threadTuples(ctx, w.Inner, src)
				if err != nil {
					return err
				}
				target.Store(dst)
				defer target.Store("")
				// Oldest first, so the checkpoint being copied is the
				// destination's latest.
				slices.Reverse(ts)
				for _, t := range ts {
					if err := restore(ctx, w.Inner, t, dst, t.Config.CheckpointID, parentID(t), false); err != nil {
						return err
					}
					cfg := spec.Config{ThreadID: dst, Namespace: t.Config.Namespace, CheckpointID: t.Config.CheckpointID}
					var tasks []string
					byTask := map[string][]spec.Write{}
					for _, p := range t.PendingWrites {
						if _, ok := byTask[p.TaskID]; !ok {
							tasks = append(tasks, p.TaskID)
						}
						byTask[p.TaskID] = append(byTask[p.TaskID], spec.Write{Channel: p.Channel, Value: p.Value})
					}
					for _, task := range tasks {
						ws := byTask[task]
						for i := range ws {
							if err := w.Inner.PutWrites(ctx, cfg, ws[:i+1], task, ""); err != nil {
								return err
							}
							if i+1 < len(ws) {
								awaitRead()
							}
						}
					}
				}
				return nil
			}
			return w
		},
	})
	register(Mutant{
		Name: "prune-rebuilds-thread", Rule: "CONC-5",
		Description: "Prune with KeepLatest reads the latest checkpoints, deletes the thread and puts them back, so a Put landing in between is lost although it is newer than what Prune keeps.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				if strategy != spec.KeepLatest {
					return w.Inner.Prune(ctx, threads, strategy)
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				for _, th := range threads {
					if err := spec.ValidateThreadID("prune", th); err != nil {
						return err
					}
				}
				ctx = context.WithoutCancel(ctx)
				for _, th := range threads {
					ts, err := threadTuples(ctx, w.Inner, th)
					if err != nil {
						return err
					}
					latest := map[string]*spec.Tuple{}
					var order []string
					for _, t := range ts {
						if _, ok := latest[t.Config.Namespace]; !ok {
							latest[t.Config.Namespace] = t
							order = append(order, t.Config.Namespace)
						}
					}
					for range 5 {
						yieldAround()
					}
					if err := w.Inner.Prune(ctx, []string{th}, spec.DeleteAll); err != nil {
						return err
					}
					for range 5 {
						yieldAround()
					}
					for _, ns := range order {
						t := latest[ns]
						if err := restore(ctx, w.Inner, t, th, t.Config.CheckpointID, parentID(t), true); err != nil {
							return err
						}
					}
				}
				return nil
			}
			return w
		},
	})
	register(Mutant{
		Name: "delete-thread-metadata-later", Rule: "CONC-6", AlsoRaces: []string{"CONC-4"},
		Description: "Metadata is stored apart from checkpoints: Put stores it first, DeleteThread deletes it after the checkpoints, so a Put running alongside can survive without its metadata.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			// stored says, per checkpoint put through this saver, whether
			// its metadata is stored (true) or was deleted (false).
			stored := map[ckey]bool{}
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				mu.Lock()
				stored[ckey{cfg.ThreadID, cfg.Namespace, cp.ID}] = true
				mu.Unlock()
				for range 3 {
					yieldAround()
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			w.OnDeleteThread = func(ctx context.Context, th string) error {
				if err := w.Inner.DeleteThread(ctx, th); err != nil {
					return err
				}
				for range 5 {
					yieldAround()
				}
				mu.Lock()
				defer mu.Unlock()
				for k := range stored {
					if k.thread == th {
						stored[k] = false
					}
				}
				return nil
			}
			w.MapTuple = func(t *spec.Tuple) {
				mu.Lock()
				defer mu.Unlock()
				if ok, known := stored[keyOf(t)]; known && !ok {
					t.Metadata = spec.Metadata{}
				}
			}
			return w
		},
	})
}
