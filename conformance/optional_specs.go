package conformance

import (
	"context"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// retarget returns copies of ts as they should look in thread th.
func retarget(ts []*spec.Tuple, th string) []*spec.Tuple {
	out := make([]*spec.Tuple, len(ts))
	for i, t := range ts {
		c := *t
		c.Config.ThreadID = th
		if c.Parent != nil {
			p := *c.Parent
			p.ThreadID = th
			c.Parent = &p
		}
		out[i] = &c
	}
	return out
}

// withoutWrites returns copies of ts without their pending writes.
func withoutWrites(ts []*spec.Tuple) []*spec.Tuple {
	out := make([]*spec.Tuple, len(ts))
	for i, t := range ts {
		c := *t
		c.PendingWrites = []spec.PendingWrite{}
		out[i] = &c
	}
	return out
}

// copySpecs covers CopyThread (COPY-*).
func copySpecs(e *env) {
	g.Describe("CopyThread", func() {
		check("[COPY-1] copies every checkpoint of every namespace with IDs, parents, metadata and values", lCopy, func(ctx context.Context) {
			c := e.copier()
			e.threadFixture(ctx, "src")
			src := withoutWrites(e.snapshot(ctx, "src"))
			Expect(c.CopyThread(ctx, "src", "dst|%")).To(Succeed())
			if d := compareLists(withoutWrites(e.snapshot(ctx, "dst|%")), retarget(src, "dst|%")); d != "" {
				g.Fail("copy differs from source: " + d)
			}
		})

		check("[COPY-2] copies the pending writes of every checkpoint", lCopy, func(ctx context.Context) {
			c := e.copier()
			e.threadFixture(ctx, "src")
			Expect(c.CopyThread(ctx, "src", "dst")).To(Succeed())
			for _, ns := range []string{"", "sub:1"} {
				for _, id := range []string{"1", "2", "3"} {
					t, err := e.s.GetTuple(ctx, spec.Config{ThreadID: "dst", Namespace: ns, CheckpointID: id})
					if err != nil {
						continue // a checkpoint the copy lacks is COPY-1's matter
					}
					Expect(sortWrites(t.PendingWrites)).To(equalTyped(sortWrites([]spec.PendingWrite{pw("task", spec.ErrorChannel, "e"+id), pw("task", "w", id)})), "writes of %q/%s", ns, id)
				}
			}
		})

		check("[COPY-3] leaves the source unchanged", lCopy, func(ctx context.Context) {
			c := e.copier()
			e.threadFixture(ctx, "src")
			before := e.snapshot(ctx, "src")
			Expect(c.CopyThread(ctx, "src", "dst")).To(Succeed())
			if d := compareLists(e.snapshot(ctx, "src"), before); d != "" {
				g.Fail("source changed: " + d)
			}
		})

		check("[COPY-4] leaves the destination empty when the source has no checkpoints", lCopy, func(ctx context.Context) {
			c := e.copier()
			e.threadFixture(ctx, "other")
			before := e.snapshot(ctx, "other")
			err := c.CopyThread(ctx, "nobody", "dst")
			if err != nil {
				Expect(err).To(MatchError(spec.ErrNotFound))
			}
			Expect(e.list(ctx, spec.ListOptions{ThreadID: "dst", AllNamespaces: true})).To(BeEmpty())
			e.expectSnapshot(ctx, before, "other")
		})

		check("[COPY-5] makes an independent copy", lCopy, func(ctx context.Context) {
			c := e.copier()
			e.threadFixture(ctx, "src")
			Expect(c.CopyThread(ctx, "src", "dst")).To(Succeed())
			src := e.list(ctx, spec.ListOptions{ThreadID: "src", AllNamespaces: true})
			e.writes(ctx, spec.Config{ThreadID: "dst", CheckpointID: "3"}, "task2", spec.Write{Channel: "x", Value: "dst only"})
			e.putValues(ctx, "dst", "", "3", "4", map[string]any{"c": "dst only"}, spec.Versions{"c": "4"})
			if d := compareLists(e.list(ctx, spec.ListOptions{ThreadID: "src", AllNamespaces: true}), src); d != "" {
				g.Fail("writing to the copy changed the source: " + d)
			}
			dst := e.list(ctx, spec.ListOptions{ThreadID: "dst", AllNamespaces: true})
			Expect(e.s.DeleteThread(ctx, "src")).To(Succeed())
			if d := compareLists(e.list(ctx, spec.ListOptions{ThreadID: "dst", AllNamespaces: true}), dst); d != "" {
				g.Fail("deleting the source changed the copy: " + d)
			}
		})
	})
}

// runsSpecs covers DeleteForRuns (RUNS-*).
func runsSpecs(e *env) {
	g.Describe("DeleteForRuns", func() {
		check("[RUNS-1] removes the checkpoints of the given runs, with their writes, in every thread and namespace", lRuns, func(ctx context.Context) {
			d := e.runDeleter()
			e.threadFixture(ctx, "t")
			e.threadFixture(ctx, "t2")
			Expect(d.DeleteForRuns(ctx, []string{"run-1", "run-3"})).To(Succeed())
			Expect(keysOf(e.snapshot(ctx, "t", "t2"))).To(Equal([]string{keyOf("t", "", "2"), keyOf("t", "sub:1", "2"), keyOf("t2", "", "2"), keyOf("t2", "sub:1", "2")}))
			// Re-putting a removed key must not resurrect its writes.
			e.put(ctx, "t", "", "2", "3", nil)
			Expect(e.get(ctx, "t", "", "3").PendingWrites).To(BeEmpty())
		})

		check("[RUNS-2] keeps survivors readable with their values and parent, even if the parent was removed", lRuns, func(ctx context.Context) {
			d := e.runDeleter()
			e.threadFixture(ctx, "t")
			want := e.get(ctx, "t", "sub:1", "2")
			Expect(d.DeleteForRuns(ctx, []string{"run-1"})).To(Succeed())
			got := e.get(ctx, "t", "sub:1", "2")
			expectTuple(got, want)
			Expect(got.Parent).To(Equal(&spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "1"}))
			Expect(idsOf(e.list(ctx, spec.ListOptions{ThreadID: "t", Namespace: "sub:1"}))).To(Equal([]string{"3", "2"}))
		})

		check("[RUNS-3] changes nothing for an empty list or unknown runs", lRuns, func(ctx context.Context) {
			d := e.runDeleter()
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			Expect(d.DeleteForRuns(ctx, nil)).To(Succeed())
			Expect(d.DeleteForRuns(ctx, []string{})).To(Succeed())
			Expect(d.DeleteForRuns(ctx, []string{"no-such-run"})).To(Succeed())
			e.expectSnapshot(ctx, before, "t")
		})

		check("[RUNS-4] keeps checkpoints of other runs or none, matching run IDs exactly", lRuns, func(ctx context.Context) {
			d := e.runDeleter()
			e.put(ctx, "t", "", "", "1", md("run_id", "run%"))
			e.put(ctx, "t", "", "", "2", md("run_id", "run_x"))
			e.put(ctx, "t", "", "", "3", nil)
			e.put(ctx, "t", "", "", "4", md("run_id", "RUN"))
			e.put(ctx, "t", "", "", "5", md("run_id", "run"))
			Expect(d.DeleteForRuns(ctx, []string{"run%", "run"})).To(Succeed())
			Expect(idsOf(e.list(ctx, spec.ListOptions{ThreadID: "t"}))).To(Equal([]string{"4", "3", "2"}))
		})
	})
}

