package refengine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// logChild is START -> inner, appending "inner:<q>" to log; stateful makes
// it a CompileOptions.Stateful subgraph.
func logChild(t *testing.T, runs *counter, stateful bool) *refengine.Graph {
	t.Helper()
	return compile(t, refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("inner", func(_ context.Context, st refengine.State) (refengine.Update, error) {
			runs.n["inner"].Add(1)
			return refengine.Update{"log": []any{fmt.Sprint("inner:", st["q"])}}, nil
		}).
		AddEdge(refengine.Start, "inner"), refengine.CompileOptions{Stateful: stateful})
}

// callerOf is START -> caller, whose function invokes each child in turn
// and logs what they returned.
func callerOf(t *testing.T, s spec.Saver, children ...*refengine.Graph) *refengine.Graph {
	t.Helper()
	return compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("caller", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			var log []any
			for i, c := range children {
				out, err := c.InvokeFromNode(ctx, refengine.State{"q": fmt.Sprint(i)})
				if err != nil {
					return nil, err
				}
				log = append(log, out["log"].([]any)...)
			}
			return refengine.Update{"log": log}, nil
		}).
		AddEdge(refengine.Start, "caller"), refengine.CompileOptions{Saver: s})
}

// Calls from one task run in the task's namespace, then "|1", "|2" (the
// task's subgraph counter, pregel-semantics §2.2, §5.1): one checkpoint
// lineage each, all with parents {"": the root checkpoint the task was
// prepared from}. A stateful child runs in the recast namespace, the
// calling node's name, then "|1", "|2", and keeps its state across runs.
func TestInvokeFromNodeNamespaces(t *testing.T) {
	for _, stateful := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateful=%v", stateful), func(t *testing.T) {
			ctx := context.Background()
			s := memory.New()
			runs := newCounter("inner")
			child := logChild(t, runs, stateful)
			g := callerOf(t, s, child, child, child)
			cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
			for run := range 2 {
				res, err := g.Invoke(ctx, refengine.State{}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				got := res.Values["log"].([]any)
				if !stateful && len(got) != 3*(run+1) {
					t.Errorf("run %d: log = %v", run, got)
				}
			}
			byNS := map[string][]*spec.Tuple{}
			for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true}) {
				if err != nil {
					t.Fatal(err)
				}
				byNS[tup.Config.Namespace] = append(byNS[tup.Config.Namespace], tup)
			}
			root := history(t, s, "t", "")
			var nss []string
			for ns, tups := range byNS {
				if ns == "" {
					continue
				}
				nss = append(nss, ns)
				for _, tup := range tups {
					parents, _ := tup.Metadata["parents"].(map[string]any)
					if len(parents) != 1 || !slices.ContainsFunc(root, func(r *spec.Tuple) bool { return r.Config.CheckpointID == parents[""] }) {
						t.Errorf("ns %q: parents %v, want {\"\": a root checkpoint}", ns, parents)
					}
				}
			}
			slices.Sort(nss)
			if stateful {
				// The counter level follows the recast namespace; each call's
				// lineage continues across runs: 2 runs x (input + 2 loop).
				if !slices.Equal(nss, []string{"caller", "caller|1", "caller|2"}) {
					t.Fatalf("namespaces %q, want [caller caller|1 caller|2]", nss)
				}
				for _, ns := range nss {
					if n := len(byNS[ns]); n != 6 {
						t.Errorf("%d checkpoints in %s, want 6", n, ns)
					}
				}
				return
			}
			if len(nss) != 6 {
				t.Fatalf("namespaces %q, want 2 runs x 3 calls", nss)
			}
			levels := map[string]int{}
			for _, ns := range nss {
				if !strings.HasPrefix(ns, "caller:") || spec.RecastNamespace(ns) != "caller" {
					t.Errorf("namespace %q does not recast to caller", ns)
				}
				base, n, _ := strings.Cut(ns, spec.NSSep)
				levels[base] += 1
				if n != "" && n != "1" && n != "2" {
					t.Errorf("namespace %q: counter level %q", ns, n)
				}
				if got := len(byNS[ns]); got != 3 {
					t.Errorf("ns %q: %d checkpoints, want 3", ns, got)
				}
			}
			for base, n := range levels {
				if n != 3 {
					t.Errorf("task namespace %s has %d lineages, want 3", base, n)
				}
			}
		})
	}
}

