package enginetest

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

var updateFork = Scenario{
	Name: "update_fork",
	Rule: "ENGINE-UPDATE-1",
	Doc:  "UpdateState on an old checkpoint the thread moved past saves a sibling checkpoint (source update) and no writes on the old one; continuing from it runs only what follows",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "update_fork"}
		cnt := newCounter()
		g := c.build(adderGraph(cnt), refengine.CompileOptions{Saver: env.recorder()})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-update", refengine.DurabilitySync, true)
		res, err := g.Invoke(ctx, refengine.State{"value": 1}, cfg)
		if !c.noErr("run", err) {
			return c.err
		}
		c.equal("first result", res.Values["value"], 111)
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints", len(hs), 4) {
			return c.err
		}
		c0 := hs[1].Config.CheckpointID
		mark := env.mark()
		at := cfg
		at.CheckpointID = c0
		u, err := g.UpdateState(ctx, at, refengine.Update{"value": 20}, "node_a")
		if !c.noErr("update state", err) {
			return c.err
		}
		calls := env.since(mark)
		tA := pullID(c0, "", 1, "node_a", "branch:to:node_a")
		// C(0) is not the latest checkpoint: the update reads the latest to
		// tell, and then saves no writes on C(0), whose other children would
		// read them (LangGraph Python's checkpoint_superseded).
		if c.equal("update calls", methods(calls), "GetTuple,GetTuple,Put") {
			c.equal("update reads the latest", calls[1].Config, spec.Config{ThreadID: cfg.ThreadID})
			c.equal("update parent", calls[2].Config.CheckpointID, c0)
			c.equal("update metadata", calls[2].Metadata, map[string]any{"source": "update", "step": 1, "parents": map[string]any{}})
			c.truef(calls[2].Checkpoint.UpdatedChannels == nil, "an update checkpoint has unknown (nil) updated channels")
		}
		c.equal("update config", u.CheckpointID != "" && u.CheckpointID > hs[3].Config.CheckpointID, true)
		tup, err := env.Saver.GetTuple(ctx, u)
		if c.noErr("get update checkpoint", err) {
			c.equal("update values", tup.Checkpoint.ChannelValues["value"], 21)
			c.truef(tup.Parent != nil && tup.Parent.CheckpointID == c0, "update checkpoint's parent is %v, want %s", tup.Parent, c0)
		}
		// C(0) keeps node_a's original writes only.
		c0t, err := env.Saver.GetTuple(ctx, spec.Config{ThreadID: cfg.ThreadID, CheckpointID: c0})
		if c.noErr("get C(0)", err) && c.equal("C(0) writes", writesOf(c0t.PendingWrites, map[string]string{tA: "a"}), []string{"a value", "a branch:to:node_b"}) {
			c.equal("C(0) keeps the original write", c0t.PendingWrites[0].Value, 10)
		}
		next := cfg
		next.CheckpointID = u.CheckpointID
		res, err = g.Invoke(ctx, nil, next)
		env.done()
		if !c.noErr("continue from update", err) {
			return c.err
		}
		c.equal("result after update", res.Values["value"], 121)
		c.equal("executions", cnt.counts("node_a", "node_b"), []int64{1, 2})
		hs, err = history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("checkpoints", len(hs), 6) {
			c.equal("sources", sources(hs), []any{"input", "loop", "loop", "loop", "update", "loop"})
			c.equal("steps", steps(hs), []any{-1, 0, 1, 2, 1, 2})
			c.truef(hs[5].Parent != nil && hs[5].Parent.CheckpointID == u.CheckpointID, "continuation's parent is not the update")
		}
		snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
		if c.noErr("get state", err) {
			c.equal("latest value", snap.Values["value"], 121)
		}
		cp, err := g.UpdateState(ctx, next, nil, refengine.CopyNode)
		if c.noErr("copy", err) {
			tup, err := env.Saver.GetTuple(ctx, cp)
			if c.noErr("get copy", err) {
				c.equal("copy metadata", tup.Metadata, map[string]any{"source": "fork", "step": 2, "parents": map[string]any{}})
				c.equal("copy values (stored with empty new versions)", tup.Checkpoint.ChannelValues, map[string]any{"value": 21, "branch:to:node_b": nil})
				c.truef(tup.Parent != nil && tup.Parent.CheckpointID == c0, "a copy is a sibling: parent %v, want %s", tup.Parent, c0)
			}
		}
		return c.err
	},
}

// humanGraph is START -> node_a -> ask_human (interrupt) -> node_b.
func humanGraph(c *checker, cnt *counter, s spec.Saver) *refengine.Graph {
	return c.build(refengine.NewStateGraph().
		AddKey("answer", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, nil)).
		AddNode("node_a", cnt.logNode("node_a")).
		AddNode("ask_human", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
			cnt.hit("ask_human")
			v, err := refengine.Interrupt(ctx, "answer?")
			if err != nil {
				return nil, err
			}
			return refengine.Update{"answer": v}, nil
		}).
		AddNode("node_b", cnt.logNode("node_b")).
		AddEdge(refengine.Start, "node_a").
		AddEdge("node_a", "ask_human").
		AddEdge("ask_human", "node_b"), refengine.CompileOptions{Saver: s})
}

