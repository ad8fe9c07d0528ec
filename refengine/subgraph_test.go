package refengine_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// nested builds root(START -> outer) where outer is a subgraph
// (START -> inner) and inner a subgraph (START -> ask) whose node
// interrupts.
func nested(t *testing.T, s spec.Saver, runs *counter) *refengine.Graph {
	ask := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("ask", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
			runs.n["ask"].Add(1)
			v, err := refengine.Interrupt(ctx, "deep?")
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": []any{fmt.Sprint("ask:", v)}}, nil
		}).
		AddEdge(refengine.Start, "ask"), refengine.CompileOptions{})
	inner := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddSubgraph("inner", ask).AddEdge(refengine.Start, "inner"), refengine.CompileOptions{})
	return compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.LastValue()).
		AddSubgraph("outer", inner).AddEdge(refengine.Start, "outer"),
		refengine.CompileOptions{Saver: s})
}

func TestNestedSubgraphs(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("ask")
	g := nested(t, s, runs)
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync}
	res, err := g.Invoke(ctx, refengine.State{"log": []any{}}, cfg)
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	root := history(t, s, "t", "")
	c0 := root[1].Config.CheckpointID
	tOuter, _ := ids.Task(c0, "outer", "1", "outer", ids.Pull, "branch:to:outer")
	ns1 := "outer:" + tOuter
	child := history(t, s, "t", ns1)
	if len(child) != 2 {
		t.Fatalf("%d checkpoints in %s", len(child), ns1)
	}
	s0 := child[1].Config.CheckpointID
	tInner, _ := ids.Task(s0, ns1+"|inner", "1", "inner", ids.Pull, "branch:to:inner")
	ns2 := ns1 + "|inner:" + tInner
	grand := history(t, s, "t", ns2)
	if len(grand) != 2 {
		t.Fatalf("%d checkpoints in %s", len(grand), ns2)
	}
	wantParents := map[string]any{"": c0, ns1: s0}
	if !spec.Equal(grand[0].Metadata["parents"], wantParents) {
		t.Errorf("grandchild parents = %v, want %v", grand[0].Metadata["parents"], wantParents)
	}
	gp, _ := grand[0].Metadata["parents"].(map[string]any)
	if keys, want := slices.Sorted(maps.Keys(gp)), spec.ParentNamespaces(ns2); !slices.Equal(keys, want) {
		t.Errorf("grandchild parents keys = %q, want the ancestor namespaces %q", keys, want)
	}
	if got := spec.RecastNamespace(ns2); got != "outer|inner" {
		t.Errorf("recast = %q", got)
	}
	tAsk, _ := ids.Task(grand[1].Config.CheckpointID, ns2+"|ask", "1", "ask", ids.Pull, "branch:to:ask")
	if want := ids.Interrupt(ns2 + "|ask:" + tAsk); res.Interrupts[0].ID != want {
		t.Errorf("interrupt ID = %s, want hash of the grandchild task namespace (%s)", res.Interrupts[0].ID, want)
	}
	// Each level stores the interrupt.
	for _, h := range []*spec.Tuple{root[1], child[1], grand[1]} {
		if len(h.PendingWrites) != 1 || h.PendingWrites[0].Channel != spec.InterruptChannel {
			t.Errorf("%s: writes %v, want one interrupt", h.Config.Namespace, h.PendingWrites)
		}
	}
	// The grandchild's state is readable by its full namespace (the engine
	// finds the subgraph through the recast namespace).
	snap, err := g.GetState(ctx, refengine.RunConfig{ThreadID: "t", Namespace: ns2}, refengine.StateOptions{})
	if err != nil || snap.Config.Namespace != ns2 || len(snap.Next) != 1 || snap.Next[0] != "ask" {
		t.Fatalf("grandchild state: %+v, %v", snap, err)
	}
	full, err := g.GetState(ctx, cfg, refengine.StateOptions{Subgraphs: true})
	if err != nil {
		t.Fatal(err)
	}
	if st := full.Tasks[0].State; st == nil || st.Tasks[0].State == nil || st.Tasks[0].State.Config.Namespace != ns2 {
		t.Fatalf("recursive subgraph state missing: %+v", full.Tasks[0])
	}
	if _, err := g.GetState(ctx, refengine.RunConfig{ThreadID: "t", Namespace: "nope:1"}, refengine.StateOptions{}); err == nil {
		t.Error("GetState of an unknown subgraph namespace should fail")
	}

	res, err = g.Invoke(ctx, refengine.Command{Resume: "yes"}, cfg)
	if err != nil || res.Interrupted {
		t.Fatalf("resume: res=%+v err=%v", res, err)
	}
	if !spec.Equal(res.Values["log"], []any{"ask:yes"}) {
		t.Errorf("log = %v", res.Values["log"])
	}
	if runs.get("ask") != 2 {
		t.Errorf("ask ran %d times", runs.get("ask"))
	}
	if n := len(history(t, s, "t", ns2)); n != 3 {
		t.Errorf("grandchild has %d checkpoints after resume, want 3 (no new input checkpoint)", n)
	}
	// The resume value reached the grandchild through the scratchpad chain
	// and was saved there as the task's resume list.
	grand = history(t, s, "t", ns2)
	found := false
	for _, w := range grand[1].PendingWrites {
		if w.Channel == spec.ResumeChannel && spec.Equal(w.Value, []any{"yes"}) {
			found = true
		}
	}
	if !found {
		t.Errorf("grandchild writes %v lack the task's resume list", grand[1].PendingWrites)
	}
}

