package savertest

// The delta-history scenarios written history by history: each builds
// threads through the Saver API and checks DeltaHistory against histories
// worked out by hand, and against spec.WalkDeltaHistory. The scenarios of
// deltasteps.go build their threads from step lists instead; [RunDelta]
// runs both sets.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DeltaSaver is a saver with every capability the delta scenarios use.
type DeltaSaver interface {
	spec.Saver
	spec.DeltaHistoryReader
	spec.Pruner
	spec.RunDeleter
	spec.ThreadCopier
}

// DeltaFactory returns a fresh, empty DeltaSaver for one test; cleanup is
// the test's.
type DeltaFactory func(t *testing.T) DeltaSaver

// RunDelta runs every delta-history scenario of the package, and
// [DeltaSnapshotValues], as a subtest, each on a fresh saver from fresh.
func RunDelta(t *testing.T, fresh DeltaFactory) {
	for _, sc := range []struct {
		name string
		run  func(*testing.T, DeltaSaver)
	}{
		{"SeedsAndOrder", DeltaSeedsAndOrder},
		{"SnapshotSeed", DeltaSnapshotSeed},
		{"ForksAndParentLinks", DeltaForksAndParentLinks},
		{"Namespaces", DeltaNamespaces},
		{"Edges", DeltaEdges},
		{"CopyThreadKeepsHistories", DeltaCopyThreadKeepsHistories},
		{"PruneKeepsChains", DeltaPruneKeepsChains},
		{"DeleteForRunsKeepsChains", DeltaDeleteForRunsKeepsChains},
		{"StepsSeeds", DeltaStepsSeeds},
		{"StepsErrors", DeltaStepsErrors},
		{"StepsScrambledTasks", DeltaStepsScrambledTasks},
		{"StepsForksAndNamespaces", DeltaStepsForksAndNamespaces},
		{"StepsPruneKeepsChain", DeltaStepsPruneKeepsChain},
		{"StepsRunsKeepChain", DeltaStepsRunsKeepChain},
		{"StepsCopyWholeChain", DeltaStepsCopyWholeChain},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, fresh(t)) })
	}
	t.Run("SnapshotValues", func(t *testing.T) { DeltaSnapshotValues(t, fresh(t)) })
}

// expectDeltaErrors checks that a config without a thread ID fails with
// ErrInvalidConfig and a cancelled context with context.Canceled, for
// thread (DELTA-10).
func expectDeltaErrors(t *testing.T, s spec.DeltaHistoryReader, thread string) {
	t.Helper()
	if _, err := s.DeltaHistory(context.Background(), spec.Config{}, []string{"msgs"}); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("empty thread: %v, want ErrInvalidConfig", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.DeltaHistory(ctx, spec.Config{ThreadID: thread}, []string{"msgs"}); !errors.Is(err, context.Canceled) {
		t.Errorf("thread %q, cancelled: %v, want context.Canceled", thread, err)
	}
}

// DeltaPut stores checkpoint id under parent with values, the versions of
// every channel in versions, and new values (or none) for the channels of
// fresh.
func DeltaPut(t *testing.T, s spec.Saver, thread, ns, parent, id string, versions spec.Versions, values map[string]any, fresh []string, md spec.Metadata) {
	t.Helper()
	nv := spec.Versions{}
	for _, ch := range fresh {
		nv[ch] = versions[ch]
	}
	c := spec.Checkpoint{V: 4, ID: id, TS: "2026-01-01T00:00:00Z", ChannelValues: values, ChannelVersions: versions,
		VersionsSeen: map[string]spec.Versions{}}
	if _, err := s.Put(context.Background(), spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: parent}, c, md, nv); err != nil {
		t.Fatalf("Put %s/%s/%s: %v", thread, ns, id, err)
	}
}

// DeltaWrites stores writes (channel, value pairs) of one task.
func DeltaWrites(t *testing.T, s spec.Saver, thread, ns, id, task, path string, pairs ...any) {
	t.Helper()
	var ws []spec.Write
	for i := 0; i < len(pairs); i += 2 {
		ws = append(ws, spec.Write{Channel: pairs[i].(string), Value: pairs[i+1]})
	}
	if err := s.PutWrites(context.Background(), spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id}, ws, task, path); err != nil {
		t.Fatalf("PutWrites %s/%s/%s task %s: %v", thread, ns, id, task, err)
	}
}

