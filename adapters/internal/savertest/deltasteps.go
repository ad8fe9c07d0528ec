package savertest

// The delta-history scenarios built from step lists: each stores threads
// with BuildSteps and checks DeltaHistory against histories worked out by
// hand, and against spec.WalkDeltaHistory wherever task paths sort like
// task IDs.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Step describes one checkpoint of a thread [BuildSteps] stores.
type Step struct {
	ID, Parent string
	Values     map[string]any // stored values; msgs, nos and other are versioned either way
	MD         spec.Metadata
	Writes     []TaskWrites // stored against this checkpoint, in this order
}

// TaskWrites is one PutWrites call.
type TaskWrites struct {
	Task, Path string
	Writes     []spec.Write
}

// deltaMD names msgs as a delta channel, as the engines' metadata does.
func deltaMD(extra spec.Metadata) spec.Metadata {
	md := spec.Metadata{spec.DeltaCountersKey: map[string]any{"msgs": []any{int64(1), int64(1)}}}
	for k, v := range extra {
		md[k] = v
	}
	return md
}

// BuildSteps stores steps in thread/ns in order. Every checkpoint gives
// msgs, nos and other a new version; only the channels in Values get a
// value.
func BuildSteps(t *testing.T, s spec.Saver, thread, ns string, steps []Step) {
	t.Helper()
	ctx := context.Background()
	for i, st := range steps {
		vers := spec.Versions{}
		for _, ch := range []string{"msgs", "nos", "other"} {
			vers[ch] = spec.Version(fmt.Sprintf("%08d.%s", i+1, st.ID))
		}
		cp := spec.Checkpoint{V: 4, ID: st.ID, TS: "2026-01-01T00:00:00Z",
			ChannelValues: st.Values, ChannelVersions: vers, VersionsSeen: map[string]spec.Versions{}}
		if cp.ChannelValues == nil {
			cp.ChannelValues = map[string]any{}
		}
		md := st.MD
		if md == nil {
			md = spec.Metadata{}
		}
		if _, err := s.Put(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: st.Parent}, cp, md, vers); err != nil {
			t.Fatalf("put %s: %v", st.ID, err)
		}
		for _, tw := range st.Writes {
			cfg := spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: st.ID}
			if err := s.PutWrites(ctx, cfg, tw.Writes, tw.Task, tw.Path); err != nil {
				t.Fatalf("put writes %s/%s: %v", st.ID, tw.Task, err)
			}
		}
	}
}

// OneWrite is a PutWrites call of a single write to ch.
func OneWrite(task, path, ch string, v any) TaskWrites {
	return TaskWrites{Task: task, Path: path, Writes: []spec.Write{{Channel: ch, Value: v}}}
}

// linearIDs are the checkpoints of linearSteps, oldest first.
var linearIDs = []string{"c00", "c01", "c02", "c03", "c04", "c05"}

// linearSteps: c00 holds a plain msgs, c03 a snapshot, c05 is the tip;
// every checkpoint has one write to msgs and one to nos.
func linearSteps(extraMD spec.Metadata) []Step {
	var steps []Step
	for i := range 6 {
		st := Step{ID: fmt.Sprintf("c%02d", i), MD: deltaMD(extraMD),
			Writes: []TaskWrites{OneWrite("t", "~p", "msgs", fmt.Sprintf("w%d", i)), OneWrite("u", "~q", "nos", fmt.Sprintf("n%d", i))}}
		if i > 0 {
			st.Parent = fmt.Sprintf("c%02d", i-1)
		}
		switch i {
		case 0:
			st.Values = map[string]any{"msgs": []any{"plain"}}
		case 3:
			st.Values = map[string]any{"msgs": spec.DeltaSnapshot{Value: []any{"snap"}}}
		}
		steps = append(steps, st)
	}
	return steps
}

// pw is a pending write of task to ch.
func pw(task, ch string, v any) spec.PendingWrite {
	return spec.PendingWrite{TaskID: task, Channel: ch, Value: v}
}

// history reads the histories of msgs (asked for twice), nos and absent
// at id.
func history(t *testing.T, s spec.DeltaHistoryReader, thread, ns, id string) map[string]spec.DeltaHistory {
	t.Helper()
	return DeltaAt(t, s, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id}, "msgs", "nos", "absent", "msgs")
}

