package enginetest_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The Go sides of the subgraph scenarios of bridge/python/scenarios/
// subgraphs.py: Command(graph=PARENT), the state APIs on subgraphs (added
// as nodes and called from node functions), Send to subgraphs, resume
// maps and forks from the middle of a subgraph's history.
func init() {
	for name, run := range map[string]func(context.Context, spec.Saver) error{
		"command_parent":          commandParentRun,
		"command_parent_in_node":  commandParentInNodeRun,
		"subgraph_state_in_node":  subgraphStateInNodeRun,
		"subgraph_update_in_node": subgraphUpdateInNodeRun,
		"subgraph_update":         subgraphUpdateRun,
		"subgraph_fork":           subgraphForkRun,
		"send_subgraph":           sendSubgraphRun,
		"parallel_resume_all":     parallelResumeAllRun,
	} {
		lgpyOnly[name] = run
	}
}

// jumpingChild is START -> inner, which sends the parent a Command going
// to "after" and updating log.
func jumpingChild() (*refengine.Graph, error) {
	return logGraph().
		AddNode("inner", func(context.Context, refengine.State) (refengine.Update, error) {
			return nil, refengine.ToParent(refengine.Command{Goto: []string{"after"}, Update: map[string]any{"log": []any{"jump"}}})
		}).
		AddEdge(refengine.Start, "inner").
		Compile(refengine.CompileOptions{})
}

// commandParentRun: START -> child (jumpingChild as a subgraph node);
// after and other are reached by Command only.
func commandParentRun(ctx context.Context, rec spec.Saver) error {
	child, err := jumpingChild()
	if err != nil {
		return err
	}
	g, err := logGraph().
		AddSubgraph("child", child).
		AddNode("after", logNode("after")).
		AddNode("other", logNode("other")).
		AddEdge(refengine.Start, "child").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	res, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-command-parent", refengine.DurabilitySync))
	if err == nil && fmt.Sprint(res.Values["log"]) != "[jump after]" {
		err = fmt.Errorf("log = %v, want [jump after]", res.Values["log"])
	}
	return err
}

// commandParentInNodeRun: the same Command from a subgraph that the node
// function caller invokes.
func commandParentInNodeRun(ctx context.Context, rec spec.Saver) error {
	child, err := jumpingChild()
	if err != nil {
		return err
	}
	g, err := logGraph().
		AddNodeCalling("caller", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			if _, err := child.InvokeFromNode(ctx, refengine.State{"log": []any{}, "q": "x"}); err != nil {
				return nil, err
			}
			return refengine.Update{"log": []any{"unreachable"}}, nil
		}, child).
		AddNode("after", logNode("after")).
		AddEdge(refengine.Start, "caller").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	res, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-command-parent-in-node", refengine.DurabilitySync))
	if err == nil && fmt.Sprint(res.Values["log"]) != "[jump after]" {
		err = fmt.Errorf("log = %v, want [jump after]", res.Values["log"])
	}
	return err
}

// threeStepChild is START -> s1 -> s2 -> ask, logging each; ask logs
// "ask:<answer>" after an interrupt.
func threeStepChild() (*refengine.Graph, error) {
	return logGraph().
		AddNode("s1", logNode("s1")).
		AddNode("s2", logNode("s2")).
		AddNode("ask", askNode("ask:")).
		AddEdge(refengine.Start, "s1").AddEdge("s1", "s2").AddEdge("s2", "ask").
		Compile(refengine.CompileOptions{})
}

// childGraph builds a root graph around threeStepChild: START -> caller, a
// node function calling it (inNode), or START -> sub, the subgraph node.
func childGraph(rec spec.Saver, inNode bool) (*refengine.Graph, error) {
	child, err := threeStepChild()
	if err != nil {
		return nil, err
	}
	b := logGraph()
	if inNode {
		b.AddNodeCalling("caller", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			out, err := child.InvokeFromNode(ctx, refengine.State{"log": []any{}, "q": "in"})
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": out["log"]}, nil
		}, child).AddEdge(refengine.Start, "caller")
	} else {
		b.AddSubgraph("sub", child).AddEdge(refengine.Start, "sub")
	}
	return b.Compile(refengine.CompileOptions{Saver: rec})
}

// interruptedChild runs g on thread until its subgraph interrupts and
// returns the subgraph's snapshot, read through GetState with Subgraphs.
func interruptedChild(ctx context.Context, g *refengine.Graph, cfg refengine.RunConfig) (*refengine.Snapshot, error) {
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); err != nil {
		return nil, err
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{Subgraphs: true})
	if err != nil {
		return nil, err
	}
	if len(snap.Tasks) != 1 || snap.Tasks[0].State == nil {
		return nil, fmt.Errorf("no subgraph state in %+v", snap.Tasks)
	}
	return snap.Tasks[0].State, nil
}