// dHist is a history with writes given as task, channel, value triples.
func dHist(seed any, hasSeed bool, triples ...any) spec.DeltaHistory {
	h := spec.DeltaHistory{Seed: seed, HasSeed: hasSeed, Writes: []spec.PendingWrite{}}
	for i := 0; i < len(triples); i += 3 {
		h.Writes = append(h.Writes, spec.PendingWrite{TaskID: triples[i].(string), Channel: triples[i+1].(string), Value: triples[i+2]})
	}
	return h
}

// DeltaAt returns the histories of channels seen from cfg, failing the
// test on error.
func DeltaAt(t *testing.T, s spec.DeltaHistoryReader, cfg spec.Config, channels ...string) map[string]spec.DeltaHistory {
	t.Helper()
	got, err := s.DeltaHistory(context.Background(), cfg, channels)
	if err != nil {
		t.Fatalf("DeltaHistory %+v %v: %v", cfg, channels, err)
	}
	return got
}

// ExpectDelta fails the test unless got and want are deep-equal; what
// names the histories in the message.
func ExpectDelta(t *testing.T, what string, got, want map[string]spec.DeltaHistory) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

// DeltaAgreesWithWalk compares the saver's histories with spec.WalkDeltaHistory
// over the same saver: the same seeds and, ancestor order and WriteOrder
// aside (the walk keeps GetTuple's order), the same writes.
func DeltaAgreesWithWalk(t *testing.T, s DeltaSaver, cfg spec.Config, channels ...string) {
	t.Helper()
	got := DeltaAt(t, s, cfg, channels...)
	walked, err := spec.WalkDeltaHistory(context.Background(), s, cfg, channels)
	if err != nil {
		t.Fatalf("WalkDeltaHistory: %v", err)
	}
	norm := func(h spec.DeltaHistory) spec.DeltaHistory {
		h.Writes = slices.Clone(h.Writes)
		slices.SortFunc(h.Writes, func(a, b spec.PendingWrite) int {
			return strings.Compare(fmt.Sprintf("%s|%s|%#v", a.TaskID, a.Channel, a.Value), fmt.Sprintf("%s|%s|%#v", b.TaskID, b.Channel, b.Value))
		})
		return h
	}
	if len(got) != len(walked) {
		t.Fatalf("%d histories, the walk %d", len(got), len(walked))
	}
	for ch, w := range walked {
		if g := norm(got[ch]); !reflect.DeepEqual(g, norm(w)) {
			t.Errorf("channel %q at %+v:\n got  %#v\n walk %#v", ch, cfg, g, norm(w))
		}
	}
}

// dBasic stores thread "t": c1 <- c2 <- c3 <- c4, where msgs holds a
// value at c1 only (a version with no value at c2 and c3), plain holds one
// value from c1 on (c2..c4 carry its version), d never holds one, and the
// writes of c2 are stored with task paths that do not follow task IDs.
func dBasic(t *testing.T, s spec.Saver, thread, ns string) {
	t.Helper()
	v := func(n string) spec.Versions {
		return spec.Versions{"msgs": spec.Version(n), "plain": "1", "d": spec.Version(n)}
	}
	DeltaPut(t, s, thread, ns, "", "c1", v("1"), map[string]any{"msgs": []any{"seed"}, "plain": "p1"}, []string{"msgs", "plain", "d"}, nil)
	DeltaWrites(t, s, thread, ns, "c1", "b", "~0", "msgs", "m1b")
	DeltaWrites(t, s, thread, ns, "c1", "a", "~1", "msgs", "m1a", "d", "d1")
	DeltaPut(t, s, thread, ns, "c1", "c2", v("2"), nil, []string{"msgs", "d"}, nil)
	DeltaWrites(t, s, thread, ns, "c2", "z", "~0", "msgs", "m2z0", "msgs", "m2z1")
	DeltaWrites(t, s, thread, ns, "c2", "a", "~2", "msgs", "m2a")
	DeltaWrites(t, s, thread, ns, "c2", "m", "~0", "d", "d2", "msgs", "m2m")
	DeltaPut(t, s, thread, ns, "c2", "c3", v("3"), nil, []string{"msgs", "d"}, nil)
	DeltaWrites(t, s, thread, ns, "c3", "q", "~0", "msgs", "m3")
	DeltaPut(t, s, thread, ns, "c3", "c4", v("4"), nil, []string{"msgs", "d"}, spec.Metadata{spec.DeltaCountersKey: map[string]any{"msgs": []any{3, 3}}})
	DeltaWrites(t, s, thread, ns, "c4", "q", "~0", "msgs", "m4")
}

