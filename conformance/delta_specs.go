package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Delta channels (VALUE-12, DELTA-*). DELTA-1 to DELTA-10 need the
// optional capability delta_history ([spec.DeltaHistoryReader]); VALUE-12
// is a base rule of every saver; DELTA-11 to DELTA-13 need the maintenance
// capability they concern and read histories through
// [spec.ReadDeltaHistory], so they run on savers without the reader too
// (see delta_maint_specs.go).
//
// The fixtures keep each spec to its own rule: specs other than DELTA-3's
// and DELTA-4's compare writes in any order, only DELTA-4's stores
// concurrent writes of several tasks in one checkpoint, and specs that
// rely on the walk finding the right ancestors declare DELTA-1 as a
// prerequisite.

const lDeltaName = "delta_history"

// DeltaChannels is the label of every spec that stores a delta snapshot or
// reads a delta history: VALUE-12, DELTA-1 to DELTA-13 and the engine traces
// of graphs with delta channels. A saver whose LangGraph predates delta
// channels cannot store a snapshot at all; its harness skips them by this
// label (Harness.Skip) rather than have them judge it.
const DeltaChannels = "delta_channels"

var lDelta = g.Label(lDeltaName, DeltaChannels)

// withDelta adds the DeltaChannels label to l.
func withDelta(l g.Labels) g.Labels { return append(slices.Clone(l), DeltaChannels) }

func init() {
	// The walk finding the seed and the ancestors is DELTA-1's; the seed's
	// type is VALUE-12's as much as DELTA-2's.
	for _, id := range []string{"DELTA-2", "DELTA-3", "DELTA-7", "DELTA-8", "DELTA-9"} {
		prerequisites[id] = []string{"DELTA-1"}
	}
	prerequisites["DELTA-2"] = append(prerequisites["DELTA-2"], "VALUE-12")
	prerequisites["VALUE-12"] = roundTrip
	extraGroups = append(extraGroups, deltaValueSpecs, deltaSpecs, deltaMaintSpecs)
}

// deltaProbeThread is the thread of the call that detects whether the
// saver's DeltaHistory is supported.
const deltaProbeThread = "checkpointkit-delta-probe"

// deltaReader returns the saver's delta history reader, or skips the spec
// as not supported: when the harness declares delta_history unsupported,
// when the saver is not a [spec.DeltaHistoryReader], or when a first call
// fails with an error wrapping errors.ErrUnsupported (how a bridged saver
// whose far side lacks the method answers).
func (e *env) deltaReader(ctx context.Context) spec.DeltaHistoryReader {
	if slices.Contains(e.h.NotSupported, lDeltaName) {
		notSupported("the harness declares that delta history is not supported")
	}
	var r spec.DeltaHistoryReader
	switch s := e.s.(type) {
	case interface{ deltaRaw() deltaRec }:
		r = s.deltaRaw() // the recorder's, without its fallback
	case spec.DeltaHistoryReader:
		r = s
	default:
		notSupported("saver does not implement spec.DeltaHistoryReader")
	}
	if _, err := r.DeltaHistory(ctx, spec.Config{ThreadID: deltaProbeThread}, []string{"probe"}); errors.Is(err, errors.ErrUnsupported) {
		notSupported("DeltaHistory fails with errors.ErrUnsupported: " + err.Error())
	}
	return r
}

// history calls the saver's DeltaHistory and fails the spec on error.
func (e *env) history(ctx context.Context, r spec.DeltaHistoryReader, thread, ns, id string, channels ...string) map[string]spec.DeltaHistory {
	g.GinkgoHelper()
	cfg := spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id}
	h, err := r.DeltaHistory(ctx, cfg, channels)
	Expect(err).NotTo(HaveOccurred(), "DeltaHistory %s channels %q", showConfig(cfg), channels)
	return h
}

// dcp is one checkpoint of a delta fixture: the channel values it stores,
// its metadata and the PutWrites calls made against it, in that order.
type dcp struct {
	ns, id, parent string
	values         map[string]any
	md             spec.Metadata
	calls          []dcall
}

// dcall is one PutWrites call.
type dcall struct {
	task, path string
	ws         []spec.Write
}

// wr is a PutWrites call of task writing vs to channel ch, in order, under
// the suite's usual task path.
func wr(task, ch string, vs ...any) dcall {
	c := dcall{task: task, path: taskPath}
	for _, v := range vs {
		c.ws = append(c.ws, spec.Write{Channel: ch, Value: v})
	}
	return c
}

// snap is a delta snapshot of v.
func snap(v any) spec.DeltaSnapshot { return spec.DeltaSnapshot{Value: v} }

