package conformance

import (
	"context"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// threadFixture stores, in thread th, a chain of checkpoints in the root
// namespace and in "sub:1", with values and pending writes, and returns the
// stored configs.
func (e *env) threadFixture(ctx context.Context, th string) []spec.Config {
	g.GinkgoHelper()
	var out []spec.Config
	for _, ns := range []string{"", "sub:1"} {
		parent := ""
		for i, id := range []string{"1", "2", "3"} {
			ver := spec.Version(id)
			// k is stored by the first checkpoint only and read by all.
			nv := spec.Versions{"c": ver}
			if i == 0 {
				nv["k"] = "1"
			}
			cfg := e.putCP(ctx, spec.Config{ThreadID: th, Namespace: ns, CheckpointID: parent},
				cpOf(id, map[string]any{"c": th + "/" + ns + "/" + id, "k": "kept"}, spec.Versions{"c": ver, "k": "1"}),
				md("step", i, "run_id", "run-"+id), nv)
			e.writes(ctx, cfg, "task", spec.Write{Channel: "w", Value: id}, spec.Write{Channel: spec.ErrorChannel, Value: "e" + id})
			out = append(out, cfg)
			parent = id
		}
	}
	return out
}

// snapshot returns every tuple of the given threads, one thread after
// the other in the order given, each in List order with ties sorted. It
// reads thread by thread, so it needs no List across threads.
func (e *env) snapshot(ctx context.Context, threads ...string) []*spec.Tuple {
	g.GinkgoHelper()
	var out []*spec.Tuple
	for _, th := range threads {
		out = append(out, sortTies(e.list(ctx, spec.ListOptions{ThreadID: th, AllNamespaces: true}))...)
	}
	return out
}

// expectSnapshot asserts that the given threads hold exactly want.
func (e *env) expectSnapshot(ctx context.Context, want []*spec.Tuple, threads ...string) {
	g.GinkgoHelper()
	if d := compareLists(e.snapshot(ctx, threads...), want); d != "" {
		g.Fail("stored checkpoints changed: " + d)
	}
}

// withoutThread returns the tuples not in thread th.
func withoutThread(ts []*spec.Tuple, th string) []*spec.Tuple {
	var out []*spec.Tuple
	for _, t := range ts {
		if t.Config.ThreadID != th {
			out = append(out, t)
		}
	}
	return out
}

// deleteSpecs covers DeleteThread (DELETE-*).
func deleteSpecs(e *env) {
	g.Describe("DeleteThread", func() {
		check("[DELETE-1] removes every checkpoint of the thread in every namespace", lDelete, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			Expect(e.s.DeleteThread(ctx, "t")).To(Succeed())
			for _, ns := range []string{"", "sub:1"} {
				e.expectMissing(ctx, "t", ns, "")
				e.expectMissing(ctx, "t", ns, "1")
			}
			Expect(e.list(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true})).To(BeEmpty())
		})

		check("[DELETE-2] removes pending writes, so re-putting a deleted key shows none", lDelete, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			Expect(e.s.DeleteThread(ctx, "t")).To(Succeed())
			e.put(ctx, "t", "", "", "1", nil)
			e.put(ctx, "t", "sub:1", "", "3", nil)
			Expect(e.get(ctx, "t", "", "1").PendingWrites).To(BeEmpty())
			Expect(e.get(ctx, "t", "sub:1", "3").PendingWrites).To(BeEmpty())
		})

		check("[DELETE-3] removes stored values, so a re-put checkpoint referencing old versions reads none", lDelete, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			Expect(e.s.DeleteThread(ctx, "t")).To(Succeed())
			for _, ns := range []string{"", "sub:1"} {
				e.putCP(ctx, spec.Config{ThreadID: "t", Namespace: ns}, cpOf("2", nil, spec.Versions{"c": "2", "k": "1"}), nil, nil)
				expectSame(e.get(ctx, "t", ns, "2").Checkpoint.ChannelValues, map[string]any{}, "values after delete in "+ns)
			}
		})

		check("[DELETE-4] leaves other threads untouched, including the same IDs and namespaces", lDelete, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			e.threadFixture(ctx, "t2")
			e.threadFixture(ctx, "t-")
			all := []string{"t", "t2", "t-"}
			before := e.snapshot(ctx, all...)
			Expect(e.s.DeleteThread(ctx, "t")).To(Succeed())
			e.expectSnapshot(ctx, withoutThread(before, "t"), all...)
		})

		check("[DELETE-5] accepts deleting a missing thread", lDelete, func(ctx context.Context) {
			// On empty storage first: nothing has been written yet.
			Expect(e.s.DeleteThread(ctx, "nobody")).To(Succeed(), "on an empty saver")
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			Expect(e.s.DeleteThread(ctx, "nobody")).To(Succeed())
			Expect(e.s.DeleteThread(ctx, "t|%")).To(Succeed())
			e.expectSnapshot(ctx, before, "t")
		})
	})
}