// pruneSpecs covers Prune (PRUNE-*).
func pruneSpecs(e *env) {
	g.Describe("Prune", func() {
		check("[PRUNE-1] keeps only the latest checkpoint of each namespace of each listed thread", lPrune, func(ctx context.Context) {
			p := e.pruner()
			e.threadFixture(ctx, "t")
			e.threadFixture(ctx, "t2")
			e.put(ctx, "t", "sub:1", "", "0", nil) // out of order: not the latest
			Expect(p.Prune(ctx, []string{"t", "t2"}, spec.KeepLatest)).To(Succeed())
			Expect(keysOf(e.snapshot(ctx, "t", "t2"))).To(Equal([]string{keyOf("t", "", "3"), keyOf("t", "sub:1", "3"), keyOf("t2", "", "3"), keyOf("t2", "sub:1", "3")}))
		})

		check("[PRUNE-2] keeps the pending writes and every value the kept checkpoint reads", lPrune, func(ctx context.Context) {
			p := e.pruner()
			e.threadFixture(ctx, "t")
			want := e.get(ctx, "t", "sub:1", "3")
			Expect(want.Checkpoint.ChannelValues).To(HaveKey("k")) // stored by checkpoint 1
			Expect(p.Prune(ctx, []string{"t"}, spec.KeepLatest)).To(Succeed())
			expectTuple(e.get(ctx, "t", "sub:1", "3"), want)
			// Pruned keys come back without their old writes.
			e.put(ctx, "t", "sub:1", "", "2", nil)
			Expect(e.get(ctx, "t", "sub:1", "2").PendingWrites).To(BeEmpty())
		})

		check("[PRUNE-3] removes listed threads entirely with DeleteAll", lPrune, func(ctx context.Context) {
			p := e.pruner()
			e.threadFixture(ctx, "t")
			Expect(p.Prune(ctx, []string{"t"}, spec.DeleteAll)).To(Succeed())
			Expect(e.snapshot(ctx, "t")).To(BeEmpty())
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cpOf("3", nil, spec.Versions{"c": "3", "k": "1"}), nil, nil)
			t := e.get(ctx, "t", "", "3")
			Expect(t.PendingWrites).To(BeEmpty())
			expectSame(t.Checkpoint.ChannelValues, map[string]any{}, "values after DeleteAll")
		})

		check("[PRUNE-4] leaves threads that are not listed untouched", lPrune, func(ctx context.Context) {
			p := e.pruner()
			e.threadFixture(ctx, "t")
			e.threadFixture(ctx, "t2")
			before := e.snapshot(ctx, "t", "t2")
			Expect(p.Prune(ctx, []string{"t"}, spec.KeepLatest)).To(Succeed())
			Expect(p.Prune(ctx, []string{"t"}, spec.DeleteAll)).To(Succeed())
			e.expectSnapshot(ctx, withoutThread(before, "t"), "t", "t2")
		})

		check("[PRUNE-5] changes nothing for an empty list or missing threads", lPrune, func(ctx context.Context) {
			p := e.pruner()
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			for _, s := range []spec.PruneStrategy{spec.KeepLatest, spec.DeleteAll} {
				Expect(p.Prune(ctx, nil, s)).To(Succeed())
				Expect(p.Prune(ctx, []string{"nobody", "t%"}, s)).To(Succeed())
			}
			e.expectSnapshot(ctx, before, "t")
		})
	})
}

