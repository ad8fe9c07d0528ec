package conformance

import (
	"context"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// writesSpecs covers PutWrites (WRITES-*).
func writesSpecs(e *env) {
	g.Describe("PutWrites", func() {
		var cfg spec.Config
		setup := func(ctx context.Context) {
			cfg = e.put(ctx, "t", "", "", "c1", nil)
		}
		pending := func(ctx context.Context) []spec.PendingWrite {
			g.GinkgoHelper()
			return e.get(ctx, "t", "", "c1").PendingWrites
		}
		// anyOrder compares pending writes as a set: their order is WRITES-9's.
		anyOrder := func(ctx context.Context, want ...spec.PendingWrite) {
			g.GinkgoHelper()
			Expect(sortWrites(pending(ctx))).To(equalTyped(sortWrites(want)))
		}

		check("[WRITES-1] keys writes by task and index: the position, special writes included, or a special channel's fixed index", lWrites, func(ctx context.Context) {
			setup(ctx)
			e.writes(ctx, cfg, "task",
				spec.Write{Channel: "a", Value: "a"}, spec.Write{Channel: spec.ErrorChannel, Value: "e"},
				spec.Write{Channel: "b", Value: "b"}, spec.Write{Channel: spec.InterruptChannel, Value: "i"},
				spec.Write{Channel: "c", Value: "c"})
			// Positions 0, 2 and 4 repeat with equal values (so first-wins or
			// last-wins does not matter); 1 and 3 are new regular keys.
			e.writes(ctx, cfg, "task",
				spec.Write{Channel: "a", Value: "a"}, spec.Write{Channel: "y", Value: "y"},
				spec.Write{Channel: "b", Value: "b"}, spec.Write{Channel: "x", Value: "x"},
				spec.Write{Channel: "c", Value: "c"})
			anyOrder(ctx,
				pw("task", spec.InterruptChannel, "i"), pw("task", spec.ErrorChannel, "e"),
				pw("task", "a", "a"), pw("task", "y", "y"), pw("task", "b", "b"), pw("task", "x", "x"), pw("task", "c", "c"))
			// Another channel at an existing position is the same key: it
			// adds no write (which of the two remains is WRITES-2's matter).
			e.writes(ctx, cfg, "task", spec.Write{Channel: "z", Value: "z"})
			var slot0 []string
			got := pending(ctx)
			for _, w := range got {
				if w.Channel == "a" || w.Channel == "z" {
					slot0 = append(slot0, w.Channel)
				}
			}
			Expect(got).To(HaveLen(7), "writes after a write to channel z at the existing position 0")
			Expect(slot0).To(HaveLen(1), "position 0 holds one write")
		})

		check("[WRITES-2] ignores a repeated regular write key even with a different value", lWrites, func(ctx context.Context) {
			setup(ctx)
			e.writes(ctx, cfg, "task", spec.Write{Channel: "ch", Value: "first"})
			e.writes(ctx, cfg, "task", spec.Write{Channel: "ch", Value: "second"})
			anyOrder(ctx, pw("task", "ch", "first"))
		})

		check("[WRITES-3] lets the last special write win across calls", lWrites, func(ctx context.Context) {
			setup(ctx)
			specials := []string{spec.ErrorChannel, spec.ScheduledChannel, spec.InterruptChannel, spec.ResumeChannel}
			for _, ch := range specials {
				e.writes(ctx, cfg, "task", spec.Write{Channel: ch, Value: "old"})
			}
			for _, ch := range specials {
				e.writes(ctx, cfg, "task", spec.Write{Channel: ch, Value: "new-" + ch})
			}
			anyOrder(ctx,
				pw("task", spec.ResumeChannel, "new-"+spec.ResumeChannel), pw("task", spec.InterruptChannel, "new-"+spec.InterruptChannel),
				pw("task", spec.ScheduledChannel, "new-"+spec.ScheduledChannel), pw("task", spec.ErrorChannel, "new-"+spec.ErrorChannel),
			)
		})

		check("[WRITES-4] keeps the later of two special writes to one channel in a call", lWrites, func(ctx context.Context) {
			setup(ctx)
			e.writes(ctx, cfg, "task", spec.Write{Channel: spec.ErrorChannel, Value: "first"}, spec.Write{Channel: spec.ErrorChannel, Value: "second"})
			anyOrder(ctx, pw("task", spec.ErrorChannel, "second"))
		})

		check("[WRITES-5] applies first-wins and last-wins per write in a mixed batch", lWrites, func(ctx context.Context) {
			setup(ctx)
			e.writes(ctx, cfg, "task", spec.Write{Channel: "a", Value: "a1"}, spec.Write{Channel: spec.ResumeChannel, Value: "r1"})
			e.writes(ctx, cfg, "task", spec.Write{Channel: "a", Value: "a2"}, spec.Write{Channel: spec.ResumeChannel, Value: "r2"})
			// Now a special write first: b lands at index 1 both times.
			e.writes(ctx, cfg, "task", spec.Write{Channel: spec.ResumeChannel, Value: "r3"}, spec.Write{Channel: "b", Value: "b3"})
			e.writes(ctx, cfg, "task", spec.Write{Channel: spec.ResumeChannel, Value: "r4"}, spec.Write{Channel: "b", Value: "b4"})
			got := sortWrites(pending(ctx))
			if same(got, sortWrites([]spec.PendingWrite{pw("task", spec.ResumeChannel, "r1"), pw("task", "a", "a1"), pw("task", "b", "b3")})) {
				differ("a batch holding a regular write only inserts new keys, its special writes included (LangGraph's SQL and MongoDB savers)")
			}
			Expect(got).To(equalTyped(sortWrites([]spec.PendingWrite{pw("task", spec.ResumeChannel, "r4"), pw("task", "a", "a1"), pw("task", "b", "b3")})))
		})

		check("[WRITES-6] keeps writes of different tasks to the same channel and position", lWrites, func(ctx context.Context) {
			setup(ctx)
			e.writes(ctx, cfg, "t2", spec.Write{Channel: "ch", Value: "from-t2"}, spec.Write{Channel: spec.ErrorChannel, Value: "e2"})
			e.writes(ctx, cfg, "t1", spec.Write{Channel: "ch", Value: "from-t1"}, spec.Write{Channel: spec.ErrorChannel, Value: "e1"})
			anyOrder(ctx, pw("t1", spec.ErrorChannel, "e1"), pw("t1", "ch", "from-t1"), pw("t2", spec.ErrorChannel, "e2"), pw("t2", "ch", "from-t2"))
		})

		check("[WRITES-7] accepts writes before their checkpoint exists and shows them once it does", lWrites, func(ctx context.Context) {
			early := spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "later"}
			e.writes(ctx, early, "task", spec.Write{Channel: "ch", Value: "early"})
			e.expectMissing(ctx, "t", "sub:1", "later")
			e.put(ctx, "t", "sub:1", "", "later", nil)
			Expect(e.get(ctx, "t", "sub:1", "later").PendingWrites).To(equalTyped([]spec.PendingWrite{pw("task", "ch", "early")}))
		})

		check("[WRITES-8] accepts any task path, including empty, and does not return it", lWrites, func(ctx context.Context) {
			setup(ctx)
			c2 := e.put(ctx, "t", "", "", "c2", nil)
			Expect(e.s.PutWrites(ctx, cfg, []spec.Write{{Channel: "a", Value: "one"}}, "t1", "")).To(Succeed())
			Expect(e.s.PutWrites(ctx, c2, []spec.Write{{Channel: "a", Value: "two"}}, "t1", "~__pregel_pull|node:1|%_'\"")).To(Succeed())
			Expect(pending(ctx)).To(equalTyped([]spec.PendingWrite{pw("t1", "a", "one")}))
			Expect(e.get(ctx, "t", "", "c2").PendingWrites).To(equalTyped([]spec.PendingWrite{pw("t1", "a", "two")}))
		})

		check("[WRITES-9] orders pending writes by task ID byte-wise, then index", lWrites, func(ctx context.Context) {
			setup(ctx)
			tasks := []string{"b", "ä", "10", "B", "a", "9", spec.NullTaskID}
			for _, task := range tasks {
				e.writes(ctx, cfg, task, spec.Write{Channel: "x", Value: task}, spec.Write{Channel: spec.ScheduledChannel, Value: task})
			}
			var want, inserted []spec.PendingWrite
			for _, task := range []string{spec.NullTaskID, "10", "9", "B", "a", "b", "ä"} {
				want = append(want, pw(task, spec.ScheduledChannel, task), pw(task, "x", task))
			}
			for _, task := range tasks {
				inserted = append(inserted, pw(task, "x", task), pw(task, spec.ScheduledChannel, task))
			}
			got := pending(ctx)
			if !same(got, want) && same(got, inserted) {
				differ("pending writes come back in insertion order (LangGraph's in-memory, SQLite and MongoDB savers)")
			}
			Expect(got).To(equalTyped(want))
			Expect(e.listFirst(ctx, spec.ListOptions{ThreadID: "t"}).PendingWrites).To(equalTyped(want))
		})

		check("[WRITES-10] attaches writes to one checkpoint only; a child starts with none", lWrites, func(ctx context.Context) {
			setup(ctx)
			e.writes(ctx, cfg, "task", spec.Write{Channel: "ch", Value: "v"})
			e.put(ctx, "t", "", "c1", "c2", nil)
			e.put(ctx, "t", "", "", "c0", nil)
			Expect(e.get(ctx, "t", "", "c2").PendingWrites).To(BeEmpty())
			Expect(e.get(ctx, "t", "", "c0").PendingWrites).To(BeEmpty())
			Expect(e.get(ctx, "t", "", "c1").PendingWrites).To(HaveLen(1))
			e.put(ctx, "other", "", "", "c1", nil)
			Expect(e.get(ctx, "other", "", "c1").PendingWrites).To(BeEmpty())
		})

		check("[WRITES-11] accepts an empty write slice and stores nothing", lWrites, func(ctx context.Context) {
			setup(ctx)
			Expect(e.s.PutWrites(ctx, cfg, nil, "task", taskPath)).To(Succeed())
			Expect(e.s.PutWrites(ctx, cfg, []spec.Write{}, "task", taskPath)).To(Succeed())
			pws := pending(ctx)
			Expect(pws).NotTo(BeNil())
			Expect(pws).To(BeEmpty())
		})

		check("[WRITES-13] returns the regular writes of one task in index order", lWrites, func(ctx context.Context) {
			setup(ctx)
			e.writes(ctx, cfg, "task",
				spec.Write{Channel: "z", Value: "1"}, spec.Write{Channel: spec.ErrorChannel, Value: "e"},
				spec.Write{Channel: "a", Value: "2"}, spec.Write{Channel: "z", Value: "3"}, spec.Write{Channel: "m", Value: "4"})
			e.writes(ctx, cfg, spec.NullTaskID, spec.Write{Channel: "log", Value: "first"}, spec.Write{Channel: "log", Value: "second"})
			regular := func(pws []spec.PendingWrite, task string) []spec.PendingWrite {
				out := []spec.PendingWrite{}
				for _, w := range pws {
					if w.TaskID == task && !spec.IsSpecialChannel(w.Channel) {
						out = append(out, w)
					}
				}
				return out
			}
			got := e.readBack(ctx, "t", "", "c1").PendingWrites // GetTuple and List, which must agree
			Expect(regular(got, "task")).To(equalTyped([]spec.PendingWrite{pw("task", "z", "1"), pw("task", "a", "2"), pw("task", "z", "3"), pw("task", "m", "4")}))
			Expect(regular(got, spec.NullTaskID)).To(equalTyped([]spec.PendingWrite{pw(spec.NullTaskID, "log", "first"), pw(spec.NullTaskID, "log", "second")}))
		})
	})
}
