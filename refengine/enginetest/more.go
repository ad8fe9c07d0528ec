package enginetest

import (
	"context"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

var newInputDiscards = Scenario{
	Name: "new_input_discards",
	Rule: "ENGINE-INPUT-1",
	Doc:  "new input on a thread with a pending node stores an input checkpoint at step k+1 as a child of the latest one, marks the pending node's trigger as seen, and the node never runs",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "new_input_discards"}
		cnt := newCounter()
		g := c.build(refengine.NewStateGraph().
			AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
			AddNode("a", cnt.logNode("a")).AddNode("b", cnt.logNode("b")).
			AddEdge(refengine.Start, "a").AddEdge("a", "b"),
			refengine.CompileOptions{Saver: env.recorder(), InterruptBefore: []string{"b"}})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-new-input", refengine.DurabilitySync, true)
		for i := range 2 {
			res, err := g.Invoke(ctx, refengine.State{"log": []any{}}, cfg)
			if !c.noErr("run", err) {
				return c.err
			}
			c.truef(res.Interrupted, "run %d did not stop before b", i+1)
		}
		env.done()
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints", len(hs), 6) {
			return c.err
		}
		c.equal("sources", sources(hs), []any{"input", "loop", "loop", "input", "loop", "loop"})
		c.equal("steps", steps(hs), []any{-1, 0, 1, 2, 3, 4})
		c.parentChain("root", hs)
		c.equal("the discarded checkpoint keeps no writes", len(hs[2].PendingWrites), 0)
		c.equal("input checkpoint marks b's trigger as seen", hs[3].Checkpoint.VersionsSeen["b"],
			map[string]any{"branch:to:b": string(hs[2].Checkpoint.ChannelVersions["branch:to:b"])})
		c.equal("input checkpoint values", hs[3].Checkpoint.ChannelValues,
			map[string]any{"__start__": map[string]any{"log": []any{}}, "log": []any{"a"}})
		c.equal("log", hs[5].Checkpoint.ChannelValues["log"], []any{"a", "a"})
		c.equal("executions a,b", cnt.counts("a", "b"), []int64{2, 0})
		return c.err
	},
}

var commandGoto = Scenario{
	Name: "command_goto",
	Rule: "ENGINE-COMMAND-1",
	Doc:  "a Command with goto and update on a finished thread saves its writes under the null task ID on the latest checkpoint and continues from it without an input checkpoint",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "command_goto"}
		cnt := newCounter()
		g := linearGraph(c, cnt, env.recorder())
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-command", refengine.DurabilitySync, true)
		if _, err := g.Invoke(ctx, linearInput, cfg); !c.noErr("run", err) {
			return c.err
		}
		mark := env.mark()
		res, err := g.Invoke(ctx, refengine.Command{Goto: []string{"b"}, Update: map[string]any{"q": "again"}}, cfg)
		env.done()
		if !c.noErr("command", err) {
			return c.err
		}
		c.equal("values", res.Values, map[string]any{"q": "again", "log": []any{"a", "b", "b"}})
		c.equal("executions a,b", cnt.counts("a", "b"), []int64{1, 2})
		calls := env.since(mark)
		if c.equal("command calls", methods(calls), "GetTuple,PutWrites,PutWrites,Put") {
			c.equal("null writes", []any{calls[1].TaskID, calls[1].TaskPath, calls[1].Writes},
				[]any{spec.NullTaskID, "", []spec.Write{{Channel: "branch:to:b", Value: "__start__"}, {Channel: "q", Value: "again"}}})
		}
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints", len(hs), 5) {
			return c.err
		}
		c.parentChain("root", hs)
		c.equal("new checkpoint metadata", hs[4].Metadata, map[string]any{"source": "loop", "step": 3, "parents": map[string]any{}})
		tB := pullID(hs[3].Config.CheckpointID, "", 3, "b", "branch:to:b")
		c.equal("writes on the finished checkpoint", writesOf(hs[3].PendingWrites, map[string]string{spec.NullTaskID: "null", tB: "b"}),
			[]string{"null branch:to:b", "null q", "b log"})
		return c.err
	},
}

var siblingForks = Scenario{
	Name: "sibling_forks",
	Rule: "ENGINE-UPDATE-2",
	Doc:  "two updates of the same checkpoint create sibling branches whose channels get versions with the same counter; each branch reads back its own values and continues from them",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "sibling_forks"}
		cnt := newCounter()
		g := c.build(adderGraph(cnt), refengine.CompileOptions{Saver: env.recorder()})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-siblings", refengine.DurabilitySync, true)
		if _, err := g.Invoke(ctx, refengine.State{"value": 1}, cfg); !c.noErr("run", err) {
			return c.err
		}
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints", len(hs), 4) {
			return c.err
		}
		at := cfg
		at.CheckpointID = hs[1].Config.CheckpointID
		var forks []spec.Config
		for _, v := range []int{20, 30} {
			u, err := g.UpdateState(ctx, at, refengine.Update{"value": v}, "node_a")
			if !c.noErr("update", err) {
				return c.err
			}
			forks = append(forks, u)
		}
		for i, want := range []int{21, 31} {
			tup, err := env.Saver.GetTuple(ctx, forks[i])
			if c.noErr("get fork", err) {
				c.equal("fork value", tup.Checkpoint.ChannelValues["value"], want)
			}
		}
		for i, want := range []int{121, 131} {
			next := cfg
			next.CheckpointID = forks[i].CheckpointID
			res, err := g.Invoke(ctx, nil, next)
			if c.noErr("continue fork", err) {
				c.equal("branch result", res.Values["value"], want)
			}
		}
		env.done()
		for i, want := range []int{21, 31} {
			tup, err := env.Saver.GetTuple(ctx, forks[i])
			if c.noErr("get fork again", err) {
				c.equal("fork value after both branches ran", tup.Checkpoint.ChannelValues["value"], want)
			}
		}
		c.equal("executions", cnt.counts("node_a", "node_b"), []int64{1, 3})
		return c.err
	},
}