// Exit durability with an interrupted subgraph: one checkpoint in the root
// and one in the child namespace (LangGraph S10).
func TestExitDurabilityNested(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	rec := trace.Record(s)
	runs := newCounter("ask")
	g := nested(t, rec, runs)
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilityExit}
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}}, cfg); err != nil {
		t.Fatal(err)
	}
	all := listAll(t, s, "t")
	if len(all) != 3 {
		t.Fatalf("%d checkpoints over all namespaces, want one per level", len(all))
	}
	root := history(t, s, "t", "")
	if len(root) != 1 || root[0].Metadata["step"] != int64(0) || root[0].Parent != nil {
		t.Fatalf("root: %+v", root[0])
	}
	for _, h := range all {
		if h.Config.Namespace == "" {
			continue
		}
		parents, _ := h.Metadata["parents"].(map[string]any)
		if parents[""] != root[0].Config.CheckpointID {
			t.Errorf("%s: parents %v do not name the stored root checkpoint", h.Config.Namespace, parents)
		}
	}
	for _, c := range rec.Calls() {
		if c.Method == trace.MethodPut && c.Config.CheckpointID != "" {
			t.Errorf("exit-mode put with a parent on a fresh thread: %+v", c.Config)
		}
	}
	if _, err := g.Invoke(ctx, refengine.Command{Resume: "ok"}, cfg); err != nil {
		t.Fatal(err)
	}
	root = history(t, s, "t", "")
	if len(root) != 2 || root[1].Parent == nil || root[1].Parent.CheckpointID != root[0].Config.CheckpointID {
		t.Fatalf("root after resume: %d checkpoints", len(root))
	}
	// Children that finished normally save nothing at exit.
	if n := len(listAll(t, s, "t")); n != 4 {
		t.Errorf("%d checkpoints over all namespaces after resume, want 4", n)
	}
}

func listAll(t *testing.T, s spec.Saver, thread string) []*spec.Tuple {
	t.Helper()
	var out []*spec.Tuple
	for tup, err := range s.List(context.Background(), spec.ListOptions{ThreadID: thread, AllNamespaces: true}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tup)
	}
	return out
}