// subgraphStateInNodeRun: GetState with Subgraphs and History of the
// interrupted subgraph a node function calls, then a resume.
func subgraphStateInNodeRun(ctx context.Context, rec spec.Saver) error {
	g, err := childGraph(rec, true)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-subgraph-state-in-node", refengine.DurabilitySync)
	sub, err := interruptedChild(ctx, g, cfg)
	if err != nil {
		return err
	}
	at := cfg
	at.Namespace = sub.Config.Namespace
	hist, err := g.History(ctx, at, refengine.HistoryOptions{})
	if err != nil {
		return err
	}
	if len(hist) != 4 {
		return fmt.Errorf("subgraph history has %d checkpoints, want 4", len(hist))
	}
	_, err = g.Invoke(ctx, refengine.Command{Resume: "ok"}, cfg)
	return err
}

// updateChildRun: UpdateState of the interrupted subgraph (as s2), then a
// resume.
func updateChildRun(ctx context.Context, rec spec.Saver, thread string, inNode bool) error {
	g, err := childGraph(rec, inNode)
	if err != nil {
		return err
	}
	cfg := lgjsRun(thread, refengine.DurabilitySync)
	sub, err := interruptedChild(ctx, g, cfg)
	if err != nil {
		return err
	}
	at := cfg
	at.Namespace, at.CheckpointID = sub.Config.Namespace, sub.Config.CheckpointID
	if _, err := g.UpdateState(ctx, at, refengine.Update{"log": []any{"patched"}}, "s2"); err != nil {
		return err
	}
	res, err := g.Invoke(ctx, refengine.Command{Resume: "ok"}, cfg)
	if err == nil && fmt.Sprint(res.Values["log"]) != "[s1 s2 patched ask:ok]" {
		err = fmt.Errorf("log = %v", res.Values["log"])
	}
	return err
}

func subgraphUpdateInNodeRun(ctx context.Context, rec spec.Saver) error {
	return updateChildRun(ctx, rec, "engine-subgraph-update-in-node", true)
}

func subgraphUpdateRun(ctx context.Context, rec spec.Saver) error {
	return updateChildRun(ctx, rec, "engine-subgraph-update", false)
}

// subgraphForkRun: an update (as s1) of the interrupted subgraph's
// checkpoint after s1, in the middle of its history; then its history.
func subgraphForkRun(ctx context.Context, rec spec.Saver) error {
	g, err := childGraph(rec, false)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-subgraph-fork", refengine.DurabilitySync)
	sub, err := interruptedChild(ctx, g, cfg)
	if err != nil {
		return err
	}
	at := cfg
	at.Namespace = sub.Config.Namespace
	hist, err := g.History(ctx, at, refengine.HistoryOptions{})
	if err != nil {
		return err
	}
	i := slices.IndexFunc(hist, func(s *refengine.Snapshot) bool { return slices.Equal(s.Next, []string{"s2"}) })
	if i < 0 {
		return fmt.Errorf("no checkpoint before s2 in the subgraph's history")
	}
	at.CheckpointID = hist[i].Config.CheckpointID
	if _, err := g.UpdateState(ctx, at, refengine.Update{"log": []any{"forked"}}, "s1"); err != nil {
		return err
	}
	at.CheckpointID = ""
	_, err = g.History(ctx, at, refengine.HistoryOptions{})
	return err
}

// whoChild is START -> greet, answering "hi <who>".
func whoChild() (*refengine.Graph, error) {
	return refengine.NewStateGraph().
		AddKey("who", refengine.LastValue()).
		AddKey("answers", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("greet", func(_ context.Context, st refengine.State) (refengine.Update, error) {
			return refengine.Update{"answers": []any{fmt.Sprint("hi ", st["who"])}}, nil
		}).
		AddEdge(refengine.Start, "greet").
		Compile(refengine.CompileOptions{})
}

func sendSubgraphRun(ctx context.Context, rec spec.Saver) error {
	child, err := whoChild()
	if err != nil {
		return err
	}
	g, err := sendRoot(rec, child)
	if err != nil {
		return err
	}
	res, err := g.Invoke(ctx, refengine.State{"answers": []any{}}, lgjsRun("engine-send-subgraph", refengine.DurabilitySync))
	if err == nil && fmt.Sprint(res.Values["answers"]) != "[hi A hi B]" {
		err = fmt.Errorf("answers = %v", res.Values["answers"])
	}
	return err
}

// parallelResumeAllRun: two Send tasks' subgraphs interrupt; one resume
// map answers both.
func parallelResumeAllRun(ctx context.Context, rec spec.Saver) error {
	child, err := askWhoChild()
	if err != nil {
		return err
	}
	g, err := sendRoot(rec, child)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-parallel-resume-all", refengine.DurabilitySync)
	res, err := g.Invoke(ctx, refengine.State{"answers": []any{}}, cfg)
	if err != nil {
		return err
	}
	m := map[string]any{}
	for _, in := range res.Interrupts {
		s := fmt.Sprint(in.Value)
		m[in.ID] = "ans-" + s[len(s)-1:]
	}
	res, err = g.Invoke(ctx, refengine.Command{ResumeMap: m}, cfg)
	if err == nil && fmt.Sprint(res.Values["answers"]) != "[A:ans-A B:ans-B]" {
		err = fmt.Errorf("answers = %v", res.Values["answers"])
	}
	return err
}