// agreesWithWalk checks DeltaHistory against spec.WalkDeltaHistory at every
// checkpoint of thread/ns.
func agreesWithWalk(t *testing.T, s DeltaSaver, thread, ns string, ids []string) {
	t.Helper()
	for _, id := range ids {
		cfg := spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id}
		chs := []string{"msgs", "nos", "absent", "other"}
		want, err := spec.WalkDeltaHistory(context.Background(), s, cfg, chs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.DeltaHistory(context.Background(), cfg, chs)
		if err != nil {
			t.Fatal(err)
		}
		ExpectDelta(t, fmt.Sprintf("%s/%q/%s against the GetTuple walk", thread, ns, id), got, want)
	}
}

// emptyHistories is what history gives where no ancestor contributes.
var emptyHistories = map[string]spec.DeltaHistory{
	"msgs": {Writes: []spec.PendingWrite{}}, "nos": {Writes: []spec.PendingWrite{}}, "absent": {Writes: []spec.PendingWrite{}},
}

// linearWant is the history of the tip c05 of linearSteps.
func linearWant() map[string]spec.DeltaHistory {
	return map[string]spec.DeltaHistory{
		"msgs":   {Seed: spec.DeltaSnapshot{Value: []any{"snap"}}, HasSeed: true, Writes: []spec.PendingWrite{pw("t", "msgs", "w3"), pw("t", "msgs", "w4")}},
		"nos":    {Writes: []spec.PendingWrite{pw("u", "nos", "n0"), pw("u", "nos", "n1"), pw("u", "nos", "n2"), pw("u", "nos", "n3"), pw("u", "nos", "n4")}},
		"absent": {Writes: []spec.PendingWrite{}},
	}
}

// DeltaStepsSeeds checks, on a chain holding a plain value and then a
// snapshot, the seeds and writes at the tip, at the latest checkpoint, at
// the snapshot and at the root, missing checkpoints and threads, no
// channels, and agreement with spec.WalkDeltaHistory everywhere.
func DeltaStepsSeeds(t *testing.T, s DeltaSaver) {
	ctx := context.Background()
	BuildSteps(t, s, "lin", "", linearSteps(nil))
	ExpectDelta(t, "tip", history(t, s, "lin", "", "c05"), linearWant())
	ExpectDelta(t, "latest", history(t, s, "lin", "", ""), linearWant())
	// The seed's own writes count; the target's never do.
	c03 := history(t, s, "lin", "", "c03")["msgs"]
	want := spec.DeltaHistory{Seed: []any{"plain"}, HasSeed: true,
		Writes: []spec.PendingWrite{pw("t", "msgs", "w0"), pw("t", "msgs", "w1"), pw("t", "msgs", "w2")}}
	if !reflect.DeepEqual(c03, want) {
		t.Errorf("c03 msgs: got %#v, want %#v", c03, want)
	}
	ExpectDelta(t, "root", history(t, s, "lin", "", "c00"), emptyHistories)
	ExpectDelta(t, "missing checkpoint", history(t, s, "lin", "", "c99"), emptyHistories)
	ExpectDelta(t, "missing thread", history(t, s, "nope", "", ""), emptyHistories)
	agreesWithWalk(t, s, "lin", "", linearIDs)
	if h, err := s.DeltaHistory(ctx, spec.Config{ThreadID: "lin"}, nil); err != nil || len(h) != 0 {
		t.Errorf("no channels: %v, %v", h, err)
	}
}

// DeltaStepsErrors checks an invalid config and a cancelled context on a
// thread that does not exist (DELTA-10).
func DeltaStepsErrors(t *testing.T, s DeltaSaver) {
	expectDeltaErrors(t, s, "x")
}

