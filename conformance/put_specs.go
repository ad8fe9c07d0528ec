package conformance

import (
	"context"
	"fmt"
	"slices"
	"time"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// snapshotBehaviour names the whole-snapshot design (see WholeSnapshots).
const snapshotBehaviour = "the checkpoint reads back the ChannelValues it was put with (whole snapshots, as LangGraph's SQLite and MongoDB savers store them)"

// putSpecs covers identity (ID-*) and Put (PUT-*).
func putSpecs(e *env) {
	g.Describe("Put and identity", func() {
		check("[PUT-1] returns (cfg.ThreadID, cfg.Namespace, cp.ID) and stores the checkpoint under it", lPut, func(ctx context.Context) {
			cfg := spec.Config{ThreadID: "t1", Namespace: "child:1", CheckpointID: "parent-id"}
			out := e.putCP(ctx, cfg, cpOf("cp-7", nil, nil), nil, nil)
			Expect(out).To(Equal(spec.Config{ThreadID: "t1", Namespace: "child:1", CheckpointID: "cp-7"}))
			Expect(e.get(ctx, "t1", "child:1", "cp-7").Config).To(Equal(out))
		})

		check("[ID-3] stores exactly cp.ID and invents no other ID", lPut, func(ctx context.Context) {
			e.putCP(ctx, spec.Config{ThreadID: "t1", Namespace: "child:1", CheckpointID: "parent-id"}, cpOf("cp-7", nil, nil), nil, nil)
			Expect(e.get(ctx, "t1", "child:1", "cp-7").Checkpoint.ID).To(Equal("cp-7"))
			Expect(e.get(ctx, "t1", "child:1", "").Config.CheckpointID).To(Equal("cp-7"))
			e.expectMissing(ctx, "t1", "child:1", "parent-id")
			Expect(idsOf(e.list(ctx, spec.ListOptions{ThreadID: "t1", Namespace: "child:1"}))).To(Equal([]string{"cp-7"}))
		})

		check("[ID-2] keeps adversarial thread IDs, namespaces and checkpoint IDs byte for byte", lPut, func(ctx context.Context) {
			id := "id|1:%_'\"\\ ü\t"
			for _, th := range oddThreads {
				for _, ns := range oddNS {
					out := e.put(ctx, th, ns, "p|%_", id, md("th", th, "ns", ns))
					Expect(out).To(Equal(spec.Config{ThreadID: th, Namespace: ns, CheckpointID: id}))
				}
			}
			for _, th := range oddThreads {
				var want []string
				for _, ns := range oddNS {
					t := e.get(ctx, th, ns, id)
					Expect(t.Config).To(Equal(spec.Config{ThreadID: th, Namespace: ns, CheckpointID: id}))
					Expect(t.Metadata).To(HaveKeyWithValue("th", th))
					Expect(t.Metadata).To(HaveKeyWithValue("ns", ns))
					Expect(t.Parent).To(Equal(&spec.Config{ThreadID: th, Namespace: ns, CheckpointID: "p|%_"}))
					want = append(want, keyString(t.Config))
				}
				got := e.list(ctx, spec.ListOptions{ThreadID: th, AllNamespaces: true})
				Expect(sortedKeys(got)).To(ConsistOf(want), "thread %q: wildcard-like characters must match literally", th)
			}
			// "%" and "_" are LIKE wildcards; they must not match other IDs,
			// and no ID matches by prefix.
			for _, th := range []string{"a_c", "abc", "a", "a_", "ab"} {
				e.put(ctx, th, "s", "", "x", nil)
				e.put(ctx, th, "s:1", "", "x", nil)
			}
			for _, th := range []string{"a_c", "a", "a_"} {
				Expect(sortedKeys(e.list(ctx, spec.ListOptions{ThreadID: th, AllNamespaces: true}))).To(Equal([]string{keyOf(th, "s", "x"), keyOf(th, "s:1", "x")}), "thread %q", th)
			}
			e.expectMissing(ctx, "a%", "", "")
			e.expectMissing(ctx, "abc", "", "_")
		})

		check("[ID-1] treats the same checkpoint ID in two threads and two namespaces as four checkpoints", lPut, func(ctx context.Context) {
			keys := [][2]string{{"ta", ""}, {"ta", "sub:1"}, {"tb", ""}, {"tb", "sub:1"}}
			for i, k := range keys {
				e.putCP(ctx, spec.Config{ThreadID: k[0], Namespace: k[1]}, cpOf("same", map[string]any{"c": int64(i)}, spec.Versions{"c": "1"}), md("i", i), spec.Versions{"c": "1"})
			}
			for i, k := range keys {
				t := e.get(ctx, k[0], k[1], "same")
				expectSame(t.Checkpoint.ChannelValues, map[string]any{"c": int64(i)}, "values of "+k[0]+"/"+k[1])
				expectSame(t.Metadata["i"], int64(i), "metadata of "+k[0]+"/"+k[1])
			}
			for _, th := range []string{"ta", "tb"} {
				Expect(e.list(ctx, spec.ListOptions{ThreadID: th, AllNamespaces: true})).To(HaveLen(2), "thread %s", th)
			}
		})

		check("[GET-2] takes latest as the greatest ID, not the last inserted nor the end of the parent chain", lGet, func(ctx context.Context) {
			e.put(ctx, "t", "", "", "b", nil)
			e.put(ctx, "t", "", "b", "c", nil)
			e.put(ctx, "t", "", "c", "a", nil) // child of c, but smaller
			Expect(e.get(ctx, "t", "", "").Config.CheckpointID).To(Equal("c"))
		})

		check("[ID-4] compares IDs byte-wise: no collation, no case folding, no timestamps", lPut, func(ctx context.Context) {
			// Put in byte-wise ascending order with timestamps going back in
			// time, so neither insertion order nor TS gives the right answer.
			ids := []string{"B", "a", "z", "é"}
			for i, id := range ids {
				cp := cpOf(id, nil, nil)
				cp.TS = fixtureEpoch.Add(-time.Duration(i) * time.Hour).Format(time.RFC3339Nano)
				e.putCP(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
			}
			got := []string{e.get(ctx, "t", "", "").Config.CheckpointID}
			got = append(got, idsOf(e.list(ctx, spec.ListOptions{ThreadID: "t"}))...)
			want := []string{"é", "é", "z", "a", "B"}
			collated := []string{"z", "z", "é", "B", "a"} // a < B < é < z
			switch {
			case slices.Equal(got, want):
			case slices.Equal(got, collated):
				differ("IDs ordered by a collation (LangGraph.js's MemorySaver uses localeCompare; PostgreSQL savers the database's collation)")
			default:
				g.Fail(fmt.Sprintf("latest, then List order: got %q, want %q", got, want))
			}
		})

		check("[PUT-2] stores a non-empty cfg.CheckpointID as the parent, in the same thread and namespace", lPut, func(ctx context.Context) {
			e.put(ctx, "t", "ns:1", "", "c1", nil)
			e.put(ctx, "t", "ns:1", "c1", "c2", nil)
			Expect(e.get(ctx, "t", "ns:1", "c2").Parent).To(Equal(&spec.Config{ThreadID: "t", Namespace: "ns:1", CheckpointID: "c1"}))
		})

		check("[PUT-3] stores a checkpoint without a parent when cfg.CheckpointID is empty", lPut, func(ctx context.Context) {
			e.put(ctx, "t", "", "", "c1", nil)
			Expect(e.get(ctx, "t", "", "c1").Parent).To(BeNil())
		})

		check("[PUT-4] stores the value of every channel in newVersions, and a child reads its unchanged channels", lPut, func(ctx context.Context) {
			e.putValues(ctx, "t", "", "", "c1", map[string]any{"a": "v1", "b": "v2"}, spec.Versions{"a": "1", "b": "1"})
			expectSame(e.get(ctx, "t", "", "c1").Checkpoint.ChannelValues, map[string]any{"a": "v1", "b": "v2"}, "c1 values")
			// Only a is new; b keeps version 1 and its value, as an engine passes it.
			cp2 := cpOf("c2", map[string]any{"a": "v1-updated", "b": "v2"}, spec.Versions{"a": "2", "b": "1"})
			e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, cp2, nil, spec.Versions{"a": "2"})
			expectSame(e.get(ctx, "t", "", "c2").Checkpoint.ChannelValues, map[string]any{"a": "v1-updated", "b": "v2"}, "c2 values")
		})

		check("[PUT-5] reads a channel that is not in newVersions from its earlier version, not from ChannelValues", lPut, func(ctx context.Context) {
			e.putValues(ctx, "t", "", "", "c1", map[string]any{"a": "v1", "b": "v2"}, spec.Versions{"a": "1", "b": "1"})
			// b is not in newVersions: its (wrong) value here must be ignored.
			cp2 := cpOf("c2", map[string]any{"a": "v1-updated", "b": "WRONG"}, spec.Versions{"a": "2", "b": "1"})
			e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, cp2, nil, spec.Versions{"a": "2"})
			got := e.get(ctx, "t", "", "c2").Checkpoint.ChannelValues
			if same(got, map[string]any{"a": "v1-updated", "b": "WRONG"}) {
				differ(snapshotBehaviour)
			}
			expectSame(got, map[string]any{"a": "v1-updated", "b": "v2"}, "c2 values")
		})

		check("[PUT-6] returns exactly the versioned channels that have a stored value", lPut, func(ctx context.Context) {
			cp := cpOf("c1", map[string]any{"a": int64(1), "extra": "not versioned"}, spec.Versions{"a": "1", "ghost": "7"})
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cp, nil, spec.Versions{"a": "1"})
			// A channel dropped from ChannelVersions is absent, though its value is stored.
			e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, cpOf("c2", map[string]any{"a": int64(1)}, spec.Versions{"b": "1"}), nil, nil)
			got := []any{e.get(ctx, "t", "", "c1").Checkpoint.ChannelValues, e.get(ctx, "t", "", "c2").Checkpoint.ChannelValues}
			if same(got, []any{map[string]any{"a": int64(1), "extra": "not versioned"}, map[string]any{"a": int64(1)}}) {
				differ(snapshotBehaviour)
			}
			expectSame(got, []any{map[string]any{"a": int64(1)}, map[string]any{}}, "values of c1 and c2")
		})

		check("[PUT-7] stores 'no value' for a channel in newVersions that has no value", lPut, func(ctx context.Context) {
			e.putValues(ctx, "t", "", "", "c1", map[string]any{"a": "x", "c": "y"}, spec.Versions{"a": "1", "c": "1"})
			cp2 := cpOf("c2", map[string]any{"a": "x"}, spec.Versions{"a": "1", "c": "2"})
			e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, cp2, nil, spec.Versions{"c": "2"})
			expectSame(e.get(ctx, "t", "", "c2").Checkpoint.ChannelValues, map[string]any{"a": "x"}, "c2 values (c cleared)")
			expectSame(e.get(ctx, "t", "", "c1").Checkpoint.ChannelValues, map[string]any{"a": "x", "c": "y"}, "c1 values")
		})

		check("[PUT-8] keeps a nil channel value as a present key", lPut, func(ctx context.Context) {
			e.putValues(ctx, "t", "", "", "c1", map[string]any{"n": nil, "s": "x"}, spec.Versions{"n": "1", "s": "1"})
			vals := e.get(ctx, "t", "", "c1").Checkpoint.ChannelValues
			Expect(vals).To(HaveKey("n"))
			Expect(vals["n"]).To(BeNil())
			Expect(vals).To(HaveLen(2))
		})

		check("[PUT-9] never changes what an earlier checkpoint reads", lPut, func(ctx context.Context) {
			for i, id := range []string{"c1", "c2", "c3"} {
				parent := []string{"", "c1", "c2"}[i]
				ver := spec.Version(fmt.Sprint(i + 1))
				cp := cpOf(id, map[string]any{"a": []string{"old", "new", "newer"}[i]}, spec.Versions{"a": ver})
				cp.UpdatedChannels = []string{"a"} // as an engine sets it
				e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: parent}, cp, nil, spec.Versions{"a": ver})
			}
			for id, want := range inOrder(map[string]string{"c1": "old", "c2": "new", "c3": "newer"}) {
				expectSame(e.get(ctx, "t", "", id).Checkpoint.ChannelValues, map[string]any{"a": want}, id)
			}
		})

		check("[PUT-10] returns V, TS, ChannelVersions and VersionsSeen as given", lPut, func(ctx context.Context) {
			cp := spec.Checkpoint{
				V: 4, ID: "c1", TS: "2026-11-22T00:00:00.000001Z",
				ChannelVersions: spec.Versions{"a": "00000000000000000000000000000002.0123456789012345", "b": "1"},
				VersionsSeen:    map[string]spec.Versions{"node": {"a": "1"}, "__input__": {}, "n2": {"a": "2", "b": "1"}},
			}
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
			got := e.get(ctx, "t", "", "c1").Checkpoint
			Expect(got.V).To(Equal(4))
			Expect(got.TS).To(Equal(cp.TS))
			// Every format version comes back as given, not only today's.
			for _, v := range []int{1, 2, 3, 5, 1000} {
				vcp := cpOf(fmt.Sprintf("v%04d", v), nil, nil)
				vcp.V = v
				e.putCP(ctx, spec.Config{ThreadID: "t"}, vcp, nil, nil)
				Expect(e.get(ctx, "t", "", vcp.ID).Checkpoint.V).To(Equal(v), "V of checkpoint %s", vcp.ID)
				Expect(e.listFirst(ctx, spec.ListOptions{ThreadID: "t", CheckpointID: vcp.ID}).Checkpoint.V).To(Equal(v), "V of listed checkpoint %s", vcp.ID)
			}
			Expect(got.ChannelVersions).To(Equal(cp.ChannelVersions))
			Expect(got.VersionsSeen).To(Equal(cp.VersionsSeen))
			// Timestamps come back as the same string, trailing zeros kept.
			for i, ts := range []string{"2026-11-22T00:00:00.123450Z", "2026-11-22T00:00:00Z", "not a time"} {
				cp.ID, cp.TS = fmt.Sprintf("ts%d", i), ts
				e.putCP(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
				Expect(e.get(ctx, "t", "", cp.ID).Checkpoint.TS).To(Equal(ts))
			}
		})

		check("[PUT-14] returns UpdatedChannels as given, nil staying nil", lPut, func(ctx context.Context) {
			cp := cpOf("c1", nil, nil)
			cp.UpdatedChannels = []string{"b", "a"}
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cpOf("c2", nil, nil), nil, nil)
			got := [][]string{e.get(ctx, "t", "", "c1").Checkpoint.UpdatedChannels, e.get(ctx, "t", "", "c2").Checkpoint.UpdatedChannels}
			if got[0] == nil && got[1] == nil {
				differ("UpdatedChannels is not stored (LangGraph.js's savers)")
			}
			Expect(got[0]).To(Equal([]string{"b", "a"}), "a non-nil list keeps its elements and order")
			Expect(got[1]).To(BeNil(), "nil UpdatedChannels means unknown and must stay nil")
		})

		check("[PUT-15] never returns a non-empty UpdatedChannels shortened", lPut, func(ctx context.Context) {
			cp := cpOf("c1", nil, nil)
			cp.UpdatedChannels = []string{"draft", "branch:to:review", "log"}
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
			// Read back through GetTuple and List, which must agree.
			if got := e.readBack(ctx, "t", "", "c1").Checkpoint.UpdatedChannels; len(got) > 0 {
				// nil or empty reads as "unknown": the engine then considers every node.
				Expect(got).To(ContainElements("draft", "branch:to:review", "log"), "a non-empty list keeps every channel")
			}
		})

		check("[PUT-11] replaces checkpoint, metadata and parent on re-put, without duplicating it, and keeps its writes", lPut, func(ctx context.Context) {
			cfg := e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: "p1"}, cpOf("c1", map[string]any{"a": "first"}, spec.Versions{"a": "1"}), md("v", 1), spec.Versions{"a": "1"})
			e.writes(ctx, cfg, "task", spec.Write{Channel: "w", Value: "kept"})
			e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: "p2"}, cpOf("c1", map[string]any{"a": "second"}, spec.Versions{"a": "2"}), md("v", 2), spec.Versions{"a": "2"})
			t := e.get(ctx, "t", "", "c1")
			expectSame(t.Checkpoint.ChannelValues, map[string]any{"a": "second"}, "values")
			Expect(t.Metadata["v"]).To(BeNumerically("==", 2), "metadata")
			if t.Parent != nil && *t.Parent == (spec.Config{ThreadID: "t", CheckpointID: "p1"}) {
				differ("a re-put keeps the checkpoint's first parent (LangGraph's PostgreSQL savers update only the checkpoint and its metadata)")
			}
			Expect(t.Parent).To(Equal(&spec.Config{ThreadID: "t", CheckpointID: "p2"}))
			Expect(t.PendingWrites).To(HaveLen(1))
			Expect(t.PendingWrites[0].Value).To(Equal("kept"))
			Expect(e.list(ctx, spec.ListOptions{ThreadID: "t"})).To(HaveLen(1))
		})

		isolationSpecs(e)

		check("[PUT-13] returns empty, non-nil maps for nil inputs", lPut, func(ctx context.Context) {
			e.putCP(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{V: 4, ID: "c1", TS: tsOf("c1")}, nil, nil)
			for _, t := range []*spec.Tuple{e.get(ctx, "t", "", "c1"), e.listFirst(ctx, spec.ListOptions{ThreadID: "t"})} {
				Expect(t.Checkpoint.ChannelValues).NotTo(BeNil())
				Expect(t.Checkpoint.ChannelValues).To(BeEmpty())
				Expect(t.Checkpoint.ChannelVersions).NotTo(BeNil())
				Expect(t.Checkpoint.VersionsSeen).NotTo(BeNil())
				Expect(t.Metadata).NotTo(BeNil())
				Expect(t.Metadata).To(BeEmpty())
			}
		})
	})
}
