package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Maintenance of threads with delta channels (DELTA-11 to DELTA-13). Their
// specs carry the label of the maintenance capability they check, and read
// histories through spec.ReadDeltaHistory, so they run whether or not the
// saver is a spec.DeltaHistoryReader; they compare histories before and
// after the call (or between source and copy), so a saver is judged on
// what the maintenance does to the chain, not on its walk.

func init() {
	// A copy, prune or run deletion that loses checkpoints or writes of
	// threads without delta channels is those rules' matter.
	prerequisites["DELTA-11"] = []string{"COPY-1", "COPY-2"}
	prerequisites["DELTA-12"] = []string{"PRUNE-1", "PRUNE-2"}
	prerequisites["DELTA-13"] = []string{"RUNS-1", "RUNS-2", "RUNS-4"}
}

// deltaChannelsOfFixture are the channels of deltaThreadFixture.
var deltaChannelsOfFixture = []string{"m", "n"}

// readHistory reads the delta history of chs at cfg through
// spec.ReadDeltaHistory, walking GetTuple itself when the saver's reader
// answers errors.ErrUnsupported (a bridged saver without the method), and
// fails the spec on error.
func (e *env) readHistory(ctx context.Context, cfg spec.Config, chs []string) map[string]spec.DeltaHistory {
	g.GinkgoHelper()
	h, err := spec.ReadDeltaHistory(ctx, e.s, cfg, chs)
	if errors.Is(err, errors.ErrUnsupported) {
		h, err = spec.WalkDeltaHistory(ctx, e.s, cfg, chs)
	}
	Expect(err).NotTo(HaveOccurred(), "delta history of %s, channels %q", showConfig(cfg), chs)
	return h
}

// histories reads, for every checkpoint of ts, the history of the delta
// channels named by its metadata (all of chs when chs is not nil), keyed
// by checkpoint key; the config's thread is replaced by thread.
func (e *env) histories(ctx context.Context, ts []*spec.Tuple, thread string, chs []string) map[string]map[string]spec.DeltaHistory {
	g.GinkgoHelper()
	out := map[string]map[string]spec.DeltaHistory{}
	for _, t := range ts {
		want := chs
		if want == nil {
			if want = spec.DeltaChannels(t.Metadata); len(want) == 0 {
				continue
			}
		}
		cfg := t.Config
		cfg.ThreadID = thread
		out[keyOf("", cfg.Namespace, cfg.CheckpointID)] = e.readHistory(ctx, cfg, want)
	}
	return out
}

// deltaThreadFixture stores, in thread th, a root chain of four
// checkpoints (01, whose parent is rootParent, to 04) with two snapshots of
// m (at 01 and 03) and a plain value of n (at 01), and a subgraph chain of
// two, every checkpoint naming m and n as delta channels in its metadata
// (with the run ID run returns for "ns/id", when run is not nil) and
// every write of one task.
func (e *env) deltaThreadFixture(ctx context.Context, th, rootParent string, run func(key string) string) {
	g.GinkgoHelper()
	md := func(ns, id string) spec.Metadata {
		m := counters(deltaChannelsOfFixture...)
		if run != nil {
			m["run_id"] = run(ns + "/" + id)
		}
		return m
	}
	e.deltaFixture(ctx, th,
		dcp{id: "01", parent: rootParent, values: map[string]any{"m": snap([]any{"m0"}), "n": []any{"n0"}}, md: md("", "01"), calls: []dcall{wr("task-01", "m", "a")}},
		dcp{id: "02", parent: "01", md: md("", "02"), calls: []dcall{wr("task-02", "m", "b")}},
		dcp{id: "03", parent: "02", values: map[string]any{"m": snap([]any{"m0", "a", "b"})}, md: md("", "03"), calls: []dcall{wr("task-03", "m", "c"), wr("task-03n", "n", "nc")}},
		dcp{id: "04", parent: "03", md: md("", "04"), calls: []dcall{wr("task-04", "m", "d")}},
		dcp{ns: "sub:1", id: "01", values: map[string]any{"m": snap([]any{"s0"})}, md: md("sub:1", "01"), calls: []dcall{wr("task-s1", "m", "sa")}},
		dcp{ns: "sub:1", id: "02", parent: "01", md: md("sub:1", "02"), calls: []dcall{wr("task-s2", "m", "sb")}},
	)
}

