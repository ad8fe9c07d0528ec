package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

const (
	concWorkers = 8
	concSteps   = 12
)

// concCP is checkpoint step j of worker w: its values, metadata and writes
// are all derived from (w, j), so a reader can check a tuple on its own.
func concCP(w, j int) (spec.Checkpoint, spec.Metadata, spec.Versions, []spec.Write) {
	id := fmt.Sprintf("w%02d-%03d", w, j)
	vals := map[string]any{}
	vers := spec.Versions{}
	for c := range 4 {
		ch := fmt.Sprintf("ch%d", c)
		vals[ch] = fmt.Sprintf("%s/%s", id, ch)
		vers[ch] = spec.Version(id)
	}
	return cpOf(id, vals, vers), spec.Metadata{"id": id, "step": j}, vers, []spec.Write{{Channel: "w", Value: id}, {Channel: spec.InterruptChannel, Value: id}}
}

// checkWhole returns an error unless t is a complete concCP checkpoint.
func checkWhole(t *spec.Tuple) error {
	id := t.Config.CheckpointID
	if t.Metadata["id"] != id {
		return fmt.Errorf("checkpoint %s: metadata %v", id, t.Metadata)
	}
	if len(t.Checkpoint.ChannelValues) != 4 {
		return fmt.Errorf("checkpoint %s: torn, %d of 4 channel values visible", id, len(t.Checkpoint.ChannelValues))
	}
	for ch, v := range t.Checkpoint.ChannelValues {
		if v != id+"/"+ch {
			return fmt.Errorf("checkpoint %s: channel %s holds %v", id, ch, v)
		}
	}
	return nil
}

// runWorkers runs fn(w) on concWorkers goroutines and returns their errors
// joined.
func runWorkers(fn func(w int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, concWorkers)
	for w := range concWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[w] = fmt.Errorf("worker %d panicked: %v", w, r)
				}
			}()
			errs[w] = fn(w)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeChain puts concSteps chained checkpoints of worker w in thread th,
// each followed by its writes.
func writeChain(ctx context.Context, s spec.Saver, th string, w int) error {
	parent := ""
	for j := range concSteps {
		cp, m, nv, ws := concCP(w, j)
		cfg, err := s.Put(ctx, spec.Config{ThreadID: th, CheckpointID: parent}, cp, m, nv)
		if err != nil {
			return err
		}
		if err := s.PutWrites(ctx, cfg, ws, "task", taskPath); err != nil {
			return err
		}
		parent = cp.ID
	}
	return nil
}

