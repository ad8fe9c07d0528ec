package conformance

import (
	"context"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// nsSpecs covers namespaces (NS-*).
func nsSpecs(e *env) {
	g.Describe("Namespaces", func() {
		check("[NS-1][WRITES-1] isolates checkpoints, writes and values of two namespaces sharing a checkpoint ID", lPut, func(ctx context.Context) {
			for _, ns := range []string{"", "child:1"} {
				cfg := e.putCP(ctx, spec.Config{ThreadID: "t", Namespace: ns}, cpOf("same", map[string]any{"c": "value-" + ns}, spec.Versions{"c": "1"}), md("ns", ns), spec.Versions{"c": "1"})
				e.writes(ctx, cfg, "task", spec.Write{Channel: "w", Value: "write-" + ns})
			}
			for _, ns := range []string{"", "child:1"} {
				t := e.get(ctx, "t", ns, "same")
				expectSame(t.Checkpoint.ChannelValues, map[string]any{"c": "value-" + ns}, "values in "+ns)
				Expect(t.Metadata).To(HaveKeyWithValue("ns", ns))
				Expect(t.PendingWrites).To(equalTyped([]spec.PendingWrite{pw("task", "w", "write-"+ns)}))
				Expect(e.get(ctx, "t", ns, "").Config.Namespace).To(Equal(ns))
				listed := e.list(ctx, spec.ListOptions{ThreadID: "t", Namespace: ns})
				Expect(keysOf(listed)).To(Equal([]string{keyString(spec.Config{ThreadID: "t", Namespace: ns, CheckpointID: "same"})}))
			}
			e.expectMissing(ctx, "t", "other", "same")
			e.expectMissing(ctx, "t", "other", "")
		})

		check("[NS-2] stores the same (channel, version) separately in each namespace", lPut, func(ctx context.Context) {
			e.putValues(ctx, "t", "", "", "a1", map[string]any{"c": "root"}, spec.Versions{"c": "1"})
			e.putValues(ctx, "t", "sub:1", "", "b1", map[string]any{"c": "sub"}, spec.Versions{"c": "1"})
			// Children keep c@1 with its value, as an engine passes it.
			e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: "a1"}, cpOf("a2", map[string]any{"c": "root"}, spec.Versions{"c": "1"}), nil, nil)
			e.putCP(ctx, spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "b1"}, cpOf("b2", map[string]any{"c": "sub"}, spec.Versions{"c": "1"}), nil, nil)
			for _, k := range [][3]string{{"", "a1", "root"}, {"", "a2", "root"}, {"sub:1", "b1", "sub"}, {"sub:1", "b2", "sub"}} {
				expectSame(e.get(ctx, "t", k[0], k[1]).Checkpoint.ChannelValues, map[string]any{"c": k[2]}, "values of "+k[1])
			}
			// A namespace that never stored c@1 reads no value for it.
			e.putCP(ctx, spec.Config{ThreadID: "t", Namespace: "other"}, cpOf("o1", nil, spec.Versions{"c": "1"}), nil, nil)
			expectSame(e.get(ctx, "t", "other", "o1").Checkpoint.ChannelValues, map[string]any{}, "values in a namespace that never stored c@1")
		})

		check("[NS-3] stores full subgraph namespaces verbatim", lPut, func(ctx context.Context) {
			full := "parent:1f2a|child:9b|3"
			e.put(ctx, "t", full, "", "c1", nil)
			Expect(e.get(ctx, "t", full, "").Config.Namespace).To(Equal(full))
			e.expectMissing(ctx, "t", spec.RecastNamespace(full), "")
			e.expectMissing(ctx, "t", "parent:1f2a", "")
			listed := e.list(ctx, spec.ListOptions{ThreadID: "t", Namespace: full})
			Expect(listed).To(HaveLen(1))
			Expect(listed[0].Config.Namespace).To(Equal(full))
		})

		check("[NS-4] round-trips the metadata parents map", lPut, func(ctx context.Context) {
			parents := map[string]any{"": "root-id", "parent:1f2a": "p-id", "parent:1f2a|child:9b": "c-id"}
			e.put(ctx, "t", "parent:1f2a|child:9b|grand:7", "", "c1", md("source", "loop", "step", 1, "parents", parents))
			expectSame(e.get(ctx, "t", "parent:1f2a|child:9b|grand:7", "c1").Metadata["parents"], parents, "parents")
		})
	})
}
