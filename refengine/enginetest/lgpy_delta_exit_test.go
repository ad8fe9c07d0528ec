package enginetest_test

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The Go sides of delta_exit, delta_exit_resume and delta_bump in
// bridge/python/scenarios/delta.py: delta channels under exit durability,
// and snapshots that bump a version nothing wrote.

func deltaExitRun(ctx context.Context, rec spec.Saver) error {
	g, err := deltaChat(rec, 3)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-delta-exit", refengine.DurabilityExit)
	for i := range 4 {
		if _, err := g.Invoke(ctx, refengine.State{"messages": []any{fmt.Sprintf("u%d", i)}}, cfg); err != nil {
			return err
		}
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil {
		return err
	}
	if got := fmt.Sprint(snap.Values["messages"]); got != "[u0 a1 u1 a3 u2 a5 u3 a7]" {
		return fmt.Errorf("messages = %s", got)
	}
	hist, err := g.History(ctx, cfg, refengine.HistoryOptions{})
	if err != nil {
		return err
	}
	// The four final checkpoints and the stub the first turn put.
	if len(hist) != 5 {
		return fmt.Errorf("%d checkpoints in history, want 5", len(hist))
	}
	if got := fmt.Sprint(hist[1].Values["messages"]); got != "[u0 a1 u1 a3 u2 a5]" {
		return fmt.Errorf("third turn's messages = %s", got)
	}
	return nil
}

func deltaExitResumeRun(ctx context.Context, rec spec.Saver) error {
	ask := func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
		v, err := refengine.Interrupt(ctx, "ok?")
		if err != nil || v == "skip" {
			return nil, err
		}
		return refengine.Update{"messages": []any{fmt.Sprintf("answer:%v", v)}}, nil
	}
	g, err := refengine.NewStateGraph().AddKey("messages", refengine.Delta(refengine.AppendDelta, nil, 5)).
		AddNode("bot", replyNode).AddNode("ask", ask).
		AddEdge(refengine.Start, "bot").AddEdge("bot", "ask").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-delta-exit-resume", refengine.DurabilityExit)
	for _, in := range []refengine.Input{
		refengine.State{"messages": []any{"u0"}},
		refengine.Command{Resume: "yes"},
		refengine.State{"messages": []any{"u1"}},
		refengine.Command{Resume: "skip", Update: map[string]any{"messages": []any{"note"}}},
	} {
		if _, err := g.Invoke(ctx, in, cfg); err != nil {
			return err
		}
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err == nil && fmt.Sprint(snap.Values["messages"]) != "[u0 a1 answer:yes u1 a4 note]" {
		err = fmt.Errorf("messages = %v", snap.Values["messages"])
	}
	return err
}

func deltaBumpRun(ctx context.Context, rec spec.Saver) error {
	asker := func(question string) refengine.NodeFunc {
		return func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			v, err := refengine.Interrupt(ctx, question)
			if err != nil {
				return nil, err
			}
			return refengine.Update{"note": v}, nil
		}
	}
	w := func(context.Context, refengine.State) (refengine.Update, error) {
		return refengine.Update{"messages": []any{"w"}}, nil
	}
	g, err := refengine.NewStateGraph().AddKey("messages", refengine.Delta(refengine.AppendDelta, nil, 3)).
		AddKey("note", refengine.LastValue()).
		AddNode("ask1", asker("first?")).AddNode("w", w).AddNode("ask2", asker("second?")).
		AddEdge(refengine.Start, "ask1").AddEdge("ask1", "w").AddEdge("ask1", "ask2").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-delta-bump", refengine.DurabilitySync)
	steps := []func() error{
		func() error { _, err := g.Invoke(ctx, refengine.State{"note": "start"}, cfg); return err },
		func() error { _, err := g.Invoke(ctx, refengine.Command{Resume: "yes"}, cfg); return err },
		func() error {
			_, err := g.UpdateState(ctx, cfg, refengine.Update{"note": "edited"}, "ask1")
			return err
		},
		func() error { _, err := g.Invoke(ctx, nil, cfg); return err },
		func() error { _, err := g.UpdateState(ctx, cfg, refengine.Update{"note": "again"}, "ask1"); return err },
		func() error { _, err := g.Invoke(ctx, nil, cfg); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil {
		return err
	}
	// get_state applies the pending write of w, as LangGraph does.
	if got := fmt.Sprint(snap.Values["messages"], snap.Values["note"]); got != "[w]again" {
		return fmt.Errorf("state = %s", got)
	}
	return nil
}