// concSpecs covers concurrency (CONC-*).
func concSpecs(e *env) {
	g.Describe("Concurrency", func() {
		expectAll := func(ctx context.Context, thread func(w int) string) {
			g.GinkgoHelper()
			for w := range concWorkers {
				for j := range concSteps {
					cp, _, _, ws := concCP(w, j)
					t := e.get(ctx, thread(w), "", cp.ID)
					Expect(checkWhole(t)).To(Succeed())
					// In any order: the order is WRITES-9's.
					Expect(sortWrites(t.PendingWrites)).To(equalTyped(sortWrites([]spec.PendingWrite{pw("task", ws[1].Channel, ws[1].Value), pw("task", ws[0].Channel, ws[0].Value)})))
				}
			}
		}

		check("[CONC-1] loses nothing when goroutines put and write to distinct threads", lConc, func(ctx context.Context) {
			th := func(w int) string { return fmt.Sprintf("thread-%d", w) }
			Expect(runWorkers(func(w int) error { return writeChain(ctx, e.s, th(w), w) })).To(Succeed())
			for w := range concWorkers {
				Expect(e.list(ctx, spec.ListOptions{ThreadID: th(w)})).To(HaveLen(concSteps), "thread %s", th(w))
			}
			expectAll(ctx, th)
		})

		check("[CONC-2] loses nothing when goroutines put and write to one thread", lConc, func(ctx context.Context) {
			th := func(int) string { return "shared" }
			shared := e.put(ctx, "shared", "", "", "w99", nil)
			Expect(runWorkers(func(w int) error {
				if err := writeChain(ctx, e.s, "shared", w); err != nil {
					return err
				}
				// Every worker also writes to one common checkpoint.
				return e.s.PutWrites(ctx, shared, []spec.Write{{Channel: "c", Value: w}}, fmt.Sprintf("task-%02d", w), taskPath)
			})).To(Succeed())
			Expect(e.list(ctx, spec.ListOptions{ThreadID: "shared"})).To(HaveLen(concWorkers*concSteps + 1))
			expectAll(ctx, th)
			Expect(e.get(ctx, "shared", "", "w99").PendingWrites).To(HaveLen(concWorkers))
		})

		check("[CONC-2] keeps exactly one write per key and one checkpoint per key under contention", lConc, func(ctx context.Context) {
			cfg := e.put(ctx, "t", "", "", "c1", nil)
			Expect(runWorkers(func(w int) error {
				for range 5 {
					ws := []spec.Write{{Channel: "a", Value: w}, {Channel: spec.InterruptChannel, Value: w}}
					if err := e.s.PutWrites(ctx, cfg, ws, "same-task", taskPath); err != nil {
						return err
					}
					cp := cpOf("c2", map[string]any{"v": int64(w)}, spec.Versions{"v": spec.Version(fmt.Sprint(w))})
					if _, err := e.s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, cp, md("w", w), spec.Versions{"v": spec.Version(fmt.Sprint(w))}); err != nil {
						return err
					}
				}
				return nil
			})).To(Succeed())
			pws := sortWrites(e.get(ctx, "t", "", "c1").PendingWrites)
			Expect(pws).To(HaveLen(2), "one regular and one special write for the single task")
			Expect(pws[0].Channel).To(Equal(spec.InterruptChannel))
			Expect(pws[1].Channel).To(Equal("a"))
			Expect(pws[0].Value).To(BeNumerically("<", concWorkers))
			Expect(pws[1].Value).To(BeNumerically("<", concWorkers))
			listed := e.list(ctx, spec.ListOptions{ThreadID: "t"})
			Expect(idsOf(listed)).To(Equal([]string{"c2", "c1"}))
			// The surviving c2 is one worker's put as a whole.
			w := listed[0].Metadata["w"]
			expectSame(listed[0].Checkpoint.ChannelValues, map[string]any{"v": w}, "values of the surviving re-put")
		})

		check("[CONC-1] loses nothing of other threads while threads are deleted", lConc, func(ctx context.Context) {
			th := func(w int) string { return fmt.Sprintf("thread-%d", w) }
			Expect(runWorkers(func(w int) error {
				if w%2 == 1 {
					// What happens to the doomed thread itself is not this
					// rule's matter: only the other threads are checked.
					for range concSteps {
						_ = e.s.DeleteThread(ctx, "doomed")
						_, _ = e.s.Put(ctx, spec.Config{ThreadID: "doomed"}, cpOf("x", nil, nil), nil, nil)
					}
					return nil
				}
				return writeChain(ctx, e.s, th(w), w)
			})).To(Succeed())
			for w := 0; w < concWorkers; w += 2 {
				for j := range concSteps {
					cp, _, _, _ := concCP(w, j)
					Expect(checkWhole(e.get(ctx, th(w), "", cp.ID))).To(Succeed())
				}
			}
		})

		// Its readers judge what they meet with checkWhole, as CONC-4's
		// do with checkIntact, so a sequential fault shows only where the
		// scheduler lets a reader meet it: it has their prerequisites.
		checkNeeds("[CONC-3] never shows a torn checkpoint to concurrent readers", intactNeeds, lConc, func(ctx context.Context) {
			var writing atomic.Int32
			writing.Store(concWorkers / 2)
			var seen atomic.Int64
			read := func() error {
				for {
					done := writing.Load() == 0
					t, err := e.s.GetTuple(ctx, spec.Config{ThreadID: "shared"})
					if err == nil {
						seen.Add(1)
						if err := checkWhole(t); err != nil {
							return err
						}
					} else if !errors.Is(err, spec.ErrNotFound) {
						return err
					}
					for t, err := range e.s.List(ctx, spec.ListOptions{ThreadID: "shared", Limit: 5}) {
						if err != nil {
							return err
						}
						seen.Add(1)
						if err := checkWhole(t); err != nil {
							return err
						}
					}
					if done {
						return nil
					}
				}
			}
			Expect(runWorkers(func(w int) error {
				if w%2 == 1 {
					return read()
				}
				defer writing.Add(-1)
				return writeChain(ctx, e.s, "shared", w)
			})).To(Succeed())
			Expect(seen.Load()).To(BeNumerically(">", 0))
		})
	})
}