// counters is metadata naming chs as delta channels, as both engines write
// it.
func counters(chs ...string) spec.Metadata {
	m := map[string]any{}
	for _, ch := range chs {
		m[ch] = []any{int64(1), int64(1)}
	}
	return spec.Metadata{spec.DeltaCountersKey: m}
}

// deltaFixture stores cps in thread, in order. Each checkpoint gives its
// values a version of its own (its ID), so that per-version storage never
// confuses the values of two checkpoints.
func (e *env) deltaFixture(ctx context.Context, thread string, cps ...dcp) {
	g.GinkgoHelper()
	for _, c := range cps {
		vers := spec.Versions{}
		for ch := range c.values {
			vers[ch] = spec.Version(c.id)
		}
		e.putCP(ctx, spec.Config{ThreadID: thread, Namespace: c.ns, CheckpointID: c.parent}, cpOf(c.id, c.values, vers), c.md, vers)
		// The checkpoint's own config, not the one Put returned (PUT-1's).
		cfg := spec.Config{ThreadID: thread, Namespace: c.ns, CheckpointID: c.id}
		for _, call := range c.calls {
			Expect(e.s.PutWrites(ctx, cfg, call.ws, call.task, call.path)).To(Succeed(), "PutWrites %s task %q", showConfig(cfg), call.task)
		}
	}
}

// bare is v without its snapshot wrapper, if it has one: what DELTA-1
// compares, leaving the seed's type to DELTA-2.
func bare(v any) any {
	if s, ok := v.(spec.DeltaSnapshot); ok {
		return s.Value
	}
	return v
}

// expectHistory checks one channel's history: its seed (none when !hasSeed;
// compared without its snapshot wrapper unless typed) and its writes in
// any order.
func expectHistory(got map[string]spec.DeltaHistory, ch string, hasSeed bool, seed any, typed bool, writes ...spec.PendingWrite) {
	g.GinkgoHelper()
	h, ok := got[ch]
	Expect(ok).To(BeTrue(), "no history for channel %q in %v", ch, got)
	Expect(h.HasSeed).To(Equal(hasSeed), "HasSeed of %q (seed %s)", ch, show(h.Seed))
	if hasSeed {
		gotSeed, wantSeed := h.Seed, seed
		if !typed {
			gotSeed, wantSeed = bare(gotSeed), bare(wantSeed)
		}
		expectSame(gotSeed, wantSeed, fmt.Sprintf("seeds of %q", ch))
	}
	if d := diffOf(sortWrites(h.Writes), sortWrites(writes)); d != "" {
		g.Fail(fmt.Sprintf("writes of %q, in any order (-want +got):\n%s", ch, d))
	}
}

// expectEmptyHistories checks that every channel of chs has an empty
// history.
func expectEmptyHistories(got map[string]spec.DeltaHistory, what string, chs ...string) {
	g.GinkgoHelper()
	Expect(got).To(HaveLen(len(chs)), "%s: one entry per channel", what)
	for _, ch := range chs {
		h, ok := got[ch]
		Expect(ok).To(BeTrue(), "%s: no entry for %q", what, ch)
		Expect(h.HasSeed).To(BeFalse(), "%s: %q has a seed %s", what, ch, show(h.Seed))
		Expect(h.Writes).To(BeEmpty(), "%s: writes of %q", what, ch)
	}
}

// deltaValueSpecs covers VALUE-12, for every saver.
func deltaValueSpecs(e *env) {
	g.Describe("Delta snapshot values", func() {
		check("[VALUE-12] reads snapshot channel and write values back as snapshots, and plain values as plain values", withDelta(lPut), func(ctx context.Context) {
			vals := map[string]any{
				"snap":   snap([]any{"m1", map[string]any{"role": "user", "n": int64(2)}}),
				"scalar": snap("s"),
				"empty":  snap([]any{}),
				"nested": []any{snap(int64(1)), map[string]any{"k": snap(true)}},
				"plain":  []any{"m1"},
			}
			vers := spec.Versions{}
			for k := range vals {
				vers[k] = "1"
			}
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cpOf("c1", vals, vers), nil, vers)
			e.writes(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, "task", spec.Write{Channel: "snap", Value: snap(map[string]any{"a": 1.5})}, spec.Write{Channel: "plain", Value: map[string]any{"a": 1.5}})
			t := e.readBack(ctx, "t", "", "c1") // GetTuple and List, which must agree
			expectSame(t.Checkpoint.ChannelValues, vals, "channel values")
			expectSame(writeValues(t.PendingWrites), map[string]any{"snap": snap(map[string]any{"a": 1.5}), "plain": map[string]any{"a": 1.5}}, "write values by channel")
		})

		check("[VALUE-5] rejects metadata holding a delta snapshot with ErrUnsupportedValue and stores nothing", lPut, func(ctx context.Context) {
			for name, m := range inOrder(map[string]spec.Metadata{
				"top":    {"s": snap("x")},
				"nested": {"m": map[string]any{"l": []any{snap(int64(1))}}},
			}) {
				_, err := e.s.Put(ctx, spec.Config{ThreadID: "t"}, cpOf("c-"+name, nil, nil), m, nil)
				Expect(err).To(MatchError(spec.ErrUnsupportedValue), "metadata %s", name)
				e.expectMissing(ctx, "t", "", "c-"+name)
			}
		})
	})
}

