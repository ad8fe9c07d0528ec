package enginetest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The Go sides of the TestAgainstLangGraphJS scenarios of issue 13's engine
// features (their JS sides are in bridge/js/scenarios/features.js).
func init() {
	for name, run := range map[string]func(context.Context, spec.Saver) error{
		"command_node":              commandNodeRun,
		"update_copy_bulk":          updateCopyBulkRun,
		"subgraph_in_node":          subgraphInNodeRun,
		"subgraph_in_node_resume":   subgraphInNodeResumeRun,
		"parallel_resume":           parallelResumeRun,
		"command_send":              commandSendRun,
		"parallel_subgraph_resume":  parallelSubgraphResumeRun,
		"subgraph_in_node_stateful": subgraphInNodeStatefulRun,
	} {
		lgjsOnly[name] = run
	}
}

// commandNodeRun: START -> router, which returns a Command going to left or
// right by q and updating log and q, twice (L, then R).
func commandNodeRun(ctx context.Context, rec spec.Saver) error {
	g, err := logGraph().
		AddCommandNode("router", func(_ context.Context, st refengine.State) (refengine.Command, error) {
			to := "right"
			if st["q"] == "L" {
				to = "left"
			}
			return refengine.Command{Goto: []string{to}, Update: map[string]any{"log": []any{"router"}, "q": "routed:" + st["q"].(string)}}, nil
		}).
		AddNode("left", logNode("left")).
		AddNode("right", logNode("right")).
		AddEdge(refengine.Start, "router").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	for _, q := range []string{"L", "R"} {
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": q}, lgjsRun("engine-command-node", refengine.DurabilitySync)); err != nil {
			return err
		}
	}
	return nil
}

// commandSendRun: router returns a Command with two Sends to w and an
// update; each w logs its item.
func commandSendRun(ctx context.Context, rec spec.Saver) error {
	g, err := logGraph().
		AddCommandNode("router", func(context.Context, refengine.State) (refengine.Command, error) {
			return refengine.Command{
				Sends:  []refengine.Send{{Node: "w", Arg: refengine.State{"item": "x"}}, {Node: "w", Arg: refengine.State{"item": "y"}}},
				Update: map[string]any{"log": []any{"router"}},
			}, nil
		}).
		AddNode("w", func(_ context.Context, st refengine.State) (refengine.Update, error) {
			return refengine.Update{"log": []any{fmt.Sprint("w:", st["item"])}}, nil
		}).
		AddEdge(refengine.Start, "router").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	_, err = g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-command-send", refengine.DurabilitySync))
	return err
}

// updateCopyBulkRun: the linear graph, then a bulk update of its step-0
// checkpoint (next: a): a copy superstep, then a superstep updating the
// copy as a; the run continues from the update.
func updateCopyBulkRun(ctx context.Context, rec spec.Saver) error {
	g, cfg, hist, err := linearHistory(ctx, rec, "engine-copy-bulk")
	if err != nil {
		return err
	}
	at := stepZero(cfg, hist)
	out, err := g.BulkUpdateState(ctx, at,
		[]refengine.StateUpdate{{AsNode: refengine.CopyNode}},
		[]refengine.StateUpdate{{Values: refengine.Update{"log": []any{"a*"}}, AsNode: "a"}})
	if err != nil {
		return err
	}
	at.CheckpointID = out.CheckpointID
	_, err = g.Invoke(ctx, nil, at)
	return err
}

// callerGraph is START -> caller -> after, where caller invokes first and
// then second from its node function and logs what they logged.
func callerGraph(rec spec.Saver, first, second *refengine.Graph) (*refengine.Graph, error) {
	return logGraph().
		AddNode("caller", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			a, err := first.InvokeFromNode(ctx, refengine.State{"log": []any{}, "q": "first"})
			if err != nil {
				return nil, err
			}
			b, err := second.InvokeFromNode(ctx, refengine.State{"log": []any{}, "q": "second"})
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": append(a["log"].([]any), b["log"].([]any)...)}, nil
		}).
		AddNode("after", logNode("after")).
		AddEdge(refengine.Start, "caller").AddEdge("caller", "after").
		Compile(refengine.CompileOptions{Saver: rec})
}

// innerGraph is START -> inner, logging "inner:<q>".
func innerGraph() (*refengine.Graph, error) {
	return logGraph().
		AddNode("inner", func(_ context.Context, st refengine.State) (refengine.Update, error) {
			return refengine.Update{"log": []any{fmt.Sprint("inner:", st["q"])}}, nil
		}).
		AddEdge(refengine.Start, "inner").
		Compile(refengine.CompileOptions{})
}

// askGraph is START -> ask, logging "ask:<q>:<answer>" after
// Interrupt("?").
func askGraph() (*refengine.Graph, error) {
	return logGraph().
		AddNode("ask", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
			answer, err := refengine.Interrupt(ctx, "?")
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": []any{fmt.Sprint("ask:", st["q"], ":", answer)}}, nil
		}).
		AddEdge(refengine.Start, "ask").
		Compile(refengine.CompileOptions{})
}