var replayHistory = Scenario{
	Name: "replay_history",
	Rule: "ENGINE-REPLAY-1",
	Doc:  "replaying from an old checkpoint writes a fork (source fork) and re-runs from there, interrupts fire again, the new branch becomes the latest; History honours before, limit and filter",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "replay_history"}
		cnt := newCounter()
		g := humanGraph(c, cnt, env.recorder())
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-replay", refengine.DurabilityAsync, true)
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}}, cfg); !c.noErr("run 1", err) {
			return c.err
		}
		res, err := g.Invoke(ctx, refengine.Command{Resume: "old"}, cfg)
		if !c.noErr("run 2", err) {
			return c.err
		}
		c.equal("first answer", res.Values["answer"], "old")
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints", len(hs), 5) {
			return c.err
		}
		c.equal("steps", steps(hs), []any{-1, 0, 1, 2, 3})
		loop1 := hs[2].Config.CheckpointID
		at := cfg
		at.CheckpointID = loop1
		mark := env.mark()
		res, err = g.Invoke(ctx, nil, at)
		if !c.noErr("replay", err) {
			return c.err
		}
		c.truef(res.Interrupted, "replayed ask_human did not interrupt again")
		calls := env.since(mark)
		if c.equal("replay calls", methods(calls), "GetTuple,GetTuple,PutWrites,Put") {
			c.equal("replay loads by ID", calls[0].Config.CheckpointID, loop1)
			c.equal("replay reads the latest", calls[1].Config, spec.Config{ThreadID: cfg.ThreadID})
			c.equal("fork parent", calls[3].Config.CheckpointID, loop1)
			c.equal("fork metadata", calls[3].Metadata, map[string]any{"source": "fork", "step": 2, "parents": map[string]any{}})
			c.truef(calls[3].Checkpoint.UpdatedChannels == nil, "a fork has unknown (nil) updated channels")
			c.equal("interrupt saved against the fork", calls[2].Config.CheckpointID, calls[3].Checkpoint.ID)
		}
		res, err = g.Invoke(ctx, refengine.Command{Resume: "new"}, cfg)
		env.done()
		if !c.noErr("resume after replay", err) {
			return c.err
		}
		c.equal("new answer", res.Values["answer"], "new")
		c.equal("executions", cnt.counts("node_a", "ask_human", "node_b"), []int64{1, 4, 2})
		all, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints", len(all), 8) {
			return c.err
		}
		c.equal("sources", sources(all), []any{"input", "loop", "loop", "loop", "loop", "fork", "loop", "loop"})
		c.equal("steps", steps(all), []any{-1, 0, 1, 2, 3, 2, 3, 4})
		fork := all[5]
		c.truef(fork.Parent != nil && fork.Parent.CheckpointID == loop1, "fork's parent is %v, want %s", fork.Parent, loop1)
		c.truef(all[6].Parent != nil && all[6].Parent.CheckpointID == fork.Config.CheckpointID &&
			all[7].Parent != nil && all[7].Parent.CheckpointID == all[6].Config.CheckpointID, "new branch does not continue the fork")
		latest, err := env.Saver.GetTuple(ctx, spec.Config{ThreadID: cfg.ThreadID})
		if c.noErr("latest", err) {
			c.equal("latest is the new branch's end", latest.Config.CheckpointID, all[7].Config.CheckpointID)
		}
		forks, err := g.History(ctx, cfg, refengine.HistoryOptions{Filter: spec.Metadata{"source": "fork"}})
		if c.noErr("history filter", err) && c.equal("forks", len(forks), 1) {
			c.equal("fork in history", forks[0].Config.CheckpointID, fork.Config.CheckpointID)
			c.equal("fork next", forks[0].Next, []string{"ask_human"})
		}
		before, err := g.History(ctx, cfg, refengine.HistoryOptions{Before: fork.Config.CheckpointID, Limit: 2})
		if c.noErr("history before", err) && c.equal("before+limit", len(before), 2) {
			c.equal("before the fork", []any{before[0].Config.CheckpointID, before[1].Config.CheckpointID},
				[]any{all[4].Config.CheckpointID, all[3].Config.CheckpointID})
		}
		// Replaying a finished checkpoint still writes a fork and runs nothing.
		end := cfg
		end.CheckpointID = all[7].Config.CheckpointID
		if _, err := g.Invoke(ctx, nil, end); c.noErr("replay the end", err) {
			c.equal("executions after replaying the end", cnt.counts("node_a", "ask_human", "node_b"), []int64{1, 4, 2})
			hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
			if c.noErr("list", err) && c.equal("checkpoints", len(hs), 9) {
				c.equal("last source", hs[8].Metadata["source"], "fork")
			}
		}
		return c.err
	},
}