func dBasicWant() map[string]spec.DeltaHistory {
	return map[string]spec.DeltaHistory{
		"msgs": dHist([]any{"seed"}, true,
			"b", "msgs", "m1b", "a", "msgs", "m1a",
			"m", "msgs", "m2m", "z", "msgs", "m2z0", "z", "msgs", "m2z1", "a", "msgs", "m2a",
			"q", "msgs", "m3"),
		"plain": dHist("p1", true),
		"d":     dHist(nil, false, "a", "d", "d1", "m", "d", "d2"),
		"none":  dHist(nil, false),
	}
}

// DeltaSeedsAndOrder checks seeds, the writes back to them in WriteOrder
// whatever the task paths, the latest checkpoint as the default target, a
// channel asked for twice, and agreement with spec.WalkDeltaHistory
// (DELTA-1 to DELTA-6, DELTA-9).
func DeltaSeedsAndOrder(t *testing.T, s DeltaSaver) {
	dBasic(t, s, "t", "")
	cfg := spec.Config{ThreadID: "t", CheckpointID: "c4"}
	ExpectDelta(t, "history", DeltaAt(t, s, cfg, "msgs", "plain", "d", "none", "msgs"), dBasicWant())
	// The latest checkpoint is the default target.
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "t"}, "msgs", "plain", "d", "none"), dBasicWant())
	for _, id := range []string{"c1", "c2", "c3", "c4"} {
		DeltaAgreesWithWalk(t, s, spec.Config{ThreadID: "t", CheckpointID: id}, "msgs", "plain", "d", "none")
	}
	// From c2 the walk visits c1 only.
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "t", CheckpointID: "c2"}, "msgs", "d"), map[string]spec.DeltaHistory{
		"msgs": dHist([]any{"seed"}, true, "b", "msgs", "m1b", "a", "msgs", "m1a"),
		"d":    dHist(nil, false, "a", "d", "d1"),
	})
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "t", CheckpointID: "c1"}, "msgs"), map[string]spec.DeltaHistory{"msgs": dHist(nil, false)})
}

// DeltaSnapshotSeed checks that a stored spec.DeltaSnapshot seeds a
// history as a snapshot, and that a snapshot written as a task's value is
// an ordinary write (DELTA-2, DELTA-3).
func DeltaSnapshotSeed(t *testing.T, s DeltaSaver) {
	v := func(n string) spec.Versions { return spec.Versions{"msgs": spec.Version(n)} }
	DeltaPut(t, s, "t", "", "", "c1", v("1"), map[string]any{"msgs": []any{"old"}}, []string{"msgs"}, nil)
	DeltaWrites(t, s, "t", "", "c1", "a", "~0", "msgs", "w1")
	DeltaPut(t, s, "t", "", "c1", "c2", v("2"), map[string]any{"msgs": spec.DeltaSnapshot{Value: []any{"old", "w1"}}}, []string{"msgs"}, nil)
	DeltaWrites(t, s, "t", "", "c2", "a", "~0", "msgs", "w2")
	DeltaPut(t, s, "t", "", "c2", "c3", v("3"), nil, []string{"msgs"}, nil)
	DeltaWrites(t, s, "t", "", "c3", "a", "~0", "msgs", spec.DeltaSnapshot{Value: "written"})
	DeltaPut(t, s, "t", "", "c3", "c4", v("4"), nil, []string{"msgs"}, nil)
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "t"}, "msgs"), map[string]spec.DeltaHistory{
		"msgs": dHist(spec.DeltaSnapshot{Value: []any{"old", "w1"}}, true,
			"a", "msgs", "w2", "a", "msgs", spec.DeltaSnapshot{Value: "written"}),
	})
	DeltaAgreesWithWalk(t, s, spec.Config{ThreadID: "t"}, "msgs")
}