// expectSameHistories fails the spec unless got holds want's histories,
// checkpoint by checkpoint.
func expectSameHistories(got, want map[string]map[string]spec.DeltaHistory, what string) {
	g.GinkgoHelper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if d := diffOf(got[k], want[k]); d != "" {
			g.Fail(fmt.Sprintf("%s: the delta history of %s changed (-before +after):\n%s", what, k, d))
		}
	}
}

// deltaMaintSpecs covers CopyThread, Prune and DeleteForRuns on threads
// with delta channels.
func deltaMaintSpecs(e *env) {
	g.Describe("Maintenance of delta channels", func() {
		check("[DELTA-11] copies the whole chain: every checkpoint of the copy has the source's delta history", withDelta(lCopy), func(ctx context.Context) {
			c := e.copier()
			e.deltaThreadFixture(ctx, "src", "", nil)
			src := e.snapshot(ctx, "src")
			want := e.histories(ctx, src, "src", deltaChannelsOfFixture)
			Expect(c.CopyThread(ctx, "src", "dst")).To(Succeed())
			expectSameHistories(e.histories(ctx, src, "dst", deltaChannelsOfFixture), want, "the copy")
		})

		check("[DELTA-12] keeps, with KeepLatest, the ancestors the kept checkpoint's delta channels need, and nothing older", withDelta(lPrune), func(ctx context.Context) {
			p := e.pruner()
			// 00, the parent of 01, is older than every seed the latest
			// checkpoints need.
			e.deltaFixture(ctx, "t", dcp{id: "00", values: map[string]any{"m": snap([]any{"old"}), "n": []any{"old"}}, md: counters(deltaChannelsOfFixture...), calls: []dcall{wr("task-00", "m", "old")}})
			e.deltaThreadFixture(ctx, "t", "00", nil)
			before := e.snapshot(ctx, "t")
			heads := []*spec.Tuple{e.get(ctx, "t", "", "04"), e.get(ctx, "t", "sub:1", "02")}
			want := e.histories(ctx, heads, "t", nil)
			if err := p.Prune(ctx, []string{"t"}, spec.KeepLatest); err != nil {
				// Refusing is allowed, if nothing changed.
				e.expectSnapshot(ctx, before, "t")
				return
			}
			expectSameHistories(e.histories(ctx, heads, "t", nil), want, "after Prune")
			Expect(sortedKeys(e.snapshot(ctx, "t"))).To(Equal(slices.Sorted(slices.Values([]string{
				keyOf("t", "", "04"), keyOf("t", "", "03"), keyOf("t", "", "02"), keyOf("t", "", "01"),
				keyOf("t", "sub:1", "02"), keyOf("t", "sub:1", "01"),
			}))), "checkpoints kept: the latest ones and their delta chains, nothing older")
		})

		check("[DELTA-13] leaves every surviving checkpoint's delta chain whole when deleting runs", withDelta(lRuns), func(ctx context.Context) {
			d := e.runDeleter()
			// The snapshots and the first steps belong to run-1, the rest
			// to run-2: deleting run-1 must keep what run-2's checkpoints
			// need.
			e.deltaThreadFixture(ctx, "t", "", func(key string) string {
				switch key {
				case "/01", "/02", "sub:1/01":
					return "run-1"
				}
				return "run-2"
			})
			before := e.snapshot(ctx, "t")
			want := e.histories(ctx, before, "t", nil)
			if err := d.DeleteForRuns(ctx, []string{"run-1"}); err != nil {
				// Refusing is allowed, if nothing changed.
				e.expectSnapshot(ctx, before, "t")
				return
			}
			after := e.snapshot(ctx, "t")
			survivors := map[string]map[string]spec.DeltaHistory{}
			for _, t := range after {
				k := keyOf("", t.Config.Namespace, t.Config.CheckpointID)
				if h, ok := want[k]; ok {
					survivors[k] = h
				}
			}
			expectSameHistories(e.histories(ctx, after, "t", nil), survivors, "after DeleteForRuns")
		})
	})
}