// versionSpecs covers VersionGenerator (VERSION-*).
func versionSpecs(e *env) {
	g.Describe("NextVersion", func() {
		check("[VERSION-1] returns a version strictly greater than the current one", lVersions, func(ctx context.Context) {
			vg := e.versioner()
			v := spec.Version("")
			for range 50 {
				next := vg.NextVersion(v)
				Expect(spec.CompareVersions(next, v)).To(Equal(1), "NextVersion(%q) = %q", v, next)
				v = next
			}
			for _, cur := range []spec.Version{"1", "9", "00000000000000000000000000000009.5", "41.abc"} {
				Expect(spec.CompareVersions(vg.NextVersion(cur), cur)).To(Equal(1), "NextVersion(%q)", cur)
			}
		})

		check("[VERSION-2] mints versions on two forks that never make one branch read the other's value", lVersions, func(ctx context.Context) {
			vg := e.versioner()
			v1 := vg.NextVersion("")
			e.putValues(ctx, "t", "", "", "1", map[string]any{"a": "base"}, spec.Versions{"a": v1})
			va, vb := vg.NextVersion(v1), vg.NextVersion(v1)
			e.putValues(ctx, "t", "", "1", "2a", map[string]any{"a": "fork A"}, spec.Versions{"a": va})
			e.putValues(ctx, "t", "", "1", "2b", map[string]any{"a": "fork B"}, spec.Versions{"a": vb})
			expectSame(e.get(ctx, "t", "", "2a").Checkpoint.ChannelValues, map[string]any{"a": "fork A"}, "fork A")
			expectSame(e.get(ctx, "t", "", "2b").Checkpoint.ChannelValues, map[string]any{"a": "fork B"}, "fork B")
			expectSame(e.get(ctx, "t", "", "1").Checkpoint.ChannelValues, map[string]any{"a": "base"}, "base")
		})
	})
}
