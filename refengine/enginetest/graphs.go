package enginetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

var errBoom = errors.New("boom")

// fanoutGraph is START -> one, START -> two over a summing key "value";
// one adds 2, two fails while *failures > 0 and then adds 3.
func fanoutGraph(c *checker, cnt *counter, s spec.Saver, failures *atomic.Int64) *refengine.Graph {
	return c.build(refengine.NewStateGraph().
		AddKey("value", refengine.Reducer(refengine.AddNumbers, nil)).
		AddNode("one", func(context.Context, refengine.State) (refengine.Update, error) {
			cnt.hit("one")
			return refengine.Update{"value": 2}, nil
		}).
		AddNode("two", func(context.Context, refengine.State) (refengine.Update, error) {
			cnt.hit("two")
			if failures.Add(-1) >= 0 {
				return nil, errBoom
			}
			return refengine.Update{"value": 3}, nil
		}).
		AddEdge(refengine.Start, "one").
		AddEdge(refengine.Start, "two"), refengine.CompileOptions{Saver: s})
}

var fanoutFailure = Scenario{
	Name: "fanout_failure",
	Rule: "ENGINE-FAILURE-1",
	Doc:  "a failing task saves __error__ next to its successful sibling's writes; resuming re-runs only the failed task (concurrent tasks, async durability)",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "fanout_failure"}
		cnt := newCounter()
		var failures atomic.Int64
		failures.Store(2)
		g := fanoutGraph(c, cnt, env.recorder(), &failures)
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-fanout", refengine.DurabilityAsync, false)
		_, err := g.Invoke(ctx, refengine.State{"value": 1}, cfg)
		var te *refengine.TaskError
		c.truef(errors.Is(err, errBoom) && errors.As(err, &te) && te.Node == "two", "run 1: got %v, want two's failure", err)
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints after run 1", len(hs), 2) {
			return c.err
		}
		c0 := hs[1].Config.CheckpointID
		tOne, tTwo := pullID(c0, "", 1, "one", "branch:to:one"), pullID(c0, "", 1, "two", "branch:to:two")
		labels := map[string]string{tOne: "one", tTwo: "two"}
		c.equal("C(0) values", hs[1].Checkpoint.ChannelValues, map[string]any{"value": 1, "branch:to:one": nil, "branch:to:two": nil})
		c.equal("C(0) updated", hs[1].Checkpoint.UpdatedChannels, []string{"branch:to:one", "branch:to:two", "value"})
		c.equal("C(0) writes after run 1", writesOf(hs[1].PendingWrites, labels), sortedPair("one value", "two __error__", tOne < tTwo))
		snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
		if c.noErr("get state", err) {
			c.equal("latest values (sibling's write applied)", snap.Values, map[string]any{"value": 3})
			c.equal("latest next", snap.Next, []string{"two"})
			for _, t := range snap.Tasks {
				switch t.Name {
				case "one":
					c.equal("one's result", t.Result, map[string]any{"value": 2})
				case "two":
					c.truef(t.Error != "", "two's error not reported")
				}
			}
		}
		snap, err = g.GetState(ctx, refengine.RunConfig{ThreadID: cfg.ThreadID, CheckpointID: c0}, refengine.StateOptions{})
		if c.noErr("get state by id", err) {
			c.equal("C(0) values by id", snap.Values, map[string]any{"value": 1})
			c.equal("C(0) next by id", snap.Next, []string{"one", "two"})
		}
		_, err = g.Invoke(ctx, nil, cfg)
		c.truef(errors.Is(err, errBoom), "run 2: got %v, want two's failure again", err)
		c.equal("executions after run 2", cnt.counts("one", "two"), []int64{1, 2})
		res, err := g.Invoke(ctx, nil, cfg)
		env.done()
		if !c.noErr("run 3", err) {
			return c.err
		}
		c.equal("final value", res.Values["value"], 6)
		c.equal("executions", cnt.counts("one", "two"), []int64{1, 3})
		hs, err = history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("checkpoints", len(hs), 3) {
			c.parentChain("root", hs)
			c.equal("C(1) values", hs[2].Checkpoint.ChannelValues, map[string]any{"value": 6})
			c.equal("C(1) updated", hs[2].Checkpoint.UpdatedChannels, []string{"value"})
			got := writesOf(hs[1].PendingWrites, labels)
			slices.Sort(got)
			c.equal("C(0) writes", got, []string{"one value", "two __error__", "two value"})
		}
		return c.err
	},
}

