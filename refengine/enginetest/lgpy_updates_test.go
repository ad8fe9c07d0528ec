package enginetest_test

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The Go sides of the scenarios of bridge/python/scenarios/updates.py:
// UpdateState as the graph's input and as End.
func init() {
	for name, run := range map[string]func(context.Context, spec.Saver) error{
		"update_as_input":         updateAsInputRun,
		"update_as_input_fresh":   updateAsInputFreshRun,
		"update_as_end":           updateAsEndRun,
		"interrupt_twice_by_id":   interruptTwiceByIDRun,
		"stateful_subgraph_state": statefulSubgraphStateRun,
	} {
		lgpyOnly[name] = run
	}
}

// stoppedChain is START -> s1 -> s2 -> s3 (nodes writing nothing) stopped
// before s2, after a run on thread.
func stoppedChain(ctx context.Context, rec spec.Saver, thread string) (*refengine.Graph, refengine.RunConfig, error) {
	noop := func(context.Context, refengine.State) (refengine.Update, error) { return nil, nil }
	g, err := refengine.NewStateGraph().AddKey("x", refengine.LastValue()).
		AddNode("s1", noop).AddNode("s2", noop).AddNode("s3", noop).
		AddEdge(refengine.Start, "s1").AddEdge("s1", "s2").AddEdge("s2", "s3").
		Compile(refengine.CompileOptions{Saver: rec, InterruptBefore: []string{"s2"}})
	if err != nil {
		return nil, refengine.RunConfig{}, err
	}
	cfg := lgjsRun(thread, refengine.DurabilitySync)
	_, err = g.Invoke(ctx, refengine.State{"x": 1}, cfg)
	return g, cfg, err
}

func updateAsInputRun(ctx context.Context, rec spec.Saver) error {
	g, cfg, err := stoppedChain(ctx, rec, "engine-update-input")
	if err != nil {
		return err
	}
	if _, err := g.UpdateState(ctx, cfg, refengine.Update{"x": 5}, refengine.InputTask); err != nil {
		return err
	}
	_, err = g.Invoke(ctx, nil, cfg)
	return err
}

func updateAsInputFreshRun(ctx context.Context, rec spec.Saver) error {
	g, err := linearGraph(rec)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-update-input-fresh", refengine.DurabilitySync)
	if _, err := g.UpdateState(ctx, cfg, refengine.Update{"log": []any{"x"}, "q": "hi"}, refengine.InputTask); err != nil {
		return err
	}
	res, err := g.Invoke(ctx, nil, cfg)
	if err == nil && fmt.Sprint(res.Values["log"]) != "[x a b]" {
		err = fmt.Errorf("log = %v", res.Values["log"])
	}
	return err
}

func updateAsEndRun(ctx context.Context, rec spec.Saver) error {
	g, cfg, err := stoppedChain(ctx, rec, "engine-update-end")
	if err != nil {
		return err
	}
	if _, err := g.UpdateState(ctx, cfg, nil, refengine.End); err != nil {
		return err
	}
	_, err = g.GetState(ctx, cfg, refengine.StateOptions{})
	return err
}

// interruptTwiceByIDRun: a node interrupting twice, answered by resume maps
// keyed by each interrupt's own ID.
func interruptTwiceByIDRun(ctx context.Context, rec spec.Saver) error {
	g, err := logGraph().
		AddNode("ask", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			first, err := refengine.Interrupt(ctx, "one?")
			if err != nil {
				return nil, err
			}
			second, err := refengine.Interrupt(ctx, "two?")
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": []any{fmt.Sprint(first, ",", second)}}, nil
		}).
		AddEdge(refengine.Start, "ask").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-interrupt-twice-by-id", refengine.DurabilitySync)
	res, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg)
	for _, answer := range []string{"A", "B"} {
		if err != nil {
			return err
		}
		res, err = g.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{res.Interrupts[0].ID: answer}}, cfg)
	}
	if err == nil && fmt.Sprint(res.Values["log"]) != "[A,B]" {
		err = fmt.Errorf("log = %v", res.Values["log"])
	}
	return err
}

// statefulSubgraphStateRun: a stateful subgraph node that interrupts, its
// state read through GetState with Subgraphs, then a resume.
func statefulSubgraphStateRun(ctx context.Context, rec spec.Saver) error {
	child, err := logGraph().
		AddNode("x", logNode("x")).
		AddNode("ask", askNode("ask:")).
		AddEdge(refengine.Start, "x").AddEdge("x", "ask").
		Compile(refengine.CompileOptions{Stateful: true})
	if err != nil {
		return err
	}
	g, err := logGraph().AddSubgraph("sub", child).AddEdge(refengine.Start, "sub").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-stateful-subgraph-state", refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); err != nil {
		return err
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{Subgraphs: true})
	if err != nil {
		return err
	}
	if len(snap.Tasks) != 1 || snap.Tasks[0].State == nil || snap.Tasks[0].State.Config.Namespace != "sub" {
		return fmt.Errorf("subgraph state not read from namespace sub: %+v", snap.Tasks)
	}
	_, err = g.Invoke(ctx, refengine.Command{Resume: "ok"}, cfg)
	return err
}