// subgraphInNodeRun: a node invoking a subgraph twice (namespaces
// caller:<task> and caller:<task>|1), run twice on one thread.
func subgraphInNodeRun(ctx context.Context, rec spec.Saver) error {
	inner, err := innerGraph()
	if err != nil {
		return err
	}
	g, err := callerGraph(rec, inner, inner)
	if err != nil {
		return err
	}
	for range 2 {
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-subgraph-in-node", refengine.DurabilitySync)); err != nil {
			return err
		}
	}
	return nil
}

// subgraphInNodeStatefulRun: a node invoking a stateful subgraph twice per
// run, run twice: the calls run in namespaces "caller" and "caller|1" (the
// recast task namespace, then the counter level), each a lineage that
// continues across runs.
func subgraphInNodeStatefulRun(ctx context.Context, rec spec.Saver) error {
	counter, err := refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("seen", refengine.Reducer(refengine.AppendList, []any{})).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("count", func(_ context.Context, st refengine.State) (refengine.Update, error) {
			return refengine.Update{"seen": []any{st["q"]}, "log": []any{fmt.Sprint("count:", len(st["seen"].([]any))+1)}}, nil
		}).
		AddEdge(refengine.Start, "count").
		Compile(refengine.CompileOptions{Stateful: true})
	if err != nil {
		return err
	}
	g, err := callerGraph(rec, counter, counter)
	if err != nil {
		return err
	}
	for range 2 {
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-subgraph-in-node-stateful", refengine.DurabilitySync)); err != nil {
			return err
		}
	}
	return nil
}

// subgraphInNodeResumeRun: the second subgraph call interrupts; the resume
// re-runs the node: the first call finds its finished lineage, the second
// resumes in its own. Then a replay from the checkpoint before caller:
// both calls start over (the first through the replay lookup), the second
// interrupts again and is resumed.
func subgraphInNodeResumeRun(ctx context.Context, rec spec.Saver) error {
	inner, err := innerGraph()
	if err != nil {
		return err
	}
	ask, err := askGraph()
	if err != nil {
		return err
	}
	g, err := callerGraph(rec, inner, ask)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-subgraph-in-node-resume", refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); err != nil {
		return err
	}
	if _, err := g.Invoke(ctx, refengine.Command{Resume: "ok"}, cfg); err != nil {
		return err
	}
	var ids []string
	for tup, err := range rec.(interface{ Unwrap() spec.Saver }).Unwrap().List(ctx, spec.ListOptions{ThreadID: cfg.ThreadID, Namespace: ""}) {
		if err != nil {
			return err
		}
		ids = append(ids, tup.Config.CheckpointID)
	}
	at := cfg
	at.CheckpointID = ids[len(ids)-2] // step 0: next caller
	if _, err := g.Invoke(ctx, nil, at); err != nil {
		return err
	}
	_, err = g.Invoke(ctx, refengine.Command{Resume: "again"}, cfg)
	return err
}

// parallelResumeRun: START -> (a, b), both interrupting in one superstep;
// resumed by interrupt ID: first a alone (b interrupts again), then b.
func parallelResumeRun(ctx context.Context, rec spec.Saver) error {
	ask := func(name string) refengine.NodeFunc {
		return func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			v, err := refengine.Interrupt(ctx, "question for "+name)
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": []any{fmt.Sprint(name, ":", v)}}, nil
		}
	}
	g, err := logGraph().
		AddNode("a", ask("a")).AddNode("b", ask("b")).
		AddEdge(refengine.Start, "a").AddEdge(refengine.Start, "b").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-parallel-resume", refengine.DurabilitySync)
	res, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg)
	if err != nil {
		return err
	}
	id := map[any]string{}
	for _, in := range res.Interrupts {
		id[in.Value] = in.ID
	}
	if len(id) != 2 {
		return fmt.Errorf("interrupts %v, want two", res.Interrupts)
	}
	if _, err := g.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{id["question for a"]: "x"}}, cfg); err != nil {
		return err
	}
	res, err = g.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{id["question for b"]: "y"}}, cfg)
	if err == nil && fmt.Sprint(res.Values["log"]) != "[a:x b:y]" {
		err = fmt.Errorf("log = %v, want [a:x b:y]", res.Values["log"])
	}
	return err
}

// parallelSubgraphResumeRun: two Send tasks each run a subgraph that
// interrupts; resumed by interrupt ID, one at a time.
func parallelSubgraphResumeRun(ctx context.Context, rec spec.Saver) error {
	child, err := askWhoChild()
	if err != nil {
		return err
	}
	root, err := sendRoot(rec, child)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-parallel-subgraph-resume", refengine.DurabilitySync)
	res, err := root.Invoke(ctx, refengine.State{"answers": []any{}}, cfg)
	if err != nil {
		return err
	}
	id := map[any]string{}
	for _, in := range res.Interrupts {
		id[in.Value] = in.ID
	}
	for _, who := range []string{"A", "B"} {
		if res, err = root.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{id["question for "+who]: strings.ToLower(who)}}, cfg); err != nil {
			return err
		}
	}
	if fmt.Sprint(res.Values["answers"]) != "[A:a B:b]" {
		return fmt.Errorf("answers = %v, want [A:a B:b]", res.Values["answers"])
	}
	return nil
}