var sendMapReduce = Scenario{
	Name: "send_map_reduce",
	Rule: "ENGINE-SEND-1",
	Doc:  "Sends are stored in __pregel_tasks, run as PUSH tasks with their own IDs and paths, and their results are applied in Send order whatever the completion order",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "send_map_reduce"}
		cnt := newCounter()
		const n = 5
		g := c.build(refengine.NewStateGraph().
			AddKey("items", refengine.LastValue()).
			AddKey("results", refengine.Reducer(refengine.AppendList, []any{})).
			AddNode("plan", func(context.Context, refengine.State) (refengine.Update, error) {
				cnt.hit("plan")
				return nil, nil
			}).
			AddNode("w", func(_ context.Context, st refengine.State) (refengine.Update, error) {
				cnt.hit("w")
				return refengine.Update{"results": []any{fmt.Sprint("r", st["item"])}}, nil
			}).
			AddEdge(refengine.Start, "plan").
			AddConditionalEdges("plan", func(_ context.Context, st refengine.State) (refengine.Route, error) {
				var r refengine.Route
				for _, it := range st["items"].([]any) {
					r.Sends = append(r.Sends, refengine.Send{Node: "w", Arg: refengine.State{"item": it}})
				}
				return r, nil
			}), refengine.CompileOptions{Saver: env.recorder()})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-send", refengine.DurabilityAsync, false)
		items := []any{int64(0), int64(1), int64(2), int64(3), int64(4)}
		res, err := g.Invoke(ctx, refengine.State{"items": items}, cfg)
		env.done()
		if !c.noErr("invoke", err) {
			return c.err
		}
		c.equal("results in Send order", res.Values["results"], []any{"r0", "r1", "r2", "r3", "r4"})
		c.equal("executions", cnt.counts("plan", "w"), []int64{1, n})
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints", len(hs), 4) {
			return c.err
		}
		var sends []any
		for _, it := range items {
			sends = append(sends, map[string]any{"node": "w", "arg": map[string]any{"item": it}})
		}
		c.equal("C(1) __pregel_tasks", hs[2].Checkpoint.ChannelValues["__pregel_tasks"], sends)
		c.equal("C(2) __pregel_tasks drained but stored", hs[3].Checkpoint.ChannelValues["__pregel_tasks"], []any{})
		c.truef(spec.CompareVersions(hs[3].Checkpoint.ChannelVersions["__pregel_tasks"], hs[2].Checkpoint.ChannelVersions["__pregel_tasks"]) > 0,
			"__pregel_tasks version not bumped when drained")
		c.equal("versions_seen[w]", hs[3].Checkpoint.VersionsSeen["w"], map[string]any{})
		c1 := hs[2].Config.CheckpointID
		labels := map[string]string{}
		for i := range n {
			labels[pushID(c1, 2, "w", i)] = fmt.Sprint("w", i)
		}
		got := writesOf(hs[2].PendingWrites, labels)
		slices.Sort(got)
		c.equal("C(1) writes", got, []string{"w0 results", "w1 results", "w2 results", "w3 results", "w4 results"})
		paths := map[string]string{}
		for _, call := range env.Calls {
			if call.Method == trace.MethodPutWrites && call.Config.CheckpointID == c1 {
				paths[labels[call.TaskID]] = call.TaskPath
			}
		}
		for i := range n {
			c.equal("task path of Send", paths[fmt.Sprint("w", i)], fmt.Sprintf("~__pregel_push, %010d, 0000000000", i))
		}
		snap, err := g.History(ctx, refengine.RunConfig{ThreadID: cfg.ThreadID, CheckpointID: c1}, refengine.HistoryOptions{})
		if c.noErr("history of C(1)", err) && c.equal("history by id", len(snap), 1) {
			c.equal("next of C(1)", snap[0].Next, []string{"w", "w", "w", "w", "w"})
		}
		return c.err
	},
}