// DeltaForksAndParentLinks checks that a fork's sibling branch stays out
// of its history and that the walk follows parent links, not ID order
// (DELTA-1, DELTA-8).
func DeltaForksAndParentLinks(t *testing.T, s DeltaSaver) {
	v := spec.Versions{"msgs": "1"}
	DeltaPut(t, s, "f", "", "", "01", v, map[string]any{"msgs": "root"}, []string{"msgs"}, nil)
	DeltaWrites(t, s, "f", "", "01", "a", "", "msgs", "w01")
	DeltaPut(t, s, "f", "", "01", "02", spec.Versions{"msgs": "2"}, nil, []string{"msgs"}, nil)
	DeltaWrites(t, s, "f", "", "02", "a", "", "msgs", "w02")
	DeltaPut(t, s, "f", "", "02", "03", spec.Versions{"msgs": "3"}, nil, []string{"msgs"}, nil) // sibling branch
	DeltaWrites(t, s, "f", "", "03", "a", "", "msgs", "sib")
	DeltaPut(t, s, "f", "", "02", "04", spec.Versions{"msgs": "3"}, nil, []string{"msgs"}, nil)
	DeltaWrites(t, s, "f", "", "04", "a", "", "msgs", "w04")
	DeltaPut(t, s, "f", "", "04", "05", spec.Versions{"msgs": "4"}, nil, []string{"msgs"}, nil)
	want := map[string]spec.DeltaHistory{"msgs": dHist("root", true, "a", "msgs", "w01", "a", "msgs", "w02", "a", "msgs", "w04")}
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "f", CheckpointID: "05"}, "msgs"), want)
	DeltaAgreesWithWalk(t, s, spec.Config{ThreadID: "f", CheckpointID: "05"}, "msgs")

	// Parent IDs that sort after their children.
	DeltaPut(t, s, "o", "", "", "z9", v, map[string]any{"msgs": "Z"}, []string{"msgs"}, nil)
	DeltaWrites(t, s, "o", "", "z9", "a", "", "msgs", "wz9")
	DeltaPut(t, s, "o", "", "z9", "a1", spec.Versions{"msgs": "2"}, nil, []string{"msgs"}, nil)
	DeltaWrites(t, s, "o", "", "a1", "a", "", "msgs", "wa1")
	DeltaPut(t, s, "o", "", "a1", "b2", spec.Versions{"msgs": "3"}, nil, []string{"msgs"}, nil)
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "o", CheckpointID: "b2"}, "msgs"), map[string]spec.DeltaHistory{
		"msgs": dHist("Z", true, "a", "msgs", "wz9", "a", "msgs", "wa1"),
	})
	DeltaAgreesWithWalk(t, s, spec.Config{ThreadID: "o", CheckpointID: "b2"}, "msgs")
}

// DeltaNamespaces checks that each namespace follows its own chain
// (DELTA-7).
func DeltaNamespaces(t *testing.T, s DeltaSaver) {
	for _, ns := range []string{"", "child:1"} {
		DeltaPut(t, s, "n", ns, "", "r1", spec.Versions{"msgs": "1"}, map[string]any{"msgs": "seed" + ns}, []string{"msgs"}, nil)
		DeltaWrites(t, s, "n", ns, "r1", "a", "", "msgs", "w1"+ns)
		DeltaPut(t, s, "n", ns, "r1", "r2", spec.Versions{"msgs": "2"}, nil, []string{"msgs"}, nil)
		DeltaWrites(t, s, "n", ns, "r2", "a", "", "msgs", "w2"+ns)
		DeltaPut(t, s, "n", ns, "r2", "r3", spec.Versions{"msgs": "3"}, nil, []string{"msgs"}, nil)
	}
	for _, ns := range []string{"", "child:1"} {
		cfg := spec.Config{ThreadID: "n", Namespace: ns, CheckpointID: "r3"}
		ExpectDelta(t, "history", DeltaAt(t, s, cfg, "msgs"), map[string]spec.DeltaHistory{
			"msgs": dHist("seed"+ns, true, "a", "msgs", "w1"+ns, "a", "msgs", "w2"+ns),
		})
		DeltaAgreesWithWalk(t, s, cfg, "msgs")
	}
	// A namespace with no checkpoints of its own has empty histories.
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "n", Namespace: "child:2", CheckpointID: "r3"}, "msgs"),
		map[string]spec.DeltaHistory{"msgs": dHist(nil, false)})
}