// An interrupt in the second call bubbles up; on resume the node runs
// again: the first call finds its finished lineage (inner does not run
// again) and the second resumes in "|1". A node that drops the error
// fails with ErrInterruptSwallowed.
func TestInvokeFromNodeInterrupt(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("inner", "ask")
	ask := compile(t, refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("ask", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			runs.n["ask"].Add(1)
			v, err := refengine.Interrupt(ctx, "?")
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": []any{v}}, nil
		}).AddEdge(refengine.Start, "ask"), refengine.CompileOptions{})
	g := callerOf(t, s, logChild(t, runs, false), ask)
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
	res, err := g.Invoke(ctx, refengine.State{}, cfg)
	if err != nil || !res.Interrupted || len(res.Interrupts) != 1 {
		t.Fatalf("first run: %+v, %v; want one interrupt", res, err)
	}
	res, err = g.Invoke(ctx, refengine.Command{Resume: "yes"}, cfg)
	if err != nil || res.Interrupted {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if got := res.Values["log"].([]any); !slices.Equal(got, []any{"inner:0", "yes"}) {
		t.Errorf("log = %v, want [inner:0 yes]", got)
	}
	if runs.get("inner") != 1 || runs.get("ask") != 2 {
		t.Errorf("inner ran %d times, ask %d; want 1, 2", runs.get("inner"), runs.get("ask"))
	}

	swallow := compile(t, refengine.NewStateGraph().AddKey("log", refengine.LastValue()).
		AddNode("caller", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			_, _ = ask.InvokeFromNode(ctx, refengine.State{})
			return nil, nil
		}).AddEdge(refengine.Start, "caller"), refengine.CompileOptions{Saver: s})
	if _, err := swallow.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t2", Deterministic: true}); !errors.Is(err, refengine.ErrInterruptSwallowed) {
		t.Errorf("swallowed subgraph interrupt: %v, want ErrInterruptSwallowed", err)
	}
	if _, err := ask.InvokeFromNode(ctx, refengine.State{}); !errors.Is(err, refengine.ErrNotInTask) {
		t.Errorf("outside a node: %v, want ErrNotInTask", err)
	}
}

// When the root replays, the first call of a task finds its state through
// the replay lookup (a List before the replayed checkpoint, pregel-semantics
// §6.4); the second call's namespace recasts to the same name, already
// visited, so it loads its latest checkpoint.
func TestInvokeFromNodeReplayLookup(t *testing.T) {
	ctx := context.Background()
	rec := trace.Record(memory.New())
	runs := newCounter("inner")
	child := logChild(t, runs, false)
	g := callerOf(t, rec, child, child)
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
	if _, err := g.Invoke(ctx, refengine.State{}, cfg); err != nil {
		t.Fatal(err)
	}
	hs := history(t, rec, "t", "")
	at := cfg
	at.CheckpointID = hs[1].Config.CheckpointID // step 0: next caller
	rec.Reset()
	if _, err := g.Invoke(ctx, nil, at); err != nil {
		t.Fatal(err)
	}
	var lists, gets []string
	for _, c := range rec.Calls() {
		switch {
		case c.Method == trace.MethodList && c.List.Namespace != "":
			if c.List.Before != at.CheckpointID || c.List.Limit != 1 {
				t.Errorf("replay lookup %+v, want before %s, limit 1", c.List, at.CheckpointID)
			}
			lists = append(lists, c.List.Namespace)
		case c.Method == trace.MethodGetTuple && c.Config.Namespace != "":
			gets = append(gets, c.Config.Namespace)
		}
	}
	if len(lists) != 1 || len(gets) != 1 || gets[0] != lists[0]+"|1" {
		t.Errorf("lookups: List %q, GetTuple %q; want List of the task's namespace, GetTuple of its |1", lists, gets)
	}
	if runs.get("inner") != 4 {
		t.Errorf("inner ran %d times, want 4 (fresh lineages after the fork)", runs.get("inner"))
	}
}

// With exit durability a subgraph called from a node saves nothing when it
// finishes in a task namespace, and saves once at exit in a recast one
// (pregel-semantics §5.4, last item).
func TestInvokeFromNodeExitDurability(t *testing.T) {
	for _, tc := range []struct {
		stateful bool
		want     int // checkpoints outside the root namespace
	}{{false, 0}, {true, 2}} {
		t.Run(fmt.Sprintf("stateful=%v", tc.stateful), func(t *testing.T) {
			ctx := context.Background()
			s := memory.New()
			child := logChild(t, newCounter("inner"), tc.stateful)
			g := callerOf(t, s, child, child)
			cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilityExit}
			if _, err := g.Invoke(ctx, refengine.State{}, cfg); err != nil {
				t.Fatal(err)
			}
			n := 0
			for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true}) {
				if err != nil {
					t.Fatal(err)
				}
				if tup.Config.Namespace != "" {
					n++
				}
			}
			if n != tc.want || len(history(t, s, "t", "")) != 1 {
				t.Errorf("%d subgraph checkpoints, %d root ones; want %d, 1", n, len(history(t, s, "t", "")), tc.want)
			}
		})
	}
}
