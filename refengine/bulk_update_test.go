package refengine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// linearLog is START -> a -> b over a "log" reducer, run once on thread t.
func linearLog(t *testing.T, s spec.Saver) (*refengine.Graph, refengine.RunConfig) {
	t.Helper()
	runs := newCounter("a", "b", "c")
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", runs.logNode("a")).AddNode("b", runs.logNode("b")).AddNode("c", runs.logNode("c")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b").AddEdge("c", "b"),
		refengine.CompileOptions{Saver: s})
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync}
	if _, err := g.Invoke(context.Background(), refengine.State{}, cfg); err != nil {
		t.Fatal(err)
	}
	return g, cfg
}

// A copy superstep followed by an update superstep (LangGraph's
// copy-and-update, pregel-semantics §6.2 item 5): a fork sibling of the
// checkpoint, then an update checkpoint on the fork whose writes are saved
// against the fork under the ID of the node's task there.
func TestBulkUpdateCopyThenUpdate(t *testing.T) {
	ctx := context.Background()
	rec := trace.Record(memory.New())
	g, cfg := linearLog(t, rec)
	hs := history(t, rec, "t", "")
	step0 := hs[1] // next: a
	at := cfg
	at.CheckpointID = step0.Config.CheckpointID
	n := len(rec.Calls())
	out, err := g.BulkUpdateState(ctx, at,
		[]refengine.StateUpdate{{AsNode: refengine.CopyNode}},
		[]refengine.StateUpdate{{Values: refengine.Update{"log": []any{"a*"}}, AsNode: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	calls := rec.Calls()[n:]
	for _, c := range calls {
		methods = append(methods, c.Method)
	}
	want := []string{trace.MethodGetTuple, trace.MethodPut, trace.MethodGetTuple, trace.MethodPutWrites, trace.MethodPut}
	if !slices.Equal(methods, want) {
		t.Fatalf("calls %v, want %v", methods, want)
	}
	fork := calls[1]
	if fork.Metadata["source"] != "fork" || fork.Config.CheckpointID != step0.Parent.CheckpointID {
		t.Errorf("copy: %v with parent %q, want a fork sibling of %s", fork.Metadata, fork.Config.CheckpointID, step0.Config.CheckpointID)
	}
	forkAt := cfg
	forkAt.CheckpointID = fork.Checkpoint.ID
	snap, err := g.GetState(ctx, forkAt, refengine.StateOptions{})
	if err != nil || len(snap.Tasks) != 1 {
		t.Fatalf("fork's tasks: %+v, %v", snap, err)
	}
	if w := calls[3]; w.Config.CheckpointID != fork.Checkpoint.ID || w.TaskID != snap.Tasks[0].ID {
		t.Errorf("update writes against %s as task %s, want the fork %s as a's task %s", w.Config.CheckpointID, w.TaskID, fork.Checkpoint.ID, snap.Tasks[0].ID)
	}
	upd := calls[4]
	if upd.Metadata["source"] != "update" || upd.Metadata["step"] != int64(2) || upd.Config.CheckpointID != fork.Checkpoint.ID || upd.Result.CheckpointID != out.CheckpointID {
		t.Errorf("update: %v on %s, want source update, step 2, on the fork", upd.Metadata, upd.Config.CheckpointID)
	}
	at.CheckpointID = out.CheckpointID
	res, err := g.Invoke(ctx, nil, at)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Values["log"].([]any); !slices.Equal(got, []any{"a*", "b"}) {
		t.Errorf("log = %v, want [a* b]", got)
	}
}

// Several updates in one superstep are applied together: one checkpoint.
func TestBulkUpdateSeveralInOneSuperstep(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	g, cfg := linearLog(t, s)
	before := len(history(t, s, "t", ""))
	out, err := g.BulkUpdateState(ctx, cfg, []refengine.StateUpdate{
		{Values: refengine.Update{"log": []any{"x"}}, AsNode: "c"},
		{Values: refengine.Update{"log": []any{"y"}}, AsNode: "a"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := history(t, s, "t", "")
	if len(hs) != before+1 || hs[len(hs)-1].Config.CheckpointID != out.CheckpointID {
		t.Fatalf("%d checkpoints, want one more (%d)", len(hs), before+1)
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Both updates write branch:to:b in one step: b runs once, next.
	if got := snap.Values["log"].([]any); !slices.Equal(got, []any{"a", "b", "x", "y"}) || !slices.Equal(snap.Next, []string{"b"}) {
		t.Errorf("after the superstep: log %v, next %v; want [a b x y], [b]", got, snap.Next)
	}
}

func TestBulkUpdateErrors(t *testing.T) {
	ctx := context.Background()
	g, cfg := linearLog(t, memory.New())
	for _, tc := range []struct {
		name  string
		steps [][]refengine.StateUpdate
	}{
		{"no supersteps", nil},
		{"empty superstep", [][]refengine.StateUpdate{{}}},
		{"copy with another update", [][]refengine.StateUpdate{{{AsNode: refengine.CopyNode}, {AsNode: "a"}}}},
		{"copy with values", [][]refengine.StateUpdate{{{AsNode: refengine.CopyNode, Values: refengine.Update{"log": []any{"x"}}}}}},
		{"several without a node", [][]refengine.StateUpdate{{{AsNode: "a"}, {}}}},
		{"unknown node after a copy", [][]refengine.StateUpdate{{{AsNode: refengine.CopyNode}}, {{AsNode: "nope"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := g.BulkUpdateState(ctx, cfg, tc.steps...); !errors.Is(err, spec.ErrInvalidArgument) {
				t.Errorf("got %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// A superstep with an unknown node saves nothing.
func TestBulkUpdateUnknownNodeSavesNothing(t *testing.T) {
	ctx := context.Background()
	rec := trace.Record(memory.New())
	g, cfg := linearLog(t, rec)
	rec.Reset()
	_, err := g.BulkUpdateState(ctx, cfg, []refengine.StateUpdate{{Values: refengine.Update{"log": []any{"x"}}, AsNode: "a"}, {AsNode: "nope"}})
	if !errors.Is(err, spec.ErrInvalidArgument) {
		t.Fatalf("got %v, want ErrInvalidArgument", err)
	}
	for _, c := range rec.Calls() {
		if c.Method != trace.MethodGetTuple {
			t.Errorf("%s call after a refused update", c.Method)
		}
	}
}
