package enginetest

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

var statefulSubgraph = Scenario{
	Name: "stateful_subgraph",
	Rule: "ENGINE-SUBGRAPH-2",
	Doc:  "a stateful subgraph continues one lineage in its recast namespace across invocations; replaying the parent finds the subgraph's state as of then with List(Before=parent checkpoint ID, Limit=1)",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "stateful_subgraph"}
		cnt := newCounter()
		child := c.build(refengine.NewStateGraph().
			AddKey("question", refengine.LastValue()).
			AddKey("seen", refengine.Reducer(refengine.AppendList, []any{})).
			AddKey("count", refengine.LastValue()).
			AddNode("remember", func(_ context.Context, st refengine.State) (refengine.Update, error) {
				cnt.hit("remember")
				seen, _ := st["seen"].([]any)
				return refengine.Update{"seen": []any{st["question"]}, "count": len(seen) + 1}, nil
			}).
			AddEdge(refengine.Start, "remember"), refengine.CompileOptions{Stateful: true})
		if !c.ok() {
			return c.err
		}
		root := c.build(refengine.NewStateGraph().
			AddKey("question", refengine.LastValue()).
			AddKey("count", refengine.LastValue()).
			AddSubgraph("inner", child).
			AddEdge(refengine.Start, "inner"), refengine.CompileOptions{Saver: env.recorder()})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-stateful", refengine.DurabilitySync, true)
		for i, want := range []int{1, 2} {
			res, err := root.Invoke(ctx, refengine.State{"question": fmt.Sprint("q", i+1)}, cfg)
			if !c.noErr(fmt.Sprint("run ", i+1), err) {
				return c.err
			}
			c.equal(fmt.Sprint("count after run ", i+1), res.Values["count"], want)
		}
		rs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list root", err) || !c.equal("root checkpoints", len(rs), 6) {
			return c.err
		}
		cs, err := history(ctx, env.Saver, cfg.ThreadID, "inner")
		if !c.noErr("list child", err) || !c.equal("child checkpoints in namespace \"inner\"", len(cs), 6) {
			return c.err
		}
		c.equal("child steps", steps(cs), []any{-1, 0, 1, 2, 3, 4})
		c.parentChain("child", cs)
		c.equal("child parents of run 2", cs[3].Metadata["parents"], map[string]any{"": rs[4].Config.CheckpointID})
		// Replay run 2 from the root checkpoint before the subgraph ran.
		at := cfg
		at.CheckpointID = rs[4].Config.CheckpointID
		mark := env.mark()
		res, err := root.Invoke(ctx, nil, at)
		if !c.noErr("replay", err) {
			return c.err
		}
		c.equal("count after replay (state as of the replay point)", res.Values["count"], 2)
		var lookup *trace.Call
		for _, call := range env.since(mark) {
			if call.Method == trace.MethodList {
				lookup = &call
				break
			}
		}
		if c.truef(lookup != nil, "no List lookup of the subgraph's state during the replay: %s", methods(env.since(mark))) {
			c.equal("lookup", []any{lookup.List.Namespace, lookup.List.Before, lookup.List.Limit},
				[]any{"inner", rs[4].Config.CheckpointID, 1})
			c.truef(len(lookup.Tuples) == 1 && lookup.Tuples[0].Config.CheckpointID == cs[2].Config.CheckpointID,
				"lookup returned %d tuples, want run 1's last child checkpoint %s", len(lookup.Tuples), cs[2].Config.CheckpointID)
		}
		env.done()
		cs, err = history(ctx, env.Saver, cfg.ThreadID, "inner")
		if c.noErr("list child", err) && c.equal("child checkpoints after replay", len(cs), 9) {
			c.truef(cs[6].Parent != nil && cs[6].Parent.CheckpointID == cs[2].Config.CheckpointID,
				"the replayed child's input checkpoint should continue run 1's last child checkpoint")
		}
		c.equal("executions", cnt.get("remember"), int64(3))
		snap, err := root.GetState(ctx, refengine.RunConfig{ThreadID: cfg.ThreadID, Namespace: "inner"}, refengine.StateOptions{})
		if c.noErr("child state", err) {
			c.equal("child state", snap.Values["seen"], []any{"q1", "q2"})
		}
		return c.err
	},
}
