package enginetest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// lgjsOnly are the Go sides of the TestAgainstLangGraphJS scenarios that are
// not enginetest scenarios: each drives refengine through rec the way the
// JS scenario of the same name (bridge/js/scenarios/scenarios.js) drives
// LangGraph.js.
var lgjsOnly = map[string]func(ctx context.Context, rec spec.Saver) error{
	"conditional":      conditionalRun,
	"fanout_fanin":     fanoutFaninRun,
	"exit_linear":      exitLinearRun,
	"state_history":    stateHistoryRun,
	"failure_retry":    failureRetryRun,
	"failure_siblings": failureSiblingsRun,
	"subgraph_node":    subgraphNodeRun,
	"update_copy":      updateCopyRun,
}

// conditionalRun: START -> route (by q) -> left | right, twice.
func conditionalRun(ctx context.Context, rec spec.Saver) error {
	g, err := logGraph().
		AddNode("route", logNode("route")).
		AddNode("left", logNode("left")).
		AddNode("right", logNode("right")).
		AddEdge(refengine.Start, "route").
		AddConditionalEdges("route", func(_ context.Context, st refengine.State) (refengine.Route, error) {
			if st["q"] == "L" {
				return refengine.Route{Nodes: []string{"left"}}, nil
			}
			return refengine.Route{Nodes: []string{"right"}}, nil
		}).
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	for _, q := range []string{"L", "R"} {
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": q}, lgjsRun("engine-cond", refengine.DurabilitySync)); err != nil {
			return err
		}
	}
	return nil
}

// fanoutFaninRun: START -> a -> (b, c) -> d (join), log reducer.
func fanoutFaninRun(ctx context.Context, rec spec.Saver) error {
	g, err := logGraph().
		AddNode("a", logNode("a")).AddNode("b", logNode("b")).AddNode("c", logNode("c")).AddNode("d", logNode("d")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b").AddEdge("a", "c").
		AddJoin([]string{"b", "c"}, "d").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	_, err = g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-fan", refengine.DurabilitySync))
	return err
}

// exitLinearRun: the linear graph with exit durability, twice.
func exitLinearRun(ctx context.Context, rec spec.Saver) error {
	g, err := linearGraph(rec)
	if err != nil {
		return err
	}
	for range 2 {
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-exit-linear", refengine.DurabilityExit)); err != nil {
			return err
		}
	}
	return nil
}

// stateHistoryRun: the linear graph, then its state history, all of it
// and filtered by source "loop" with a limit of 2.
func stateHistoryRun(ctx context.Context, rec spec.Saver) error {
	g, cfg, _, err := linearHistory(ctx, rec, "engine-history")
	if err != nil {
		return err
	}
	_, err = g.History(ctx, cfg, refengine.HistoryOptions{Filter: spec.Metadata{"source": "loop"}, Limit: 2})
	return err
}

// failureRetryRun: START -> a -> b where b fails on its first run; the
// retry (invoke with no input) runs b again.
func failureRetryRun(ctx context.Context, rec spec.Saver) error {
	failed := false
	g, err := logGraph().
		AddNode("a", logNode("a")).
		AddNode("b", func(context.Context, refengine.State) (refengine.Update, error) {
			if !failed {
				failed = true
				return nil, errors.New("boom")
			}
			return refengine.Update{"log": []any{"b"}}, nil
		}).
		AddEdge(refengine.Start, "a").AddEdge("a", "b").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-retry", refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); err == nil {
		return errors.New("b did not fail")
	}
	_, err = g.Invoke(ctx, nil, cfg)
	return err
}

// failureSiblingsRun: START -> (two, one) where two fails on its first
// run. two comes first in task order, so in deterministic mode one runs
// after the failure, with its context cancelled (ErrSiblingFailed); it
// finishes anyway, so its writes are saved and the retry restores them and
// runs only two again.
func failureSiblingsRun(ctx context.Context, rec spec.Saver) error {
	failed := false
	g, err := logGraph().
		AddNode("two", func(context.Context, refengine.State) (refengine.Update, error) {
			if !failed {
				failed = true
				return nil, errors.New("boom")
			}
			return refengine.Update{"log": []any{"two"}}, nil
		}).
		AddNode("one", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			if context.Cause(ctx) != refengine.ErrSiblingFailed {
				return nil, errors.New("one was not cancelled by two's failure")
			}
			return refengine.Update{"log": []any{"one"}}, nil
		}).
		AddEdge(refengine.Start, "one").AddEdge(refengine.Start, "two").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-siblings-fail", refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); err == nil || err.Error() != `refengine: node "two" failed: boom` {
		return fmt.Errorf("first run: %v, want two's failure", err)
	}
	_, err = g.Invoke(ctx, nil, cfg)
	return err
}

// subgraphNodeRun: START -> sub (a per-invocation subgraph START -> inner)
// -> after, twice.
func subgraphNodeRun(ctx context.Context, rec spec.Saver) error {
	child, err := logGraph().AddNode("inner", logNode("inner")).AddEdge(refengine.Start, "inner").
		Compile(refengine.CompileOptions{})
	if err != nil {
		return err
	}
	g, err := subgraphGraph(rec, child)
	if err != nil {
		return err
	}
	for range 2 {
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-subgraph-node", refengine.DurabilitySync)); err != nil {
			return err
		}
	}
	return nil
}

// updateCopyRun: the linear graph, then UpdateState(__copy__) of its
// second checkpoint, and a run continuing from the copy.
func updateCopyRun(ctx context.Context, rec spec.Saver) error {
	g, cfg, hist, err := linearHistory(ctx, rec, "engine-copy")
	if err != nil {
		return err
	}
	at := stepZero(cfg, hist)
	cp, err := g.UpdateState(ctx, at, nil, refengine.CopyNode)
	if err != nil {
		return err
	}
	at.CheckpointID = cp.CheckpointID
	_, err = g.Invoke(ctx, nil, at)
	return err
}

// recordOnly runs a lgjsOnly scenario on rec and returns its calls.
func recordOnly(ctx context.Context, run func(context.Context, spec.Saver) error, rec *trace.Recorder) ([]trace.Call, error) {
	if err := run(ctx, rec); err != nil {
		return nil, err
	}
	return rec.Calls(), nil
}