var subgraphInterrupt = Scenario{
	Name: "subgraph_interrupt",
	Rule: "ENGINE-SUBGRAPH-1",
	Doc:  "a subgraph runs in namespace node:taskID with parents metadata, its interrupt is saved in both namespaces and bubbles to the root, and resuming continues the child without a new input checkpoint",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "subgraph_interrupt"}
		cnt := newCounter()
		child := c.build(refengine.NewStateGraph().
			AddKey("log", refengine.Reducer(refengine.AppendList, nil)).
			AddNode("inner", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
				cnt.hit("inner")
				v, err := refengine.Interrupt(ctx, "inner?")
				if err != nil {
					return nil, err
				}
				return refengine.Update{"log": []any{fmt.Sprint("inner:", v)}}, nil
			}).
			AddEdge(refengine.Start, "inner"), refengine.CompileOptions{})
		if !c.ok() {
			return c.err
		}
		root := c.build(refengine.NewStateGraph().
			AddKey("log", refengine.LastValue()).
			AddNode("foo", func(context.Context, refengine.State) (refengine.Update, error) {
				cnt.hit("foo")
				return refengine.Update{"log": []any{"foo"}}, nil
			}).
			AddSubgraph("bar", child).
			AddEdge(refengine.Start, "foo").
			AddEdge("foo", "bar"), refengine.CompileOptions{Saver: env.recorder()})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-subgraph", refengine.DurabilitySync, true)
		res, err := root.Invoke(ctx, refengine.State{"log": []any{}}, cfg)
		if !c.noErr("run 1", err) || !c.equal("interrupts", len(res.Interrupts), 1) {
			return c.err
		}
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("root checkpoints after run 1", len(hs), 3) {
			return c.err
		}
		c1 := hs[2].Config.CheckpointID
		tBar := pullID(c1, "", 2, "bar", "branch:to:bar")
		ns := "bar:" + tBar
		cs, err := history(ctx, env.Saver, cfg.ThreadID, ns)
		if !c.noErr("list child", err) || !c.equal("child checkpoints after run 1", len(cs), 2) {
			return c.err
		}
		c.equal("child sources", sources(cs), []any{"input", "loop"})
		c.equal("child steps", steps(cs), []any{-1, 0})
		c.parentChain("child", cs)
		for _, t := range cs {
			c.equal("child parents metadata", t.Metadata["parents"], map[string]any{"": c1})
			c.equal("child config namespace", t.Config.Namespace, ns)
		}
		s0 := cs[1].Config.CheckpointID
		tInner := pullID(s0, ns, 1, "inner", "branch:to:inner")
		wantID := ids.Interrupt(ns + "|inner:" + tInner)
		c.equal("interrupt ID (hash of the child task namespace)", res.Interrupts[0].ID, wantID)
		c.equal("child writes", writesOf(cs[1].PendingWrites, map[string]string{tInner: "inner"}), []string{"inner __interrupt__"})
		c.equal("root writes", writesOf(hs[2].PendingWrites, map[string]string{tBar: "bar"}), []string{"bar __interrupt__"})
		all, err := allNamespaces(ctx, env.Saver, cfg.ThreadID)
		if c.noErr("list all namespaces", err) {
			c.equal("checkpoints in all namespaces", len(all), 5)
		}
		snap, err := root.GetState(ctx, cfg, refengine.StateOptions{Subgraphs: true})
		if c.noErr("get state with subgraphs", err) && c.equal("root next", snap.Next, []string{"bar"}) {
			st := snap.Tasks[0].State
			c.truef(st != nil && st.Config.Namespace == ns, "bar task state not read from %s", ns)
			if st != nil {
				c.equal("child next", st.Next, []string{"inner"})
			}
		}
		sub, err := root.History(ctx, refengine.RunConfig{ThreadID: cfg.ThreadID, Namespace: ns}, refengine.HistoryOptions{})
		if c.noErr("child history", err) {
			c.equal("child history length", len(sub), 2)
		}
		mark := env.mark()
		res, err = root.Invoke(ctx, refengine.Command{Resume: "x"}, cfg)
		env.done()
		if !c.noErr("run 2", err) {
			return c.err
		}
		c.truef(!res.Interrupted, "run 2 interrupted")
		c.equal("final log", res.Values["log"], []any{"foo", "inner:x"})
		c.equal("executions", cnt.counts("foo", "inner"), []int64{1, 2})
		c.equal("run 2 calls", methods(env.since(mark)), "GetTuple,PutWrites,GetTuple,PutWrites,Put,PutWrites,Put")
		cs, err = history(ctx, env.Saver, cfg.ThreadID, ns)
		if c.noErr("list child", err) && c.equal("child checkpoints", len(cs), 3) {
			c.parentChain("child", cs)
			c.equal("child writes after resume", writesOf(cs[1].PendingWrites, map[string]string{tInner: "inner"}),
				[]string{"inner __resume__", "inner __interrupt__", "inner log"})
		}
		hs, err = history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("root checkpoints", len(hs), 4) {
			c.equal("root C(2) values", hs[3].Checkpoint.ChannelValues, map[string]any{"log": []any{"foo", "inner:x"}})
		}
		return c.err
	},
}
