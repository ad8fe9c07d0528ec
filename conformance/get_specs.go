package conformance

import (
	"context"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// getSpecs covers GetTuple (GET-*).
func getSpecs(e *env) {
	g.Describe("GetTuple", func() {
		check("[GET-1] returns exactly the requested checkpoint and never falls back to another", lGet, func(ctx context.Context) {
			e.put(ctx, "t", "", "", "1", md("step", 1))
			e.put(ctx, "t", "", "1", "2", md("step", 2))
			e.put(ctx, "t", "sub:1", "", "3", nil)
			Expect(e.get(ctx, "t", "", "1").Metadata).To(HaveKeyWithValue("step", int64(1)))
			e.expectMissing(ctx, "t", "", "15")
			e.expectMissing(ctx, "t", "", "3") // exists, but in another namespace
			e.expectMissing(ctx, "t", "", "0")
		})

		check("[GET-2] returns the latest checkpoint of the thread and namespace without an ID", lGet, func(ctx context.Context) {
			for _, id := range []string{"1f0a", "1f0c", "1f0b"} {
				e.put(ctx, "t", "", "", id, md("id", id))
			}
			t := e.get(ctx, "t", "", "")
			Expect(t.Config.CheckpointID).To(Equal("1f0c"))
			Expect(t.Metadata).To(HaveKeyWithValue("id", "1f0c"))
		})

		check("[GET-3] reports a missing thread, namespace or checkpoint with ErrNotFound and a nil tuple", lGet, func(ctx context.Context) {
			e.expectMissing(ctx, "nobody", "", "")
			e.expectMissing(ctx, "nobody", "", "x")
			e.put(ctx, "t", "", "", "x", nil)
			e.expectMissing(ctx, "t", "sub:1", "")
			e.expectMissing(ctx, "t", "sub:1", "x")
			e.expectMissing(ctx, "t", "", "y")
		})

		check("[GET-4] returns a normalised config also when the request has no checkpoint ID", lGet, func(ctx context.Context) {
			e.put(ctx, "t", "sub:1", "", "c9", nil)
			Expect(e.get(ctx, "t", "sub:1", "").Config).To(Equal(spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "c9"}))
		})

		check("[GET-5] reports the parent with the child's thread and namespace even when the parent does not exist", lGet, func(ctx context.Context) {
			e.put(ctx, "t", "sub:1", "gone", "c3", nil)
			Expect(e.get(ctx, "t", "sub:1", "c3").Parent).To(Equal(&spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "gone"}))
			Expect(e.listFirst(ctx, spec.ListOptions{ThreadID: "t", Namespace: "sub:1"}).Parent).To(Equal(&spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "gone"}))
		})

		check("[GET-6] returns non-nil pending writes when there are none", lGet, func(ctx context.Context) {
			e.put(ctx, "t", "", "", "c1", nil)
			Expect(e.get(ctx, "t", "", "c1").PendingWrites).To(And(Not(BeNil()), BeEmpty()))
			Expect(e.get(ctx, "t", "", "").PendingWrites).To(And(Not(BeNil()), BeEmpty()))
			Expect(e.listFirst(ctx, spec.ListOptions{ThreadID: "t"}).PendingWrites).To(And(Not(BeNil()), BeEmpty()))
		})

		check("[GET-7] takes latest per namespace and thread, ignoring greater IDs elsewhere", lGet, func(ctx context.Context) {
			e.put(ctx, "t", "", "", "1", nil)
			e.put(ctx, "t", "sub:1", "", "9", nil)
			e.put(ctx, "t2", "", "", "99", nil)
			Expect(e.get(ctx, "t", "", "").Config.CheckpointID).To(Equal("1"))
			Expect(e.get(ctx, "t", "sub:1", "").Config.CheckpointID).To(Equal("9"))
		})
	})
}
