package enginetest

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// updateFinishedTask is bridge/python/scenarios/updates.py's
// update_finished_task: UpdateState on the latest checkpoint reuses the
// task ID LangGraph prepared for the node it updates as (pregel/main.py,
// bulk_update_state: node_to_task_ids). When that task already finished,
// its writes are re-sent under an ID that has rows on the checkpoint; the
// saver keeps the original rows (WRITES-2), and GetState of that
// checkpoint reports the task's own result from them.
var updateFinishedTask = Scenario{
	Name: "update_finished_task",
	Rule: "ENGINE-UPDATE-1",
	Doc:  "UpdateState as a node whose task already finished on the latest checkpoint re-sends writes under that task's ID; the saver keeps the original rows, so GetState of the checkpoint still reports the task's own result",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "update_finished_task"}
		cnt := newCounter()
		g := c.build(refengine.NewStateGraph().
			AddKey("q", refengine.LastValue()).
			AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
			AddNode("b", cnt.logNode("b")).
			AddNode("ask", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
				cnt.hit("ask")
				v, err := refengine.Interrupt(ctx, "?")
				if err != nil {
					return nil, err
				}
				return refengine.Update{"log": []any{fmt.Sprint("ask:", v)}}, nil
			}).
			AddEdge(refengine.Start, "b").
			AddEdge(refengine.Start, "ask"), refengine.CompileOptions{Saver: env.recorder()})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-update-finished-task", refengine.DurabilitySync, true)
		res, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg)
		if !c.noErr("run", err) {
			return c.err
		}
		c.truef(res.Interrupted, "ask did not interrupt")
		snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
		if !c.noErr("get state", err) {
			return c.err
		}
		stopped := snap.Config
		tB := pullID(stopped.CheckpointID, "", 1, "b", "branch:to:b")
		mark := env.mark()
		u, err := g.UpdateState(ctx, cfg, refengine.Update{"log": []any{"u"}}, "b")
		if !c.noErr("update state", err) {
			return c.err
		}
		// The update reads the latest checkpoint (the one stopped at), then
		// re-sends its write under b's prepared task ID, on the update
		// task's path.
		calls := env.since(mark)
		if c.equal("update calls", methods(calls), "GetTuple,PutWrites,Put") {
			c.equal("update writes on", calls[1].Config, stopped)
			c.equal("update task ID (b's)", calls[1].TaskID, tB)
			c.equal("update task path", calls[1].TaskPath, "~__interrupt__, 0000000000")
			c.equal("update writes", calls[1].Writes, []spec.Write{{Channel: "log", Value: []any{"u"}}})
		}
		at := cfg
		at.CheckpointID = stopped.CheckpointID
		old, err := g.GetState(ctx, at, refengine.StateOptions{})
		env.done()
		if !c.noErr("get state of the updated checkpoint", err) {
			return c.err
		}
		var result map[string]any
		for _, t := range old.Tasks {
			if t.Name == "b" {
				result = t.Result
			}
		}
		c.equal("b's result (its original writes)", result, map[string]any{"log": []any{"b"}})
		// The stopped checkpoint keeps b's original row only, next to ask's
		// interrupt.
		tup, err := env.Saver.GetTuple(ctx, stopped)
		if c.noErr("get stopped checkpoint", err) {
			var bWrites []spec.Write
			others := 0
			for _, w := range tup.PendingWrites {
				if w.TaskID == tB {
					bWrites = append(bWrites, spec.Write{Channel: w.Channel, Value: w.Value})
				} else if w.Channel == spec.InterruptChannel {
					others++
				}
			}
			c.equal("b's rows on the stopped checkpoint", bWrites, []spec.Write{{Channel: "log", Value: []any{"b"}}})
			c.equal("interrupts on the stopped checkpoint", others, 1)
			c.equal("writes on the stopped checkpoint", len(tup.PendingWrites), 2)
		}
		tup, err = env.Saver.GetTuple(ctx, u)
		if c.noErr("get update checkpoint", err) {
			c.equal("update values", tup.Checkpoint.ChannelValues["log"], []any{"u"})
			c.truef(tup.Parent != nil && tup.Parent.CheckpointID == stopped.CheckpointID, "update's parent is %v, want %s", tup.Parent, stopped.CheckpointID)
		}
		c.equal("executions", cnt.counts("b", "ask"), []int64{1, 1})
		return c.err
	},
}
