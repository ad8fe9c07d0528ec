package mutants

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of contexts, argument errors and resources.

// contextMutant builds a mutant that passes ctx to the memory adapter
// through swap, which may detach it from its cancellation.
func contextMutant(swap func(ctx context.Context) context.Context) func() spec.Saver {
	return func() spec.Saver {
		w := wrap()
		in := w.Inner
		w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
			return in.Put(swap(ctx), cfg, cp, md, nv)
		}
		w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
			return in.PutWrites(swap(ctx), cfg, ws, task, path)
		}
		w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) { return in.GetTuple(swap(ctx), cfg) }
		w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
			return in.List(swap(ctx), o)
		}
		w.OnDeleteThread = func(ctx context.Context, th string) error { return in.DeleteThread(swap(ctx), th) }
		w.OnCopyThread = func(ctx context.Context, src, dst string) error { return in.CopyThread(swap(ctx), src, dst) }
		w.OnDeleteForRuns = func(ctx context.Context, runs []string) error { return in.DeleteForRuns(swap(ctx), runs) }
		w.OnPrune = func(ctx context.Context, ths []string, s spec.PruneStrategy) error {
			return in.Prune(swap(ctx), ths, s)
		}
		return w
	}
}

// witnessCancelled puts a checkpoint through an already cancelled context
// and reports the error and what was stored.
func witnessCancelled(ctx context.Context, s spec.Saver) any {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err := putCP(cctx, s, "t", "", "a", "", nil, nil)
	return []any{errKind(err), get(ctx, s, "t", "", "a")}
}

func init() {
	register(Mutant{
		Name: "context-ignored", Rule: "CTX-1",
		Description: "Every method ignores its context: a cancelled call runs to completion and succeeds.",
		New:         contextMutant(context.WithoutCancel),
		Witness:     witnessCancelled,
	})
	register(Mutant{
		Name: "deadline-ignored", Rule: "CTX-3",
		Description: "An expired deadline is ignored (only explicit cancellation is honoured).",
		New: contextMutant(func(ctx context.Context) context.Context {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return context.WithoutCancel(ctx)
			}
			return ctx
		}),
		Witness: func(ctx context.Context, s spec.Saver) any {
			dctx, cancel := context.WithDeadline(ctx, timeZero)
			defer cancel()
			return errKind(putCP(dctx, s, "t", "", "a", "", nil, nil))
		},
	})
	register(Mutant{
		Name: "context-checked-after-write", Rule: "CTX-2",
		Description: "Writes check the context only after storing, so a cancelled call fails but its changes stay.",
		New: func() spec.Saver {
			w := contextMutant(context.WithoutCancel)().(*Wrapper)
			put, putWrites, del := w.OnPut, w.OnPutWrites, w.OnDeleteThread
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := put(ctx, cfg, cp, md, nv)
				if err == nil && ctx.Err() != nil {
					return spec.Config{}, ctx.Err()
				}
				return out, err
			}
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				if err := putWrites(ctx, cfg, ws, task, path); err != nil {
					return err
				}
				return ctx.Err()
			}
			w.OnDeleteThread = func(ctx context.Context, th string) error {
				if err := del(ctx, th); err != nil {
					return err
				}
				return ctx.Err()
			}
			in := w.Inner
			w.OnGetTuple, w.OnList = nil, nil
			w.OnCopyThread = func(ctx context.Context, src, dst string) error {
				if err := in.CopyThread(context.WithoutCancel(ctx), src, dst); err != nil {
					return err
				}
				return ctx.Err()
			}
			w.OnDeleteForRuns = func(ctx context.Context, runs []string) error {
				if err := in.DeleteForRuns(context.WithoutCancel(ctx), runs); err != nil {
					return err
				}
				return ctx.Err()
			}
			w.OnPrune = func(ctx context.Context, ths []string, s spec.PruneStrategy) error {
				if err := in.Prune(context.WithoutCancel(ctx), ths, s); err != nil {
					return err
				}
				return ctx.Err()
			}
			return w
		},
		Witness: witnessCancelled,
	})
	register(Mutant{
		Name: "list-break-leaks-connection", Rule: "CTX-4",
		Description: "List takes a connection from a pool of four and returns it only when iterated to the end; after four early breaks every List fails.",
		New: func() spec.Saver {
			w := wrap()
			var inUse atomic.Int32
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return func(yield func(*spec.Tuple, error) bool) {
					if inUse.Add(1) > 4 {
						inUse.Add(-1)
						yield(nil, errPoolExhausted)
						return
					}
					for t, err := range w.Inner.List(ctx, o) {
						if !yield(t, err) {
							return // the connection is never given back
						}
					}
					inUse.Add(-1)
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			for range 5 {
				for range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
					break
				}
			}
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t"})
		},
	})
	register(Mutant{
		Name: "lost-writes-under-contention", Rule: "CONC-2",
		Description: "PutWrites silently drops its writes when another call on the same thread is in flight (a lost update).",
		New: func() spec.Saver {
			w := wrap()
			busy := newBusy()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				defer busy.enter(cfg.ThreadID)()
				runtime.Gosched()
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				leave := busy.enter(cfg.ThreadID)
				defer leave()
				if busy.count(cfg.ThreadID) > 1 {
					return nil
				}
				runtime.Gosched()
				return w.Inner.PutWrites(ctx, cfg, ws, task, path)
			}
			return w
		},
	})
	register(Mutant{
		Name: "torn-put", Rule: "CONC-3",
		Description: "Put stores a checkpoint in two steps, first with half of its channel values, so concurrent readers can see it torn.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if len(nv) >= 2 && cfg.ThreadID != "" && cp.ID != "" {
					half := spec.Versions{}
					vals := map[string]any{}
					for i, ch := range sortedKeys(nv) {
						if i%2 == 0 {
							half[ch] = nv[ch]
							vals[ch] = cp.ChannelValues[ch]
						}
					}
					partial := cp
					partial.ChannelValues = vals
					partial.ChannelVersions = half
					if _, err := w.Inner.Put(ctx, cfg, partial, md, half); err == nil {
						runtime.Gosched()
					}
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
	})
	register(Mutant{
		Name: "data-race", Rule: "CONC-2",
		Description: "Put counts calls per thread in a plain int without synchronisation: a data race only the race detector sees.",
		NeedsRace:   true,
		// Every spec with concurrent Puts on one thread meets the race, and
		// the race detector reports a pair of racing statements once per
		// process: the first such spec to run, in Ginkgo's random order,
		// gets the report.
		AlsoRaces: []string{"CONC-3", "CONC-4", "CONC-5"},
		New: func() spec.Saver {
			w := wrap()
			var counters sync.Map // thread -> *int
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				c, _ := counters.LoadOrStore(cfg.ThreadID, new(int))
				*c.(*int)++ // racy on purpose: concurrent Puts to one thread
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
	})
}

var timeZero = time.Unix(0, 0)

var errPoolExhausted = errors.New("mutant: connection pool exhausted")

// busy counts calls in flight per thread.
type busy struct {
	mu sync.Mutex
	n  map[string]int
}

func newBusy() *busy { return &busy{n: map[string]int{}} }

func (b *busy) enter(thread string) (leave func()) {
	b.mu.Lock()
	b.n[thread]++
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.n[thread]--
		b.mu.Unlock()
	}
}

func (b *busy) count(thread string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n[thread]
}