func TestUpdateStateOnFreshThread(t *testing.T) {
	ctx := context.Background()
	rec := trace.Record(memory.New())
	runs := newCounter("a", "b")
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", runs.logNode("a")).AddNode("b", runs.logNode("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b"), refengine.CompileOptions{Saver: rec})
	cfg := refengine.RunConfig{ThreadID: "fresh"}
	out, err := g.UpdateState(ctx, cfg, refengine.Update{"log": []any{"seed"}}, "a")
	if err != nil {
		t.Fatal(err)
	}
	calls := rec.Calls()
	if got := methodsOf(calls); strings.Join(got, ",") != "GetTuple,Put" {
		t.Fatalf("calls = %v (no PutWrites on a fresh thread)", got)
	}
	if calls[1].Config.CheckpointID != "" || calls[1].Metadata["step"] != int64(0) || calls[1].Metadata["source"] != "update" {
		t.Errorf("put %+v %v", calls[1].Config, calls[1].Metadata)
	}
	// Continuing runs what the update scheduled: b.
	next := cfg
	next.CheckpointID = out.CheckpointID
	res, err := g.Invoke(ctx, nil, next)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Equal(res.Values["log"], []any{"seed", "b"}) || runs.get("a") != 0 || runs.get("b") != 1 {
		t.Errorf("log = %v, runs a=%d b=%d", res.Values["log"], runs.get("a"), runs.get("b"))
	}
	if _, err := g.UpdateState(ctx, cfg, refengine.Update{"log": []any{"x"}}, "zzz"); err == nil {
		t.Error("update as an unknown node should fail")
	}
	if _, err := g.UpdateState(ctx, refengine.RunConfig{ThreadID: "none"}, nil, refengine.CopyNode); err == nil {
		t.Error("copying a missing checkpoint should fail")
	}
}

func TestUpdateStateAsInputAndRunMetadata(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	rec := trace.Record(s)
	runs := newCounter("a", "b")
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", runs.logNode("a")).AddNode("b", runs.logNode("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b"), refengine.CompileOptions{Saver: rec})
	cfg := refengine.RunConfig{ThreadID: "t", Metadata: spec.Metadata{"run_id": "r1", "source": "ignored"}}
	out, err := g.UpdateState(ctx, cfg, refengine.Update{"log": []any{"x"}}, refengine.InputTask)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh thread has no checkpoint to store the input write on: only
	// the input checkpoint is put (langgraph/pregel/main.py:4325).
	calls := rec.Calls()
	if got := strings.Join(methodsOf(calls), ","); got != "GetTuple,Put" {
		t.Fatalf("calls = %s", got)
	}
	if md := calls[1].Metadata; md["source"] != "input" || md["step"] != int64(-1) || md["run_id"] != "r1" {
		t.Errorf("input checkpoint metadata = %v", md)
	}
	if calls[1].Result.CheckpointID != out.CheckpointID {
		t.Errorf("UpdateState returned %v, the Put stored %v", out, calls[1].Result)
	}
	res, err := g.Invoke(ctx, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Equal(res.Values["log"], []any{"x", "a", "b"}) {
		t.Errorf("log = %v", res.Values["log"])
	}
	hs := history(t, s, "t", "")
	if len(hs) != 4 {
		t.Fatalf("%d checkpoints, want the input checkpoint plus three", len(hs))
	}
	for _, h := range hs {
		if h.Metadata["run_id"] != "r1" {
			t.Errorf("checkpoint %v lacks the run's metadata", h.Metadata)
		}
	}
	if err := s.DeleteForRuns(ctx, []string{"r1"}); err != nil {
		t.Fatal(err)
	}
	if n := len(history(t, s, "t", "")); n != 0 {
		t.Errorf("%d checkpoints left after deleting the run", n)
	}
}

// UpdateState on the latest checkpoint builds the update on the
// checkpoint's channels alone: the saved write of a task that already
// finished is not applied (LangGraph Python 1.2.24 gives value 1 here too).
func TestUpdateStateLeavesSavedWrites(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	fail := true
	g := compile(t, refengine.NewStateGraph().
		AddKey("value", refengine.Reducer(refengine.AddNumbers, nil)).
		AddKey("other", refengine.LastValue()).
		AddNode("one", func(context.Context, refengine.State) (refengine.Update, error) {
			return refengine.Update{"value": 2}, nil
		}).
		AddNode("two", func(context.Context, refengine.State) (refengine.Update, error) {
			if fail {
				return nil, fmt.Errorf("no")
			}
			return refengine.Update{"value": 3}, nil
		}).
		AddEdge(refengine.Start, "one").AddEdge(refengine.Start, "two"), refengine.CompileOptions{Saver: s})
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
	if _, err := g.Invoke(ctx, refengine.State{"value": 1}, cfg); err == nil {
		t.Fatal("two should fail")
	}
	out, err := g.UpdateState(ctx, cfg, refengine.Update{"other": "set"}, "two")
	if err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if v := tup.Checkpoint.ChannelValues; !spec.Equal(v["value"], int64(1)) || v["other"] != "set" {
		t.Errorf("values after update = %v, want one's saved write left unapplied and other set", v)
	}
	if tup.Metadata["source"] != "update" || tup.Metadata["step"] != int64(1) {
		t.Errorf("metadata = %v", tup.Metadata)
	}
}

func TestUpdateStateInfersNode(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("a", "b")
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", runs.logNode("a")).AddNode("b", runs.logNode("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b"),
		refengine.CompileOptions{Saver: s, InterruptBefore: []string{"b"}})
	cfg := refengine.RunConfig{ThreadID: "t"}
	if _, err := g.Invoke(ctx, refengine.State{}, cfg); err != nil {
		t.Fatal(err)
	}
	// a ran last, so the update counts as a's: it schedules b again.
	if _, err := g.UpdateState(ctx, cfg, refengine.Update{"log": []any{"edited"}}, ""); err != nil {
		t.Fatal(err)
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Next) != 1 || snap.Next[0] != "b" || !spec.Equal(snap.Values["log"], []any{"a", "edited"}) {
		t.Errorf("after the inferred update: next %v values %v", snap.Next, snap.Values)
	}
	if snap.Metadata["source"] != "update" {
		t.Errorf("metadata %v", snap.Metadata)
	}
}