var exitDurability = Scenario{
	Name: "exit_durability",
	Rule: "ENGINE-EXIT-1",
	Doc:  "exit durability writes one checkpoint per invocation, parented to the previous invocation's, followed by the pending writes of an unfinished superstep",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "exit_durability"}
		cnt := newCounter()
		g := linearGraph(c, cnt, env.recorder())
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-exit", refengine.DurabilityExit, true)
		res, err := g.Invoke(ctx, linearInput, cfg)
		if !c.noErr("linear run", err) {
			return c.err
		}
		c.equal("final state", res.Values["log"], []any{"a", "b"})
		c.equal("linear calls", methods(env.since(0)), "GetTuple,Put")
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("checkpoints", len(hs), 1) {
			c.equal("metadata", hs[0].Metadata, map[string]any{"source": "loop", "step": 2, "parents": map[string]any{}})
			c.truef(hs[0].Parent == nil, "the only checkpoint has a parent")
			c.equal("values", hs[0].Checkpoint.ChannelValues, map[string]any{"q": "hi", "log": []any{"a", "b"}})
			c.equal("new versions cover every channel", len(env.since(0)[1].NewVersions), len(hs[0].Checkpoint.ChannelVersions))
		}
		// A failing fan-out: the failed step's writes follow the single put.
		mark := env.mark()
		fcnt := newCounter()
		var failures atomicInt
		failures.Store(1)
		fg := fanoutGraph(c, fcnt, env.recorder(), &failures.Int64)
		fcfg := env.run("engine-exit-fanout", refengine.DurabilityExit, true)
		_, err = fg.Invoke(ctx, refengine.State{"value": 1}, fcfg)
		c.truef(err != nil, "fan-out run 1 should fail")
		calls := env.since(mark)
		c.equal("failing run calls", methods(calls), "GetTuple,Put,PutWrites,PutWrites")
		fh, err := history(ctx, env.Saver, fcfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints after failure", len(fh), 1) {
			return c.err
		}
		c0 := fh[0].Config.CheckpointID
		c.equal("C(0) metadata", fh[0].Metadata, map[string]any{"source": "loop", "step": 0, "parents": map[string]any{}})
		tOne, tTwo := pullID(c0, "", 1, "one", "branch:to:one"), pullID(c0, "", 1, "two", "branch:to:two")
		c.equal("C(0) writes", writesOf(fh[0].PendingWrites, map[string]string{tOne: "one", tTwo: "two"}),
			sortedPair("one value", "two __error__", tOne < tTwo))
		res, err = fg.Invoke(ctx, nil, fcfg)
		env.done()
		if !c.noErr("fan-out run 2", err) {
			return c.err
		}
		c.equal("fan-out result", res.Values["value"], 6)
		c.equal("fan-out executions", fcnt.counts("one", "two"), []int64{1, 2})
		fh, err = history(ctx, env.Saver, fcfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("checkpoints after success", len(fh), 2) {
			c.parentChain("root", fh)
			c.equal("C(1) step", fh[1].Metadata["step"], 1)
		}
		// interrupt_after=*: one checkpoint per invocation.
		scnt := newCounter()
		sg := chainGraph(c, scnt, refengine.CompileOptions{Saver: env.Saver, InterruptAfter: []string{"*"}})
		scfg := env.run("engine-exit-static", refengine.DurabilityExit, true)
		for run := range 3 {
			var input refengine.Input
			if run == 0 {
				input = refengine.State{"x": 1}
			}
			if _, err := sg.Invoke(ctx, input, scfg); !c.noErr(fmt.Sprint("static run ", run+1), err) {
				return c.err
			}
			sh, err := history(ctx, env.Saver, scfg.ThreadID, "")
			if c.noErr("list", err) {
				c.equal(fmt.Sprint("checkpoints after static run ", run+1), len(sh), run+1)
			}
		}
		return c.err
	},
}

// adderGraph is START -> node_a -> node_b over one summing key, "value":
// node_a adds 10 and node_b adds 100, each counting its runs in cnt. The
// time-travel scenarios fork and update it.
func adderGraph(cnt *counter) *refengine.StateGraph {
	node := func(name string, v int) refengine.NodeFunc {
		return func(context.Context, refengine.State) (refengine.Update, error) {
			cnt.hit(name)
			return refengine.Update{"value": v}, nil
		}
	}
	return refengine.NewStateGraph().
		AddKey("value", refengine.Reducer(refengine.AddNumbers, nil)).
		AddNode("node_a", node("node_a", 10)).
		AddNode("node_b", node("node_b", 100)).
		AddEdge(refengine.Start, "node_a").
		AddEdge("node_a", "node_b")
}