// deltaSpecs covers DeltaHistory (DELTA-1 to DELTA-10).
func deltaSpecs(e *env) {
	g.Describe("DeltaHistory", func() {
		check("[DELTA-1] walks the parent links to the nearest ancestor holding each channel, leaving out the target's own values and writes", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": snap("s1"), "n": []any{"n0"}}, calls: []dcall{wr("task-01", "m", "a"), wr("task-01n", "n", "na")}},
				dcp{id: "02", parent: "01", values: map[string]any{"m": snap("s2")}, calls: []dcall{wr("task-02", "m", "b"), wr("task-02n", "n", "nb")}},
				// A sibling of 04 whose ID sorts between the target's
				// ancestors: walking by ID would stop here.
				dcp{id: "03", parent: "02", values: map[string]any{"m": snap("sibling"), "n": []any{"sibling"}}, calls: []dcall{wr("task-03", "m", "x")}},
				dcp{id: "04", parent: "02", calls: []dcall{wr("task-04", "m", "c"), wr("task-04n", "n", "nc")}},
				dcp{id: "05", parent: "04", values: map[string]any{"m": snap("own")}, calls: []dcall{wr("task-05", "m", "own")}},
			)
			h := e.history(ctx, r, "t", "", "05", "m", "n")
			expectHistory(h, "m", true, snap("s2"), false, pw("task-02", "m", "b"), pw("task-04", "m", "c"))
			expectHistory(h, "n", true, []any{"n0"}, false, pw("task-01n", "n", "na"), pw("task-02n", "n", "nb"), pw("task-04n", "n", "nc"))
		})

		check("[DELTA-2] gives the seed back as stored: a snapshot as a snapshot, a plain value as that value", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			seed := snap([]any{"m1", map[string]any{"role": "ai", "n": int64(1)}})
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": seed, "p": []any{"plain"}, "e": snap([]any{})}},
				dcp{id: "02", parent: "01", calls: []dcall{wr("task-02", "m", "a"), wr("task-02p", "p", "b")}},
				dcp{id: "03", parent: "02"},
			)
			h := e.history(ctx, r, "t", "", "03", "m", "p", "e")
			expectHistory(h, "m", true, seed, true, pw("task-02", "m", "a"))
			expectHistory(h, "p", true, []any{"plain"}, true, pw("task-02p", "p", "b"))
			expectHistory(h, "e", true, snap([]any{}), true)
		})

		check("[DELTA-3] returns the channel's writes of every ancestor walked, the seed's included, oldest first, as GetTuple shows them", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": snap("s")}, calls: []dcall{wr("task-a", "m", "1a"), wr("task-a2", "o", "x")}},
				dcp{id: "02", parent: "01", calls: []dcall{wr("task-b", "m", "2a", "2b"), wr("task-c", "o", "y")}},
				dcp{id: "03", parent: "02", calls: []dcall{wr("task-d", "m", "3a")}},
				dcp{id: "04", parent: "03", calls: []dcall{wr("task-e", "m", "4"), wr("task-e", "o", "z")}},
			)
			want := map[string][]spec.PendingWrite{"m": {}, "o": {}}
			for _, id := range []string{"01", "02", "03"} {
				for _, w := range e.get(ctx, "t", "", id).PendingWrites {
					want[w.Channel] = append(want[w.Channel], w)
				}
			}
			h := e.history(ctx, r, "t", "", "04", "m", "o")
			for _, ch := range []string{"m", "o"} {
				if d := diffOf(h[ch].Writes, want[ch]); d != "" {
					g.Fail(fmt.Sprintf("writes of %q, oldest ancestor first (-want +got):\n%s", ch, d))
				}
			}
		})

		check("[DELTA-4] orders one ancestor's writes by task path, task ID and index, whatever order they were stored in", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			type kw struct {
				key spec.WriteKey
				w   spec.PendingWrite
			}
			calls := []dcall{
				{task: "t-b", path: "b", ws: []spec.Write{{Channel: "m", Value: "b0"}, {Channel: "m", Value: "b1"}}},
				{task: "t-a", path: "a", ws: []spec.Write{{Channel: "m", Value: "a0"}}},
				{task: "t-c", path: "B", ws: []spec.Write{{Channel: "m", Value: "c0"}}},
				{task: "t-d", path: "b", ws: []spec.Write{{Channel: "o", Value: "other"}, {Channel: "m", Value: "d1"}}},
				{task: "t-e", path: "", ws: []spec.Write{{Channel: "m", Value: "e0"}}},
			}
			var keyed []kw
			for _, c := range calls {
				for i, w := range c.ws {
					if w.Channel == "m" {
						keyed = append(keyed, kw{spec.WriteKey{TaskPath: c.path, TaskID: c.task, Index: i}, pw(c.task, w.Channel, w.Value)})
					}
				}
			}
			slices.SortFunc(keyed, func(a, b kw) int { return spec.WriteOrder(a.key, b.key) })
			want := make([]spec.PendingWrite, len(keyed))
			for i, k := range keyed {
				want[i] = k.w
			}
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": snap("s")}},
				dcp{id: "02", parent: "01", calls: calls},
				dcp{id: "03", parent: "02"},
			)
			h := e.history(ctx, r, "t", "", "03", "m")
			if d := diffOf(h["m"].Writes, want); d != "" {
				g.Fail("writes of one ancestor in (task path, task ID, index) order (-want +got):\n" + d)
			}
		})

		check("[DELTA-5] returns no seed and every write back to the chain's first checkpoint when no ancestor holds the channel", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			e.deltaFixture(ctx, "t",
				dcp{id: "01", calls: []dcall{wr("task-1", "m", "1")}},
				dcp{id: "02", parent: "01", values: map[string]any{"k": "other channel"}, calls: []dcall{wr("task-2", "m", "2")}},
				dcp{id: "03", parent: "02", calls: []dcall{wr("task-3", "m", "3")}},
				dcp{id: "04", parent: "03"},
			)
			h := e.history(ctx, r, "t", "", "04", "m")
			expectHistory(h, "m", false, nil, false, pw("task-1", "m", "1"), pw("task-2", "m", "2"), pw("task-3", "m", "3"))
		})

		check("[DELTA-6] returns exactly one entry per requested channel, empty and non-nil for a channel without history, and none for no channels", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": snap("s")}},
				dcp{id: "02", parent: "01", calls: []dcall{wr("task-2", "m", "a")}},
				dcp{id: "03", parent: "02"},
			)
			h := e.history(ctx, r, "t", "", "03", "m", "none", "m")
			Expect(slices.Sorted(maps.Keys(h))).To(Equal([]string{"m", "none"}), "channels of the result")
			Expect(h["none"].HasSeed).To(BeFalse(), "a channel without history has no seed")
			Expect(h["none"].Writes).NotTo(BeNil(), "a channel without history has empty, non-nil writes")
			Expect(h["none"].Writes).To(BeEmpty())
			for _, chs := range [][]string{nil, {}} {
				Expect(e.history(ctx, r, "t", "", "03", chs...)).To(BeEmpty(), "no channels: %#v", chs)
			}
		})

		check("[DELTA-7] keeps each namespace's history to its own chain", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": snap("root")}, calls: []dcall{wr("task-r1", "m", "r1")}},
				dcp{id: "02", parent: "01", calls: []dcall{wr("task-r2", "m", "r2")}},
				dcp{id: "03", parent: "02"},
				dcp{ns: "sub:1", id: "01", calls: []dcall{wr("task-c1", "m", "c1")}},
				dcp{ns: "sub:1", id: "02", parent: "01", values: map[string]any{"m": snap("child")}, calls: []dcall{wr("task-c2", "m", "c2")}},
				dcp{ns: "sub:1", id: "025", parent: "02", calls: []dcall{wr("task-c3", "m", "c3")}},
				dcp{ns: "sub:1", id: "03", parent: "025"},
				dcp{ns: "sub:1|inner:2", id: "015", values: map[string]any{"m": snap("grandchild")}, calls: []dcall{wr("task-g", "m", "g")}},
				dcp{ns: "sub:1|inner:2", id: "03", parent: "015"},
			)
			expectHistory(e.history(ctx, r, "t", "", "03", "m"), "m", true, snap("root"), false, pw("task-r1", "m", "r1"), pw("task-r2", "m", "r2"))
			expectHistory(e.history(ctx, r, "t", "sub:1", "03", "m"), "m", true, snap("child"), false, pw("task-c2", "m", "c2"), pw("task-c3", "m", "c3"))
			expectHistory(e.history(ctx, r, "t", "sub:1|inner:2", "03", "m"), "m", true, snap("grandchild"), false, pw("task-g", "m", "g"))
		})

		check("[DELTA-8] takes from a fork only its own ancestors, never a sibling branch's writes", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": snap("base")}, calls: []dcall{wr("task-1", "m", "w1")}},
				dcp{id: "02", parent: "01", calls: []dcall{wr("task-2", "m", "w2")}},
				dcp{id: "03", parent: "02", calls: []dcall{wr("task-3", "m", "w3")}}, // the sibling branch
				dcp{id: "04", parent: "02", calls: []dcall{wr("task-4", "m", "w4")}},
				dcp{id: "05", parent: "04"},
				dcp{id: "06", parent: "03"},
			)
			expectHistory(e.history(ctx, r, "t", "", "05", "m"), "m", true, snap("base"), false, pw("task-1", "m", "w1"), pw("task-2", "m", "w2"), pw("task-4", "m", "w4"))
			expectHistory(e.history(ctx, r, "t", "", "06", "m"), "m", true, snap("base"), false, pw("task-1", "m", "w1"), pw("task-2", "m", "w2"), pw("task-3", "m", "w3"))
		})

		check("[DELTA-9] reads the latest checkpoint's history for an empty checkpoint ID, and empty histories for a missing checkpoint or thread", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": snap("s")}, calls: []dcall{wr("task-1", "m", "a")}},
				dcp{id: "02", parent: "01", calls: []dcall{wr("task-2", "m", "b")}},
				dcp{id: "03", parent: "02", calls: []dcall{wr("task-3", "m", "c")}},
				dcp{ns: "sub:1", id: "09", calls: []dcall{wr("task-9", "m", "sub")}},
				dcp{ns: "sub:1", id: "10", parent: "09"},
			)
			latest := e.history(ctx, r, "t", "", "", "m")
			expectHistory(latest, "m", true, snap("s"), false, pw("task-1", "m", "a"), pw("task-2", "m", "b"))
			if d := diffOf(latest, e.history(ctx, r, "t", "", "03", "m")); d != "" {
				g.Fail("the latest checkpoint's history differs from checkpoint 03's (-03 +latest):\n" + d)
			}
			expectHistory(e.history(ctx, r, "t", "sub:1", "", "m"), "m", false, nil, false, pw("task-9", "m", "sub"))
			for _, c := range []spec.Config{
				{ThreadID: "t", CheckpointID: "99"}, {ThreadID: "nobody"}, {ThreadID: "nobody", CheckpointID: "03"}, {ThreadID: "t", Namespace: "none:1"},
			} {
				h, err := r.DeltaHistory(ctx, c, []string{"m", "k"})
				Expect(err).NotTo(HaveOccurred(), "DeltaHistory of a missing checkpoint %s", showConfig(c))
				expectEmptyHistories(h, showConfig(c), "m", "k")
			}
		})

		check("[DELTA-10] fails with ErrInvalidConfig without a thread ID, and with the context's error when it is cancelled or expired", lDelta, func(ctx context.Context) {
			r := e.deltaReader(ctx)
			e.deltaFixture(ctx, "t",
				dcp{id: "01", values: map[string]any{"m": snap("s")}},
				dcp{id: "02", parent: "01", calls: []dcall{wr("task-2", "m", "a")}},
			)
			for _, c := range []spec.Config{{}, {CheckpointID: "02"}, {Namespace: "sub:1"}} {
				_, err := r.DeltaHistory(ctx, c, []string{"m"})
				Expect(err).To(MatchError(spec.ErrInvalidConfig), "DeltaHistory %s", showConfig(c))
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := r.DeltaHistory(cctx, spec.Config{ThreadID: "t", CheckpointID: "02"}, []string{"m"})
			Expect(err).To(MatchError(context.Canceled), "DeltaHistory with a cancelled context")
			dctx, stop := context.WithDeadline(ctx, time.Now().Add(-time.Second))
			defer stop()
			_, err = r.DeltaHistory(dctx, spec.Config{ThreadID: "t", CheckpointID: "02"}, []string{"m"})
			Expect(err).To(MatchError(context.DeadlineExceeded), "DeltaHistory with an expired deadline")
		})
	})
}
