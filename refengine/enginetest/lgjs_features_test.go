package enginetest_test

import (
	"context"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The Go sides of the TestAgainstLangGraphJS scenarios of issue 13's engine
// features (their JS sides are in bridge/js/scenarios/features.js).
func init() {
	for name, run := range map[string]func(context.Context, spec.Saver) error{
		"command_node":     commandNodeRun,
		"update_copy_bulk": updateCopyBulkRun,
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

// updateCopyBulkRun: the linear graph, then a bulk update of its step-0
// checkpoint (next: a): a copy superstep, then a superstep updating the
// copy as a; the run continues from the update.
func updateCopyBulkRun(ctx context.Context, rec spec.Saver) error {
	g, err := logGraph().
		AddNode("a", logNode("a")).AddNode("b", logNode("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-copy-bulk", refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); err != nil {
		return err
	}
	hist, err := g.History(ctx, cfg, refengine.HistoryOptions{})
	if err != nil {
		return err
	}
	at := cfg
	at.CheckpointID = hist[len(hist)-2].Config.CheckpointID // step 0
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