// DeltaStepsScrambledTasks checks WriteOrder when task paths, task IDs
// and the order of the PutWrites calls all disagree (DELTA-4).
func DeltaStepsScrambledTasks(t *testing.T, s DeltaSaver) {
	steps := []Step{
		{ID: "a1", Values: map[string]any{"msgs": spec.DeltaSnapshot{Value: []any{}}}, Writes: []TaskWrites{
			{Task: "z", Path: "~a", Writes: []spec.Write{{Channel: "msgs", Value: "z0"}, {Channel: "nos", Value: "zn"}, {Channel: "msgs", Value: "z2"}}},
			OneWrite("a", "~b", "msgs", "a0"),
			OneWrite("m", "~a", "msgs", "m0"),
		}},
		{ID: "a2", Parent: "a1"},
	}
	BuildSteps(t, s, "scr", "", steps)
	got := history(t, s, "scr", "", "a2")["msgs"]
	want := spec.DeltaHistory{Seed: spec.DeltaSnapshot{Value: []any{}}, HasSeed: true,
		Writes: []spec.PendingWrite{pw("m", "msgs", "m0"), pw("z", "msgs", "z0"), pw("z", "msgs", "z2"), pw("a", "msgs", "a0")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scrambled: got %#v\nwant %#v", got, want)
	}
}

// DeltaStepsForksAndNamespaces checks two branches of a fork and a child
// namespace reusing the root's checkpoint IDs (DELTA-7, DELTA-8).
func DeltaStepsForksAndNamespaces(t *testing.T, s DeltaSaver) {
	steps := []Step{
		{ID: "f1", Values: map[string]any{"msgs": []any{"seed"}}, Writes: []TaskWrites{OneWrite("t", "", "msgs", "1")}},
		{ID: "f2", Parent: "f1", Writes: []TaskWrites{OneWrite("t", "", "msgs", "2")}},
		{ID: "f3", Parent: "f2", Writes: []TaskWrites{OneWrite("t", "", "msgs", "A")}}, // branch A
		{ID: "f4", Parent: "f2", Writes: []TaskWrites{OneWrite("t", "", "msgs", "B")}}, // branch B, sorts between
		{ID: "f5", Parent: "f3"},
		{ID: "f6", Parent: "f4"},
	}
	BuildSteps(t, s, "fork", "", steps)
	BuildSteps(t, s, "fork", "child", []Step{
		{ID: "f1", Writes: []TaskWrites{OneWrite("t", "", "msgs", "child1")}},
		{ID: "f2", Parent: "f1", Writes: []TaskWrites{OneWrite("t", "", "msgs", "child2")}},
		{ID: "f9", Parent: "f2"},
	})
	a := history(t, s, "fork", "", "f5")["msgs"]
	if want := []spec.PendingWrite{pw("t", "msgs", "1"), pw("t", "msgs", "2"), pw("t", "msgs", "A")}; !reflect.DeepEqual(a.Writes, want) || !a.HasSeed {
		t.Errorf("branch A: %#v", a)
	}
	b := history(t, s, "fork", "", "f6")["msgs"]
	if want := []spec.PendingWrite{pw("t", "msgs", "1"), pw("t", "msgs", "2"), pw("t", "msgs", "B")}; !reflect.DeepEqual(b.Writes, want) {
		t.Errorf("branch B: %#v", b)
	}
	c := history(t, s, "fork", "child", "")["msgs"]
	if want := []spec.PendingWrite{pw("t", "msgs", "child1"), pw("t", "msgs", "child2")}; !reflect.DeepEqual(c.Writes, want) || c.HasSeed {
		t.Errorf("child namespace: %#v", c)
	}
	agreesWithWalk(t, s, "fork", "", []string{"f1", "f2", "f3", "f4", "f5", "f6"})
	agreesWithWalk(t, s, "fork", "child", []string{"f1", "f2", "f9", ""})
}

// DeltaStepsPruneKeepsChain checks that Prune(KeepLatest) keeps the chain
// back to the snapshot in every namespace, and only the latest checkpoint
// of a thread without delta channels (DELTA-12).
func DeltaStepsPruneKeepsChain(t *testing.T, s DeltaSaver) {
	ctx := context.Background()
	BuildSteps(t, s, "lin", "", linearSteps(nil))
	BuildSteps(t, s, "lin", "child", linearSteps(nil))
	BuildSteps(t, s, "plain", "", []Step{{ID: "p1", Values: map[string]any{"msgs": "x"}}, {ID: "p2", Parent: "p1"}})
	if err := s.Prune(ctx, []string{"lin", "plain"}, spec.KeepLatest); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"", "child"} {
		if got, want := history(t, s, "lin", ns, "c05")["msgs"], linearWant()["msgs"]; !reflect.DeepEqual(got, want) {
			t.Errorf("ns %q after prune: got %#v, want %#v", ns, got, want)
		}
		expectIDs(t, s, "lin", ns, "c05", "c04", "c03")
	}
	expectIDs(t, s, "plain", "", "p2")
}

