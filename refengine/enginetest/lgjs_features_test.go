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
		"command_node": commandNodeRun,
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