// DeltaEdges checks missing checkpoints and threads, no channels, an
// invalid config, a cancelled context, and parent links that loop
// (DELTA-6, DELTA-9, DELTA-10).
func DeltaEdges(t *testing.T, s DeltaSaver) {
	dBasic(t, s, "t", "")
	empty := map[string]spec.DeltaHistory{"msgs": dHist(nil, false)}
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "t", CheckpointID: "nope"}, "msgs"), empty)
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "nobody"}, "msgs"), empty)
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "t"}), map[string]spec.DeltaHistory{})
	expectDeltaErrors(t, s, "t")

	// Parent links that loop end the walk.
	DeltaPut(t, s, "loop", "", "", "A", spec.Versions{"msgs": "1"}, nil, []string{"msgs"}, nil)
	DeltaWrites(t, s, "loop", "", "A", "a", "", "msgs", "wA")
	DeltaPut(t, s, "loop", "", "A", "B", spec.Versions{"msgs": "2"}, nil, []string{"msgs"}, nil)
	DeltaWrites(t, s, "loop", "", "B", "a", "", "msgs", "wB")
	DeltaPut(t, s, "loop", "", "B", "A", spec.Versions{"msgs": "1"}, nil, []string{"msgs"}, nil)
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "loop", CheckpointID: "B"}, "msgs"), map[string]spec.DeltaHistory{
		"msgs": dHist(nil, false, "a", "msgs", "wA"),
	})
}

// dHistories returns the histories of every checkpoint of thread in ns.
func dHistories(t *testing.T, s DeltaSaver, thread, ns string, channels ...string) map[string]map[string]spec.DeltaHistory {
	t.Helper()
	out := map[string]map[string]spec.DeltaHistory{}
	for _, id := range IDs(t, s, thread, ns) {
		out[id] = DeltaAt(t, s, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id}, channels...)
	}
	return out
}

// IDs returns the checkpoint IDs of thread in ns, newest first.
func IDs(t *testing.T, s spec.Saver, thread, ns string) []string {
	t.Helper()
	var out []string
	for tu, err := range s.List(context.Background(), spec.ListOptions{ThreadID: thread, Namespace: ns}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tu.Config.CheckpointID)
	}
	return out
}

// DeltaCopyThreadKeepsHistories checks that CopyThread carries every
// checkpoint's history in every namespace (DELTA-11).
func DeltaCopyThreadKeepsHistories(t *testing.T, s DeltaSaver) {
	dBasic(t, s, "src", "")
	dBasic(t, s, "src", "sub:1")
	if err := s.CopyThread(context.Background(), "src", "dst"); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"", "sub:1"} {
		want := dHistories(t, s, "src", ns, "msgs", "plain", "d")
		if len(want) != 4 {
			t.Fatalf("src has %d checkpoints in %q", len(want), ns)
		}
		if got := dHistories(t, s, "dst", ns, "msgs", "plain", "d"); !reflect.DeepEqual(got, want) {
			t.Errorf("namespace %q: copied histories differ:\n got %v\nwant %v", ns, got, want)
		}
	}
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "dst", CheckpointID: "c4"}, "msgs", "plain", "d", "none"), dBasicWant())
}

// dPruneThread stores c1..c5 in thread/ns: msgs has values at c1 and c3,
// d2 at c2 only, and c5 names both as delta channels.
func dPruneThread(t *testing.T, s spec.Saver, thread, ns string, md func(i int) spec.Metadata) {
	t.Helper()
	values := map[int]map[string]any{1: {"msgs": "s1"}, 2: {"d2": "s2"}, 3: {"msgs": "s3"}}
	parent := ""
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("c%d", i)
		vs := spec.Versions{"msgs": spec.Version(fmt.Sprint(i)), "d2": spec.Version(fmt.Sprint(i))}
		DeltaPut(t, s, thread, ns, parent, id, vs, values[i], []string{"msgs", "d2"}, md(i))
		DeltaWrites(t, s, thread, ns, id, "task", "~0", "msgs", "m"+id, "d2", "d"+id)
		parent = id
	}
}

// DeltaCounters is metadata naming channels as delta channels, as the
// engines write it under spec.DeltaCountersKey.
func DeltaCounters(channels ...string) spec.Metadata {
	m := map[string]any{}
	for _, ch := range channels {
		m[ch] = []any{1, 1}
	}
	return spec.Metadata{spec.DeltaCountersKey: m}
}

