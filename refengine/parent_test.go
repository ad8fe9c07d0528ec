package refengine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

func logKeys() *refengine.StateGraph {
	return refengine.NewStateGraph().AddKey("log", refengine.Reducer(refengine.AppendList, []any{}))
}

// A subgraph node's ToParent steers the parent: the child saves nothing for
// the raising task, the parent's task writes the Command.
func TestToParentFromSubgraph(t *testing.T) {
	ctx := context.Background()
	s := newSaver()
	runs := newCounter("after", "other")
	child, err := logKeys().
		AddNode("inner", func(context.Context, refengine.State) (refengine.Update, error) {
			return nil, refengine.ToParent(refengine.Command{Goto: []string{"other"}, Update: map[string]any{"log": []any{"jump"}}})
		}).
		AddEdge(refengine.Start, "inner").
		Compile(refengine.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := logKeys().
		AddSubgraph("child", child).
		AddNode("after", runs.logNode("after")).
		AddNode("other", runs.logNode("other")).
		AddEdge(refengine.Start, "child").
		AddEdge("child", "after").
		Compile(refengine.CompileOptions{Saver: s})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, refengine.State{"log": []any{}}, refengine.RunConfig{ThreadID: "t", Deterministic: true})
	if err != nil {
		t.Fatal(err)
	}
	// The Command's goto and the node's static edge both run.
	if got := fmt.Sprint(res.Values["log"]); got != "[jump after other]" {
		t.Errorf("log = %s", got)
	}
	all := 0
	for _, err := range s.List(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true}) {
		if err != nil {
			t.Fatal(err)
		}
		all++
	}
	if root := len(history(t, s, "t", "")); all-root != 2 {
		t.Errorf("the child stored %d checkpoints, want 2 (input and step 0)", all-root)
	}
}

// ToParent from the root graph's own node fails the run.
func TestToParentAtRoot(t *testing.T) {
	g, err := logKeys().
		AddNode("a", func(context.Context, refengine.State) (refengine.Update, error) {
			return nil, refengine.ToParent(refengine.Command{Goto: []string{"a"}})
		}).
		AddEdge(refengine.Start, "a").
		Compile(refengine.CompileOptions{Saver: newSaver()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(context.Background(), refengine.State{"log": []any{}}, refengine.RunConfig{ThreadID: "t", Deterministic: true})
	var pc *refengine.ParentCommand
	if !errors.As(err, &pc) {
		t.Fatalf("got %v, want a ParentCommand", err)
	}
}

// The state APIs reach a subgraph that a node function calls once the node
// names it (AddNodeCalling); without the name they refuse the namespace.
func TestAddNodeCallingStateAPIs(t *testing.T) {
	ctx := context.Background()
	for _, named := range []bool{true, false} {
		s := newSaver()
		child, err := logKeys().
			AddNode("ask", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
				v, err := refengine.Interrupt(ctx, "?")
				if err != nil {
					return nil, err
				}
				return refengine.Update{"log": []any{v}}, nil
			}).
			AddEdge(refengine.Start, "ask").
			Compile(refengine.CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fn := func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			out, err := child.InvokeFromNode(ctx, refengine.State{"log": []any{}})
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": out["log"]}, nil
		}
		b := logKeys()
		if named {
			b.AddNodeCalling("caller", fn, child)
		} else {
			b.AddNode("caller", fn)
		}
		g, err := b.AddEdge(refengine.Start, "caller").Compile(refengine.CompileOptions{Saver: s})
		if err != nil {
			t.Fatal(err)
		}
		cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}}, cfg); err != nil {
			t.Fatal(err)
		}
		snap, err := g.GetState(ctx, cfg, refengine.StateOptions{Subgraphs: true})
		if err != nil {
			t.Fatal(err)
		}
		st := snap.Tasks[0].State
		if !named {
			if st != nil {
				t.Errorf("an unnamed subgraph's state was read: %+v", st)
			}
			continue
		}
		if st == nil || fmt.Sprint(st.Next) != "[ask]" {
			t.Fatalf("subgraph state = %+v", st)
		}
		at := cfg
		at.Namespace, at.CheckpointID = st.Config.Namespace, st.Config.CheckpointID
		if _, err := g.UpdateState(ctx, at, refengine.Update{"log": []any{"patched"}}, "ask"); err != nil {
			t.Fatal(err)
		}
		at.CheckpointID = ""
		hist, err := g.History(ctx, at, refengine.HistoryOptions{})
		if err != nil || len(hist) != 3 {
			t.Fatalf("subgraph history: %d snapshots, %v", len(hist), err)
		}
		if hist[0].Metadata["source"] != "update" {
			t.Errorf("newest subgraph checkpoint has source %v, want update", hist[0].Metadata["source"])
		}
	}
}

// UpdateState addressed by ID stores the update's writes on the updated
// checkpoint only while it is the thread's latest.
func TestUpdateStateSupersededStoresNoWrites(t *testing.T) {
	ctx := context.Background()
	s := newSaver()
	runs := newCounter("a", "b")
	g, err := logKeys().
		AddNode("a", runs.logNode("a")).AddNode("b", runs.logNode("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b").
		Compile(refengine.CompileOptions{Saver: s, InterruptBefore: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}}, cfg); err != nil {
		t.Fatal(err)
	}
	hs := history(t, s, "t", "")
	old := hs[len(hs)-2]
	writes := func(id string) int {
		tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: id})
		if err != nil {
			t.Fatal(err)
		}
		return len(tup.PendingWrites)
	}
	before := writes(old.Config.CheckpointID)
	at := cfg
	at.CheckpointID = old.Config.CheckpointID
	u, err := g.UpdateState(ctx, at, refengine.Update{"log": []any{"x"}}, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := writes(old.Config.CheckpointID); got != before {
		t.Errorf("superseded checkpoint: %d writes after the update, want %d", got, before)
	}
	// The update's checkpoint is now the latest.
	at.CheckpointID = u.CheckpointID
	if _, err := g.UpdateState(ctx, at, refengine.Update{"log": []any{"y"}}, "a"); err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: u.CheckpointID})
	if err != nil {
		t.Fatal(err)
	}
	if len(tup.PendingWrites) == 0 {
		t.Error("the latest checkpoint got no update writes")
	}
}
