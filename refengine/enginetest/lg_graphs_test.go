package enginetest_test

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The graph builders the Go sides of the LangGraph.js scenarios
// (lgjs_*_test.go) and the LangGraph Python scenarios (lgpy_*_test.go)
// share: most scenarios run on a graph with a last-value key q and an
// appended list log, whose nodes log their names.

// logNode is a node that appends its name to log.
func logNode(name string) refengine.NodeFunc {
	return func(context.Context, refengine.State) (refengine.Update, error) {
		return refengine.Update{"log": []any{name}}, nil
	}
}

// logGraph is a graph builder with the keys q (last value) and log (an
// appended list).
func logGraph() *refengine.StateGraph {
	return refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{}))
}

// lgjsRun is the deterministic run configuration of thread with
// durability d, as both comparisons use it.
func lgjsRun(thread string, d refengine.Durability) refengine.RunConfig {
	return refengine.RunConfig{ThreadID: thread, Durability: d, Deterministic: true}
}

// askNode is a node that interrupts with "?" and then appends prefix and
// the resume value to log.
func askNode(prefix string) refengine.NodeFunc {
	return func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
		v, err := refengine.Interrupt(ctx, "?")
		if err != nil {
			return nil, err
		}
		return refengine.Update{"log": []any{fmt.Sprint(prefix, v)}}, nil
	}
}

// linearGraph is the linear graph START -> a -> b, checkpointed to rec.
func linearGraph(rec spec.Saver) (*refengine.Graph, error) {
	return logGraph().
		AddNode("a", logNode("a")).AddNode("b", logNode("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b").
		Compile(refengine.CompileOptions{Saver: rec})
}

// linearHistory runs linearGraph once on thread (durability sync, q "hi")
// and returns the graph, the run's configuration and the thread's whole
// history, newest first.
func linearHistory(ctx context.Context, rec spec.Saver, thread string) (*refengine.Graph, refengine.RunConfig, []*refengine.Snapshot, error) {
	g, err := linearGraph(rec)
	if err != nil {
		return nil, refengine.RunConfig{}, nil, err
	}
	cfg := lgjsRun(thread, refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); err != nil {
		return nil, refengine.RunConfig{}, nil, err
	}
	hist, err := g.History(ctx, cfg, refengine.HistoryOptions{})
	if err != nil {
		return nil, refengine.RunConfig{}, nil, err
	}
	return g, cfg, hist, nil
}

// stepZero addresses cfg to the step-0 checkpoint (next: a) of a
// linearHistory.
func stepZero(cfg refengine.RunConfig, hist []*refengine.Snapshot) refengine.RunConfig {
	cfg.CheckpointID = hist[len(hist)-2].Config.CheckpointID
	return cfg
}

// subgraphGraph is START -> sub -> after, sub the subgraph node running
// child, checkpointed to rec.
func subgraphGraph(rec spec.Saver, child *refengine.Graph) (*refengine.Graph, error) {
	return logGraph().
		AddSubgraph("sub", child).AddNode("after", logNode("after")).
		AddEdge(refengine.Start, "sub").AddEdge("sub", "after").
		Compile(refengine.CompileOptions{Saver: rec})
}

// askWhoChild is START -> ask, a subgraph with the keys who and answers
// that interrupts with "question for <who>" and answers "<who>:<resume
// value>".
func askWhoChild() (*refengine.Graph, error) {
	return refengine.NewStateGraph().
		AddKey("who", refengine.LastValue()).
		AddKey("answers", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("ask", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
			v, err := refengine.Interrupt(ctx, fmt.Sprint("question for ", st["who"]))
			if err != nil {
				return nil, err
			}
			return refengine.Update{"answers": []any{fmt.Sprint(st["who"], ":", v)}}, nil
		}).
		AddEdge(refengine.Start, "ask").
		Compile(refengine.CompileOptions{})
}

// sendRoot is START -> plan, which sends {who: A} and {who: B} to the
// subgraph node sub running child.
func sendRoot(rec spec.Saver, child *refengine.Graph) (*refengine.Graph, error) {
	return refengine.NewStateGraph().
		AddKey("answers", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("plan", func(context.Context, refengine.State) (refengine.Update, error) { return nil, nil }).
		AddSubgraph("sub", child).
		AddEdge(refengine.Start, "plan").
		AddConditionalEdges("plan", func(context.Context, refengine.State) (refengine.Route, error) {
			return refengine.Route{Sends: []refengine.Send{{Node: "sub", Arg: refengine.State{"who": "A"}}, {Node: "sub", Arg: refengine.State{"who": "B"}}}}, nil
		}).
		Compile(refengine.CompileOptions{Saver: rec})
}