// DeltaPruneKeepsChains checks that Prune(KeepLatest) keeps the ancestors
// back to the seed of each channel the latest checkpoint names, unchanged,
// and nothing older (DELTA-12).
func DeltaPruneKeepsChains(t *testing.T, s DeltaSaver) {
	dPruneThread(t, s, "p", "", func(i int) spec.Metadata {
		if i == 5 {
			return DeltaCounters("msgs", "d2")
		}
		return nil
	})
	dPruneThread(t, s, "p", "msgsonly", func(i int) spec.Metadata {
		if i == 5 {
			return DeltaCounters("msgs")
		}
		return nil
	})
	dPruneThread(t, s, "p", "plain", func(int) spec.Metadata { return nil })
	before := map[string]map[string]spec.DeltaHistory{}
	for _, ns := range []string{"", "msgsonly"} {
		before[ns] = DeltaAt(t, s, spec.Config{ThreadID: "p", Namespace: ns, CheckpointID: "c5"}, "msgs", "d2")
	}
	beforeC2 := mustTuple(t, s, spec.Config{ThreadID: "p", CheckpointID: "c2"})
	if err := s.Prune(context.Background(), []string{"p"}, spec.KeepLatest); err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string][]string{"": {"c5", "c4", "c3", "c2"}, "msgsonly": {"c5", "c4", "c3"}, "plain": {"c5"}} {
		if got := IDs(t, s, "p", ns); !slices.Equal(got, want) {
			t.Errorf("namespace %q after prune: %v, want %v", ns, got, want)
		}
	}
	after := DeltaAt(t, s, spec.Config{ThreadID: "p", CheckpointID: "c5"}, "msgs", "d2")
	ExpectDelta(t, "history", after, before[""])
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "p", Namespace: "msgsonly", CheckpointID: "c5"}, "msgs"),
		map[string]spec.DeltaHistory{"msgs": before["msgsonly"]["msgs"]})
	if got := mustTuple(t, s, spec.Config{ThreadID: "p", CheckpointID: "c2"}); !reflect.DeepEqual(got, beforeC2) {
		t.Errorf("kept ancestor c2 changed:\n got %+v\nwant %+v", got, beforeC2)
	}
}

func mustTuple(t *testing.T, s spec.Saver, cfg spec.Config) *spec.Tuple {
	t.Helper()
	tu, err := s.GetTuple(context.Background(), cfg)
	if err != nil {
		t.Fatalf("GetTuple %+v: %v", cfg, err)
	}
	return tu
}

// DeltaDeleteForRunsKeepsChains checks that DeleteForRuns keeps the
// checkpoints a surviving chain needs and deletes the rest (DELTA-13).
func DeltaDeleteForRunsKeepsChains(t *testing.T, s DeltaSaver) {
	runs := map[int]string{1: "old", 2: "x", 3: "x", 4: "x", 5: "y"}
	dPruneThread(t, s, "r", "", func(i int) spec.Metadata {
		md := spec.Metadata{"run_id": runs[i]}
		if i >= 4 {
			md[spec.DeltaCountersKey] = map[string]any{"msgs": []any{1, 1}}
		}
		return md
	})
	dPruneThread(t, s, "plain", "", func(i int) spec.Metadata { return spec.Metadata{"run_id": "x"} })
	before := DeltaAt(t, s, spec.Config{ThreadID: "r", CheckpointID: "c5"}, "msgs")
	if err := s.DeleteForRuns(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if got, want := IDs(t, s, "r", ""), []string{"c5", "c4", "c3", "c1"}; !slices.Equal(got, want) {
		t.Errorf("thread r after DeleteForRuns: %v, want %v", got, want)
	}
	if got := IDs(t, s, "plain", ""); len(got) != 0 {
		t.Errorf("thread plain after DeleteForRuns: %v, want nothing", got)
	}
	ExpectDelta(t, "history", DeltaAt(t, s, spec.Config{ThreadID: "r", CheckpointID: "c5"}, "msgs"), before)
	ExpectDelta(t, "history", before, map[string]spec.DeltaHistory{"msgs": dHist("s3", true, "task", "msgs", "mc3", "task", "msgs", "mc4")})
}