// DeltaStepsRunsKeepChain checks that DeleteForRuns keeps the deleted
// runs' checkpoints a surviving chain needs, and deletes a thread whose
// chains all go (DELTA-13).
func DeltaStepsRunsKeepChain(t *testing.T, s DeltaSaver) {
	ctx := context.Background()
	steps := linearSteps(nil)
	for i := range steps {
		steps[i].MD = deltaMD(spec.Metadata{"run_id": []string{"r0", "r0", "r1", "r1", "r1", "r2"}[i]})
	}
	BuildSteps(t, s, "runs", "", steps)
	BuildSteps(t, s, "gone", "", []Step{{ID: "g1", MD: spec.Metadata{"run_id": "r1"}}, {ID: "g2", Parent: "g1", MD: deltaMD(spec.Metadata{"run_id": "r1"})}})
	before := history(t, s, "runs", "", "c05")
	if err := s.DeleteForRuns(ctx, []string{"r1", "r0"}); err != nil {
		t.Fatal(err)
	}
	if got := history(t, s, "runs", "", "c05"); !reflect.DeepEqual(got["msgs"], before["msgs"]) {
		t.Errorf("after delete for runs: got %#v, want %#v", got["msgs"], before["msgs"])
	}
	// c04 and c03 belong to deleted runs and stay for c05's chain; c02 to
	// c00 (run r0, c03's own chain) may stay too, all or none (DELTA-13
	// lets a saver keep a spared checkpoint's own chain).
	if got := IDs(t, s, "runs", ""); !slices.Equal(got, []string{"c05", "c04", "c03"}) && !slices.Equal(got, linearIDsNewestFirst()) {
		t.Errorf("checkpoints of runs after delete for runs: got %v, want [c05 c04 c03] or all of them", got)
	}
	expectIDs(t, s, "gone", "")
}

// linearIDsNewestFirst is linearIDs, newest first, as IDs lists them.
func linearIDsNewestFirst() []string {
	out := slices.Clone(linearIDs)
	slices.Reverse(out)
	return out
}

// DeltaStepsCopyWholeChain checks that CopyThread carries every
// checkpoint's history, task paths included (DELTA-11).
func DeltaStepsCopyWholeChain(t *testing.T, s DeltaSaver) {
	ctx := context.Background()
	BuildSteps(t, s, "src", "", linearSteps(nil))
	BuildSteps(t, s, "src", "child", []Step{{ID: "k1", Writes: []TaskWrites{
		{Task: "z", Path: "~a", Writes: []spec.Write{{Channel: "msgs", Value: "z0"}}}, OneWrite("a", "~b", "msgs", "a0")}},
		{ID: "k2", Parent: "k1"}})
	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	for ns, list := range map[string][]string{"": linearIDs, "child": {"k1", "k2"}} {
		for _, id := range list {
			ExpectDelta(t, fmt.Sprintf("copy of %q/%s", ns, id), history(t, s, "dst", ns, id), history(t, s, "src", ns, id))
		}
	}
	if got := history(t, s, "dst", "child", "k2")["msgs"].Writes; !reflect.DeepEqual(got, []spec.PendingWrite{pw("z", "msgs", "z0"), pw("a", "msgs", "a0")}) {
		t.Errorf("copied task paths: %#v", got)
	}
}

// expectIDs checks the checkpoint IDs of thread/ns, newest first.
func expectIDs(t *testing.T, s spec.Saver, thread, ns string, want ...string) {
	t.Helper()
	if got := IDs(t, s, thread, ns); !slices.Equal(got, want) {
		t.Errorf("checkpoints of %s/%q: got %v, want %v", thread, ns, got, want)
	}
}

// SnapshotChain returns the steps of a chain of n+1 checkpoints, s0000 to
// s<n> (four digits or more): a snapshot of msgs at the first and one write
// to msgs, its position as an int64, against each of the others, so the
// history of the last holds the seed and n-1 writes.
func SnapshotChain(n int) []Step {
	steps := []Step{{ID: "s0000", Values: map[string]any{"msgs": spec.DeltaSnapshot{Value: []any{"seed"}}}}}
	for i := 1; i <= n; i++ {
		steps = append(steps, Step{ID: fmt.Sprintf("s%04d", i), Parent: steps[i-1].ID,
			Writes: []TaskWrites{OneWrite("t", "", "msgs", int64(i))}})
	}
	return steps
}
