package refengine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// A failing task cancels its running siblings (pregel-semantics §2.5,
// §2.10): a sibling that finished, or finishes anyway, keeps its writes and
// is restored on retry; a sibling that returns because it was cancelled
// saves an __error__ and runs again on retry; Invoke reports the original
// failure.
func TestFailureCancelsSiblings(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name          string
		deterministic bool
		obeys         bool // the sibling returns its context's error
	}{
		{"concurrent, sibling finishes anyway", false, false},
		{"concurrent, sibling obeys", false, true},
		{"deterministic, sibling finishes anyway", true, false},
		{"deterministic, sibling obeys", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := memory.New()
			runs := newCounter("fail", "sibling", "done")
			failing := true
			fail := func(context.Context, refengine.State) (refengine.Update, error) {
				runs.n["fail"].Add(1)
				if failing {
					return nil, boom
				}
				return refengine.Update{"log": []any{"fail"}}, nil
			}
			var cause error
			sibling := func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
				runs.n["sibling"].Add(1)
				if failing {
					<-ctx.Done() // the failure of "fail" cancels it
					cause = context.Cause(ctx)
					if tc.obeys {
						return nil, ctx.Err()
					}
				}
				return refengine.Update{"log": []any{"sibling"}}, nil
			}
			// "fail" comes first in task order, so in deterministic mode
			// the sibling runs after the failure.
			g := compile(t, refengine.NewStateGraph().
				AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
				AddNode("fail", fail).AddNode("sibling", sibling).
				AddEdge(refengine.Start, "fail").AddEdge(refengine.Start, "sibling"),
				refengine.CompileOptions{Saver: s})
			cfg := refengine.RunConfig{ThreadID: "t", Deterministic: tc.deterministic, Durability: refengine.DurabilitySync}
			_, err := g.Invoke(ctx, refengine.State{}, cfg)
			var te *refengine.TaskError
			if !errors.As(err, &te) || te.Node != "fail" || !errors.Is(err, boom) {
				t.Fatalf("Invoke: %v, want fail's TaskError", err)
			}
			if cause != refengine.ErrSiblingFailed {
				t.Errorf("sibling's cancel cause = %v, want ErrSiblingFailed", cause)
			}
			snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range snap.Tasks {
				switch {
				case task.Name == "fail" && task.Error != "boom":
					t.Errorf("fail's saved error = %q", task.Error)
				case task.Name == "sibling" && tc.obeys && (task.Error == "" || task.Result != nil):
					t.Errorf("cancelled sibling saved error %q, result %v; want an error only", task.Error, task.Result)
				case task.Name == "sibling" && !tc.obeys && (task.Error != "" || task.Result == nil):
					t.Errorf("finished sibling saved error %q, result %v; want its result only", task.Error, task.Result)
				}
			}
			failing = false
			res, err := g.Invoke(ctx, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			wantSibling := int64(1)
			if tc.obeys {
				wantSibling = 2
			}
			if runs.get("fail") != 2 || runs.get("sibling") != wantSibling {
				t.Errorf("runs: fail %d, sibling %d; want 2, %d", runs.get("fail"), runs.get("sibling"), wantSibling)
			}
			if got := res.Values["log"].([]any); len(got) != 2 {
				t.Errorf("log = %v, want both nodes once", got)
			}
		})
	}
}

// A sibling that finished before the failure keeps its writes, whatever
// the mode, and its subgraph's saver calls are not cancelled.
func TestFailureKeepsFinishedSiblingsSubgraph(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	child := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("inner", func(context.Context, refengine.State) (refengine.Update, error) {
			return refengine.Update{"log": []any{"inner"}}, nil
		}).AddEdge(refengine.Start, "inner"), refengine.CompileOptions{})
	done := make(chan struct{})
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddSubgraph("sub", child).
		AddNode("fail", func(context.Context, refengine.State) (refengine.Update, error) {
			<-done
			return nil, errors.New("boom")
		}).
		AddEdge(refengine.Start, "sub").AddEdge(refengine.Start, "fail"),
		refengine.CompileOptions{Saver: &closeAfterPutWrites{Saver: s, path: "~__pregel_pull, sub", done: done}})
	cfg := refengine.RunConfig{ThreadID: "t", Durability: refengine.DurabilitySync}
	if _, err := g.Invoke(ctx, refengine.State{}, cfg); err == nil {
		t.Fatal("no failure")
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Values["log"].([]any); len(got) != 1 || got[0] != "inner" {
		t.Errorf("log = %v, want sub's writes kept", got)
	}
}

// closeAfterPutWrites closes done once the writes of the task with path
// are saved.
type closeAfterPutWrites struct {
	spec.Saver
	path string
	once sync.Once
	done chan struct{}
}

func (c *closeAfterPutWrites) PutWrites(ctx context.Context, cfg spec.Config, ws []spec.Write, taskID, path string) error {
	err := c.Saver.PutWrites(ctx, cfg, ws, taskID, path)
	if cfg.Namespace == "" && path == c.path {
		c.once.Do(func() { close(c.done) })
	}
	return err
}

// In deterministic mode a subgraph task after a failed one does not start
// its subgraph: it fails with the cancellation and its cause.
func TestFailureCancelsSubgraphSibling(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	child := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("inner", func(context.Context, refengine.State) (refengine.Update, error) {
			return refengine.Update{"log": []any{"inner"}}, nil
		}).AddEdge(refengine.Start, "inner"), refengine.CompileOptions{})
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("fail", func(context.Context, refengine.State) (refengine.Update, error) {
			return nil, errors.New("boom")
		}).
		AddSubgraph("sub", child).
		AddEdge(refengine.Start, "fail").AddEdge(refengine.Start, "sub"),
		refengine.CompileOptions{Saver: s})
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync}
	if _, err := g.Invoke(ctx, refengine.State{}, cfg); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Invoke: %v, want fail's error", err)
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range snap.Tasks {
		if task.Name == "sub" && !strings.Contains(task.Error, refengine.ErrSiblingFailed.Error()) {
			t.Errorf("sub's saved error %q, want the cancellation by its sibling", task.Error)
		}
	}
	n := 0
	for _, err := range s.List(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d checkpoints, want the root's 2 (the subgraph never started)", n)
	}
}