// With NestedReplayQuirk a resumed subgraph re-runs the finished sibling of
// its interrupted task, as LangGraph does; without it the sibling's saved
// writes are restored.
func TestNestedReplayQuirk(t *testing.T) {
	for _, quirk := range []bool{false, true} {
		ctx := context.Background()
		runs := newCounter("x", "y")
		child := compile(t, refengine.NewStateGraph().
			AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
			AddNode("x", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
				runs.n["x"].Add(1)
				v, err := refengine.Interrupt(ctx, "x?")
				if err != nil {
					return nil, err
				}
				return refengine.Update{"log": []any{v}}, nil
			}).
			AddNode("y", runs.logNode("y")).
			AddEdge(refengine.Start, "x").AddEdge(refengine.Start, "y"), refengine.CompileOptions{})
		g := compile(t, refengine.NewStateGraph().
			AddKey("log", refengine.LastValue()).
			AddSubgraph("sub", child).AddEdge(refengine.Start, "sub"), refengine.CompileOptions{Saver: memory.New()})
		cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, NestedReplayQuirk: quirk}
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}}, cfg); err != nil {
			t.Fatal(err)
		}
		res, err := g.Invoke(ctx, refengine.Command{Resume: "ok"}, cfg)
		if err != nil || res.Interrupted {
			t.Fatalf("quirk=%v: %+v %v", quirk, res, err)
		}
		if !spec.Equal(res.Values["log"], []any{"ok", "y"}) {
			t.Errorf("quirk=%v: log = %v", quirk, res.Values["log"])
		}
		want := int64(1)
		if quirk {
			want = 2
		}
		if runs.get("y") != want || runs.get("x") != 2 {
			t.Errorf("quirk=%v: x ran %d, y ran %d times, want 2 and %d", quirk, runs.get("x"), runs.get("y"), want)
		}
	}
}
