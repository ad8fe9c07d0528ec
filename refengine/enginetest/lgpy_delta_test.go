package enginetest_test

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The Go sides of the scenarios of bridge/python/scenarios/delta.py: a
// message list kept in a delta channel (issue #21).
func init() {
	runs := map[string]func(context.Context, spec.Saver) error{
		"delta_messages":    deltaMessagesRun,
		"delta_fanout":      deltaFanoutRun,
		"delta_fork":        deltaForkRun,
		"delta_update":      deltaUpdateRun,
		"delta_interrupt":   deltaInterruptRun,
		"delta_exit":        deltaExitRun,
		"delta_exit_resume": deltaExitResumeRun,
		"delta_bump":        deltaBumpRun,
	}
	for _, name := range []string{"delta_messages", "delta_fanout", "delta_fork", "delta_update", "delta_interrupt", "delta_exit", "delta_exit_resume", "delta_bump"} {
		lgpyOnly[name] = runs[name]
		lgpyScenarios = append(lgpyScenarios, name)
	}
	// w and ask2 run in one superstep and commit in completion order.
	lgpyUnordered["delta_bump"] = true
}

// replyNode answers with the number of messages it saw.
func replyNode(_ context.Context, s refengine.State) (refengine.Update, error) {
	l, _ := s["messages"].([]any)
	return refengine.Update{"messages": []any{fmt.Sprintf("a%d", len(l))}}, nil
}

// deltaChat is START -> bot with messages a delta channel snapshotted
// every `every` updates.
func deltaChat(rec spec.Saver, every int) (*refengine.Graph, error) {
	return refengine.NewStateGraph().AddKey("messages", refengine.Delta(refengine.AppendDelta, nil, every)).
		AddNode("bot", replyNode).AddEdge(refengine.Start, "bot").
		Compile(refengine.CompileOptions{Saver: rec})
}

func deltaMessagesRun(ctx context.Context, rec spec.Saver) error {
	g, err := deltaChat(rec, 3)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-delta-messages", refengine.DurabilitySync)
	for i := range 7 {
		if _, err := g.Invoke(ctx, refengine.State{"messages": []any{fmt.Sprintf("u%d", i)}}, cfg); err != nil {
			return err
		}
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err == nil && fmt.Sprint(snap.Values["messages"]) != "[u0 a1 u1 a3 u2 a5 u3 a7 u4 a9 u5 a11 u6 a13]" {
		err = fmt.Errorf("messages = %v", snap.Values["messages"])
	}
	return err
}

func deltaFanoutRun(ctx context.Context, rec spec.Saver) error {
	write := func(v string) refengine.NodeFunc {
		return func(context.Context, refengine.State) (refengine.Update, error) {
			return refengine.Update{"messages": []any{v}}, nil
		}
	}
	g, err := refengine.NewStateGraph().AddKey("messages", refengine.Delta(refengine.AppendDelta, nil, 3)).
		AddNode("a", write("from-a")).AddNode("b", write("from-b")).
		AddEdge(refengine.Start, "a").AddEdge(refengine.Start, "b").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-delta-fanout", refengine.DurabilitySync)
	for _, in := range []string{"u0", "u1"} {
		if _, err := g.Invoke(ctx, refengine.State{"messages": []any{in}}, cfg); err != nil {
			return err
		}
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err == nil && fmt.Sprint(snap.Values["messages"]) != "[u0 from-a from-b u1 from-a from-b]" {
		err = fmt.Errorf("messages = %v", snap.Values["messages"])
	}
	return err
}

func deltaForkRun(ctx context.Context, rec spec.Saver) error {
	g, err := deltaChat(rec, 3)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-delta-fork", refengine.DurabilitySync)
	for i := range 3 {
		if _, err := g.Invoke(ctx, refengine.State{"messages": []any{fmt.Sprintf("u%d", i)}}, cfg); err != nil {
			return err
		}
	}
	hist, err := g.History(ctx, cfg, refengine.HistoryOptions{})
	if err != nil {
		return err
	}
	if len(hist) < 4 {
		return fmt.Errorf("%d checkpoints in history", len(hist))
	}
	at := cfg
	at.CheckpointID = hist[3].Config.CheckpointID
	if _, err := g.Invoke(ctx, refengine.State{"messages": []any{"fork"}}, at); err != nil {
		return err
	}
	_, err = g.GetState(ctx, cfg, refengine.StateOptions{})
	return err
}

func deltaUpdateRun(ctx context.Context, rec spec.Saver) error {
	g, err := deltaChat(rec, 2)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-delta-update", refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"messages": []any{"u0"}}, cfg); err != nil {
		return err
	}
	if _, err := g.UpdateState(ctx, cfg, refengine.Update{"messages": []any{"edited"}}, ""); err != nil {
		return err
	}
	if _, err := g.Invoke(ctx, refengine.State{"messages": []any{"u1"}}, cfg); err != nil {
		return err
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err == nil && fmt.Sprint(snap.Values["messages"]) != "[u0 a1 edited u1 a4]" {
		err = fmt.Errorf("messages = %v", snap.Values["messages"])
	}
	return err
}

func deltaInterruptRun(ctx context.Context, rec spec.Saver) error {
	ask := func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
		v, err := refengine.Interrupt(ctx, "ok?")
		if err != nil {
			return nil, err
		}
		return refengine.Update{"messages": []any{fmt.Sprintf("answer:%v", v)}}, nil
	}
	g, err := refengine.NewStateGraph().AddKey("messages", refengine.Delta(refengine.AppendDelta, nil, 2)).
		AddNode("bot", replyNode).AddNode("ask", ask).
		AddEdge(refengine.Start, "bot").AddEdge("bot", "ask").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-delta-interrupt", refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"messages": []any{"u0"}}, cfg); err != nil {
		return err
	}
	if _, err := g.Invoke(ctx, refengine.Command{Resume: "yes"}, cfg); err != nil {
		return err
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err == nil && fmt.Sprint(snap.Values["messages"]) != "[u0 a1 answer:yes]" {
		err = fmt.Errorf("messages = %v", snap.Values["messages"])
	}
	return err
}
