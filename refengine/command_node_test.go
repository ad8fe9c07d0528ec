package refengine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// A node returning a Command writes its update, then a branch:to:X write
// (value None) per goto, as a conditional edge does (pregel-semantics §4.8).
func TestCommandNode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cmd     refengine.Command
		wantErr error
		wantLog []any
		wantCh  []string // channels of the router's writes
	}{
		{"goto and update", refengine.Command{Goto: []string{"b"}, Update: map[string]any{"q": "to b"}},
			nil, []any{"router", "b"}, []string{"log", "q", "branch:to:b"}},
		{"two gotos", refengine.Command{Goto: []string{"b", "c"}},
			nil, []any{"router", "b", "c"}, []string{"log", "branch:to:b", "branch:to:c"}},
		{"goto end", refengine.Command{Goto: []string{refengine.End}, Update: map[string]any{"q": "done"}},
			nil, []any{"router"}, []string{"log", "q"}},
		{"update only", refengine.Command{Update: map[string]any{"log": []any{"extra"}}},
			nil, []any{"extra"}, []string{"log"}},
		{"sends", refengine.Command{Goto: []string{"c"}, Sends: []refengine.Send{{Node: "b", Arg: refengine.State{}}, {Node: "b", Arg: refengine.State{}}}},
			nil, []any{"router", "c", "b", "b"}, []string{"log", "branch:to:c", "__pregel_tasks", "__pregel_tasks"}},
		{"goto unknown node", refengine.Command{Goto: []string{"nope"}}, refengine.ErrInvalidGraph, nil, nil},
		{"send to unknown node", refengine.Command{Sends: []refengine.Send{{Node: "nope"}}}, refengine.ErrInvalidGraph, nil, nil},
		{"goto start", refengine.Command{Goto: []string{refengine.Start}}, refengine.ErrInvalidGraph, nil, nil},
		{"resume from a node", refengine.Command{Resume: "x"}, refengine.ErrInvalidUpdate, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rec := trace.Record(memory.New())
			runs := newCounter("b", "c")
			g := compile(t, refengine.NewStateGraph().
				AddKey("q", refengine.LastValue()).
				AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
				AddCommandNode("router", func(context.Context, refengine.State) (refengine.Command, error) {
					cmd := tc.cmd
					cmd.Update = map[string]any{"log": []any{"router"}}
					for k, v := range tc.cmd.Update {
						cmd.Update[k] = v
					}
					return cmd, nil
				}).
				AddNode("b", runs.logNode("b")).AddNode("c", runs.logNode("c")).
				AddEdge(refengine.Start, "router"),
				refengine.CompileOptions{Saver: rec})
			res, err := g.Invoke(ctx, refengine.State{"q": "hi"}, refengine.RunConfig{ThreadID: "t", Deterministic: true})
			if tc.wantErr != nil {
				var te *refengine.TaskError
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &te) || te.Node != "router" {
					t.Fatalf("Invoke: %v, want router's TaskError wrapping %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Values["log"]; !slices.Equal(got.([]any), tc.wantLog) {
				t.Errorf("log = %v, want %v", got, tc.wantLog)
			}
			if q, ok := tc.cmd.Update["q"]; ok && res.Values["q"] != q {
				t.Errorf("q = %v, want %v", res.Values["q"], q)
			}
			var chans []string
			for _, c := range rec.Calls() {
				if c.Method == trace.MethodPutWrites && c.TaskPath == "~__pregel_pull, router" {
					for _, w := range c.Writes {
						chans = append(chans, w.Channel)
						if strings.HasPrefix(w.Channel, "branch:to:") && w.Value != nil {
							t.Errorf("goto write %s = %v, want nil", w.Channel, w.Value)
						}
					}
				}
			}
			if !slices.Equal(chans, tc.wantCh) {
				t.Errorf("router's writes on %v, want %v", chans, tc.wantCh)
			}
		})
	}
}

// UpdateState as a Command node writes its values and its static edges
// only: gotos are the node function's.
func TestCommandNodeUpdateState(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	g := compile(t, refengine.NewStateGraph().AddKey("q", refengine.LastValue()).
		AddCommandNode("router", func(context.Context, refengine.State) (refengine.Command, error) {
			return refengine.Command{Goto: []string{"b"}}, nil
		}).
		AddNode("b", func(context.Context, refengine.State) (refengine.Update, error) { return nil, nil }).
		AddEdge(refengine.Start, "router"), refengine.CompileOptions{Saver: s})
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
	if _, err := g.Invoke(ctx, refengine.State{"q": "hi"}, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := g.UpdateState(ctx, cfg, refengine.Update{"q": "x"}, "router"); err != nil {
		t.Fatal(err)
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil || snap.Values["q"] != "x" || len(snap.Next) != 0 {
		t.Fatalf("after update: %+v, %v", snap, err)
	}
}

// Invoke with a Command's Sends writes them as null-task __pregel_tasks
// writes (pregel-semantics §2.3 item 2) and runs their PUSH tasks.
func TestCommandSendsOnInvoke(t *testing.T) {
	ctx := context.Background()
	runs := newCounter("w")
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("w", func(_ context.Context, st refengine.State) (refengine.Update, error) {
			runs.n["w"].Add(1)
			return refengine.Update{"log": []any{st["item"]}}, nil
		}).
		AddEdge(refengine.Start, "w"), refengine.CompileOptions{Saver: memory.New()})
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
	if _, err := g.Invoke(ctx, refengine.State{}, cfg); err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, refengine.Command{Sends: []refengine.Send{{Node: "w", Arg: refengine.State{"item": "x"}}, {Node: "w", Arg: refengine.State{"item": "y"}}}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Values["log"].([]any); !slices.Equal(got, []any{nil, "x", "y"}) || runs.get("w") != 3 {
		t.Errorf("log = %v after %d runs of w, want [<nil> x y] after 3", got, runs.get("w"))
	}
	if _, err := g.Invoke(ctx, refengine.Command{Sends: []refengine.Send{{Node: "nope"}}}, cfg); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("send to an unknown node: %v, want ErrInvalidArgument", err)
	}
}
