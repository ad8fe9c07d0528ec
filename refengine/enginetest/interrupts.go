package enginetest

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/spec"
)

// askGraph is START -> a -> b -> END where b asks for input with
// Interrupt("?") and logs "b:<answer>".
func askGraph(c *checker, cnt *counter, s spec.Saver) *refengine.Graph {
	g := refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", cnt.logNode("a")).
		AddNode("b", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
			cnt.hit("b")
			v, err := refengine.Interrupt(ctx, "?")
			if err != nil {
				return nil, err
			}
			return refengine.Update{"log": []any{fmt.Sprint("b:", v)}}, nil
		}).
		AddEdge(refengine.Start, "a").
		AddEdge("a", "b")
	return c.build(g, refengine.CompileOptions{Saver: s})
}

var interruptResume = Scenario{
	Name: "interrupt_resume",
	Rule: "ENGINE-INTERRUPT-1",
	Doc:  "a dynamic interrupt saves __interrupt__ against the last checkpoint; Command{Resume} stores __resume__ under the null task ID, re-runs only the interrupted node and keeps every write",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "interrupt_resume"}
		cnt := newCounter()
		rec := env.recorder()
		g := askGraph(c, cnt, rec)
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-interrupt", refengine.DurabilitySync, true)
		res, err := g.Invoke(ctx, linearInput, cfg)
		if !c.noErr("run 1", err) {
			return c.err
		}
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints after run 1", len(hs), 3) {
			return c.err
		}
		c1 := hs[2].Config.CheckpointID
		tB := pullID(c1, "", 2, "b", "branch:to:b")
		wantID := ids.Interrupt("b:" + tB)
		c.truef(res.Interrupted, "run 1 not reported as interrupted")
		c.equal("interrupts", res.Interrupts, []refengine.PendingInterrupt{{Value: "?", ID: wantID}})
		labels := map[string]string{tB: "b", spec.NullTaskID: "null"}
		c.equal("C(1) pending writes after run 1", writesOf(hs[2].PendingWrites, labels), []string{"b __interrupt__"})
		if c.ok() {
			c.equal("stored interrupt", hs[2].PendingWrites[0].Value, []any{map[string]any{"value": "?", "id": wantID}})
		}
		snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
		if c.noErr("get state", err) {
			c.equal("next", snap.Next, []string{"b"})
			c.equal("snapshot interrupts", snap.Interrupts, []refengine.PendingInterrupt{{Value: "?", ID: wantID}})
		}
		mark := env.mark()
		res, err = g.Invoke(ctx, refengine.Command{Resume: "ok"}, cfg)
		env.done()
		if !c.noErr("run 2", err) {
			return c.err
		}
		c.truef(!res.Interrupted, "run 2 interrupted again")
		c.equal("final log", res.Values["log"], []any{"a", "b:ok"})
		c.equal("executions a,b", cnt.counts("a", "b"), []int64{1, 2})
		c.equal("run 2 calls", methods(env.since(mark)), "GetTuple,PutWrites,PutWrites,Put")
		if c.ok() {
			calls := env.since(mark)
			c.equal("loaded checkpoint", calls[0].Tuple.Config.CheckpointID, c1)
			c.equal("null resume write", []any{calls[1].TaskID, calls[1].TaskPath, calls[1].Config.CheckpointID, calls[1].Writes},
				[]any{spec.NullTaskID, "", c1, []spec.Write{{Channel: spec.ResumeChannel, Value: "ok"}}})
			c.equal("task resume write", []any{calls[2].TaskID, calls[2].Config.CheckpointID, calls[2].Writes},
				[]any{tB, c1, []spec.Write{{Channel: spec.ResumeChannel, Value: []any{"ok"}}, {Channel: "log", Value: []any{"b:ok"}}}})
		}
		hs, err = history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints after run 2", len(hs), 4) {
			return c.err
		}
		c.parentChain("root", hs)
		c.equal("C(1) pending writes after run 2", writesOf(hs[2].PendingWrites, labels),
			[]string{"null __resume__", "b __resume__", "b __interrupt__", "b log"})
		_, seen := hs[3].Checkpoint.VersionsSeen[spec.InterruptChannel]
		c.truef(seen, "C(2) lacks versions_seen[__interrupt__] after a resume")
		c.equal("C(2) metadata", hs[3].Metadata, map[string]any{"source": "loop", "step": 2, "parents": map[string]any{}})
		return c.err
	},
}

var interruptTwice = Scenario{
	Name: "interrupt_twice",
	Rule: "ENGINE-INTERRUPT-2",
	Doc:  "a node that interrupts twice gets its answers positionally: the saved __resume__ list is overwritten as it grows and read back on the next resume",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "interrupt_twice"}
		cnt := newCounter()
		g := c.build(refengine.NewStateGraph().
			AddKey("answer", refengine.LastValue()).
			AddNode("ask", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
				cnt.hit("ask")
				first, err := refengine.Interrupt(ctx, "first?")
				if err != nil {
					return nil, err
				}
				second, err := refengine.Interrupt(ctx, "second?")
				if err != nil {
					return nil, err
				}
				return refengine.Update{"answer": fmt.Sprint(first, "+", second)}, nil
			}).
			AddEdge(refengine.Start, "ask"), refengine.CompileOptions{Saver: env.recorder()})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-interrupt-twice", refengine.DurabilityAsync, true)
		res, err := g.Invoke(ctx, refengine.State{"answer": ""}, cfg)
		if !c.noErr("run 1", err) || !c.equal("run 1 interrupt", len(res.Interrupts), 1) {
			return c.err
		}
		c.equal("run 1 asks", res.Interrupts[0].Value, "first?")
		res, err = g.Invoke(ctx, refengine.Command{Resume: "x"}, cfg)
		if !c.noErr("run 2", err) || !c.equal("run 2 interrupt", len(res.Interrupts), 1) {
			return c.err
		}
		c.equal("run 2 asks", res.Interrupts[0].Value, "second?")
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("checkpoints", len(hs), 2) {
			return c.err
		}
		c0 := hs[1].Config.CheckpointID
		tAsk := pullID(c0, "", 1, "ask", "branch:to:ask")
		labels := map[string]string{tAsk: "ask", spec.NullTaskID: "null"}
		c.equal("C(0) writes after run 2", writesOf(hs[1].PendingWrites, labels), []string{"null __resume__", "ask __resume__", "ask __interrupt__"})
		if c.ok() {
			c.equal("saved resume list", hs[1].PendingWrites[1].Value, []any{"x"})
			c.equal("saved interrupt is the second one", hs[1].PendingWrites[2].Value,
				[]any{map[string]any{"value": "second?", "id": ids.InterruptAt("ask:"+tAsk, 1)}})
		}
		res, err = g.Invoke(ctx, refengine.Command{Resume: "y"}, cfg)
		env.done()
		if !c.noErr("run 3", err) {
			return c.err
		}
		c.truef(!res.Interrupted, "run 3 interrupted")
		c.equal("answer", res.Values["answer"], "x+y")
		c.equal("executions", cnt.get("ask"), int64(3))
		// Run 3 re-saved ask's __resume__ row with both answers: the row
		// is overwritten as the list grows.
		hs, err = history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("checkpoints after run 3", len(hs), 3) {
			var resume []any
			for _, w := range hs[1].PendingWrites {
				if w.TaskID == tAsk && w.Channel == spec.ResumeChannel {
					resume = append(resume, w.Value)
				}
			}
			c.equal("saved resume list after run 3", resume, []any{[]any{"x", "y"}})
		}
		return c.err
	},
}

// chainGraph is START -> s1 -> s2 -> s3 with nodes that write nothing but
// their edge.
func chainGraph(c *checker, cnt *counter, opts refengine.CompileOptions) *refengine.Graph {
	noop := func(name string) refengine.NodeFunc {
		return func(context.Context, refengine.State) (refengine.Update, error) {
			cnt.hit(name)
			return nil, nil
		}
	}
	g := refengine.NewStateGraph().AddKey("x", refengine.LastValue()).
		AddNode("s1", noop("s1")).AddNode("s2", noop("s2")).AddNode("s3", noop("s3")).
		AddEdge(refengine.Start, "s1").AddEdge("s1", "s2").AddEdge("s2", "s3")
	return c.build(g, opts)
}

var staticInterrupts = Scenario{
	Name: "static_interrupts",
	Rule: "ENGINE-STATIC-1",
	Doc:  "interrupt_after=* stops after each node (not after the hidden start node); each resume advances one node; a node without writes saves __no_writes__",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "static_interrupts"}
		cnt := newCounter()
		g := chainGraph(c, cnt, refengine.CompileOptions{Saver: env.recorder(), InterruptAfter: []string{"*"}})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-static", refengine.DurabilitySync, true)
		wantNext := [][]string{{"s2"}, {"s3"}, {}}
		for run := range 3 {
			var input refengine.Input
			if run == 0 {
				input = refengine.State{"x": 1}
			}
			res, err := g.Invoke(ctx, input, cfg)
			if !c.noErr(fmt.Sprint("run ", run+1), err) {
				return c.err
			}
			// LangGraph raises the static interrupt after s3 too, although
			// nothing is left to run.
			c.equal(fmt.Sprint("run ", run+1, " interrupted"), res.Interrupted, true)
			hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
			if c.noErr("list", err) {
				c.equal(fmt.Sprint("checkpoints after run ", run+1), len(hs), 3+run)
			}
			snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
			if c.noErr("get state", err) {
				c.equal(fmt.Sprint("next after run ", run+1), snap.Next, wantNext[run])
			}
		}
		env.done()
		c.equal("executions", cnt.counts("s1", "s2", "s3"), []int64{1, 1, 1})
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("checkpoints", len(hs), 5) {
			c.parentChain("root", hs)
			tS3 := pullID(hs[3].Config.CheckpointID, "", 3, "s3", "branch:to:s3")
			c.equal("s3's marker", writesOf(hs[3].PendingWrites, map[string]string{tS3: "s3"}), []string{"s3 __no_writes__"})
		}
		return c.err
	},
}

var interruptBefore = Scenario{
	Name: "interrupt_before",
	Rule: "ENGINE-STATIC-2",
	Doc:  "interrupt_before stops with the node pending and nothing written for it; resuming runs it once",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "interrupt_before"}
		cnt := newCounter()
		g := chainGraph(c, cnt, refengine.CompileOptions{Saver: env.recorder(), InterruptBefore: []string{"s2"}})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-before", refengine.DurabilityAsync, true)
		res, err := g.Invoke(ctx, refengine.State{"x": 1}, cfg)
		if !c.noErr("run 1", err) {
			return c.err
		}
		c.truef(res.Interrupted, "run 1 not interrupted")
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("checkpoints after run 1", len(hs), 3) {
			c.equal("writes of the interrupted checkpoint", len(hs[2].PendingWrites), 0)
		}
		c.equal("executions after run 1", cnt.counts("s1", "s2", "s3"), []int64{1, 0, 0})
		res, err = g.Invoke(ctx, nil, cfg)
		env.done()
		if !c.noErr("run 2", err) {
			return c.err
		}
		c.truef(!res.Interrupted, "run 2 interrupted")
		c.equal("executions", cnt.counts("s1", "s2", "s3"), []int64{1, 1, 1})
		hs, err = history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("checkpoints", len(hs), 5) {
			c.parentChain("root", hs)
			_, ok := hs[3].Checkpoint.VersionsSeen[spec.InterruptChannel]
			c.truef(ok, "checkpoint after resume lacks versions_seen[__interrupt__]")
			// The interrupted checkpoint holds exactly what the resumed s2
			// wrote, and s3's marker (which, with async durability, reached
			// the saver before its checkpoint) stays with s3's checkpoint.
			tS2 := pullID(hs[2].Config.CheckpointID, "", 2, "s2", "branch:to:s2")
			tS3 := pullID(hs[3].Config.CheckpointID, "", 3, "s3", "branch:to:s3")
			labels := map[string]string{tS2: "s2", tS3: "s3"}
			c.equal("writes of the interrupted checkpoint after the resume", writesOf(hs[2].PendingWrites, labels), []string{"s2 branch:to:s3"})
			c.equal("writes of the checkpoint after it", writesOf(hs[3].PendingWrites, labels), []string{"s3 __no_writes__"})
		}
		return c.err
	},
}

var parallelInterrupts = Scenario{
	Name: "parallel_interrupts",
	Rule: "ENGINE-INTERRUPT-3",
	Doc:  "two Send tasks running interrupting subgraphs: a plain resume is refused before any write, a resume map answers one at a time, the answered task is restored from its saved writes",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "parallel_interrupts"}
		cnt := newCounter()
		child := c.build(refengine.NewStateGraph().
			AddKey("who", refengine.LastValue()).
			AddKey("answers", refengine.Reducer(refengine.AppendList, nil)).
			AddNode("ask", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
				who := fmt.Sprint(st["who"])
				cnt.hit("ask " + who)
				v, err := refengine.Interrupt(ctx, "question for "+who)
				if err != nil {
					return nil, err
				}
				return refengine.Update{"answers": []any{who + ":" + fmt.Sprint(v)}}, nil
			}).
			AddEdge(refengine.Start, "ask"), refengine.CompileOptions{})
		if !c.ok() {
			return c.err
		}
		root := c.build(refengine.NewStateGraph().
			AddKey("answers", refengine.Reducer(refengine.AppendList, nil)).
			AddNode("plan", func(context.Context, refengine.State) (refengine.Update, error) { cnt.hit("plan"); return nil, nil }).
			AddSubgraph("sub", child).
			AddEdge(refengine.Start, "plan").
			AddConditionalEdges("plan", func(context.Context, refengine.State) (refengine.Route, error) {
				return refengine.Route{Sends: []refengine.Send{{Node: "sub", Arg: refengine.State{"who": "A"}}, {Node: "sub", Arg: refengine.State{"who": "B"}}}}, nil
			}), refengine.CompileOptions{Saver: env.recorder()})
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-parallel-interrupts", refengine.DurabilitySync, true)
		res, err := root.Invoke(ctx, refengine.State{"answers": []any{}}, cfg)
		if !c.noErr("run 1", err) || !c.equal("interrupts after run 1", len(res.Interrupts), 2) {
			return c.err
		}
		idA, idB := res.Interrupts[0].ID, res.Interrupts[1].ID
		c.equal("interrupt values", []any{res.Interrupts[0].Value, res.Interrupts[1].Value}, []any{"question for A", "question for B"})
		hs, err := history(ctx, env.Saver, cfg.ThreadID, "")
		if !c.noErr("list", err) || !c.equal("root checkpoints", len(hs), 3) {
			return c.err
		}
		c1 := hs[2].Config.CheckpointID
		tA, tB := pushID(c1, 2, "sub", 0), pushID(c1, 2, "sub", 1)
		labels := map[string]string{tA: "A", tB: "B", spec.NullTaskID: "null"}
		c.equal("root writes after run 1", writesOf(hs[2].PendingWrites, labels), sortedPair("A __interrupt__", "B __interrupt__", tA < tB))
		for _, ns := range []string{"sub:" + tA, "sub:" + tB} {
			ch, err := history(ctx, env.Saver, cfg.ThreadID, ns)
			if c.noErr("list child", err) && c.equal("child checkpoints of "+ns, len(ch), 2) {
				c.equal("child parents metadata", ch[1].Metadata["parents"], map[string]any{"": c1})
			}
		}
		mark := env.mark()
		_, err = root.Invoke(ctx, refengine.Command{Resume: "x"}, cfg)
		c.truef(errors.Is(err, refengine.ErrMultipleInterrupts), "plain resume with two interrupts: got %v, want ErrMultipleInterrupts", err)
		c.equal("calls of the refused resume", methods(env.since(mark)), "GetTuple")
		res, err = root.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{idA: "a"}}, cfg)
		if !c.noErr("run 3", err) || !c.equal("interrupts after run 3", len(res.Interrupts), 1) {
			return c.err
		}
		c.equal("remaining interrupt", res.Interrupts[0].ID, idB)
		hs, err = history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) && c.equal("root checkpoints after run 3", len(hs), 3) {
			got := writesOf(hs[2].PendingWrites, labels)
			c.truef(!contains(got, "null __resume__"), "a resume map must not store a null resume write: %v", got)
			c.truef(contains(got, "A answers"), "task A's result was not saved: %v", got)
		}
		res, err = root.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{idB: "b"}}, cfg)
		env.done()
		if !c.noErr("run 4", err) {
			return c.err
		}
		c.truef(!res.Interrupted, "run 4 interrupted")
		c.equal("answers in Send order", res.Values["answers"], []any{"A:a", "B:b"})
		c.equal("executions", cnt.counts("plan", "ask A", "ask B"), []int64{1, 2, 3})
		hs, err = history(ctx, env.Saver, cfg.ThreadID, "")
		if c.noErr("list", err) {
			c.equal("root checkpoints", len(hs), 4)
		}
		return c.err
	},
}

func sortedPair(a, b string, inOrder bool) []string {
	if inOrder {
		return []string{a, b}
	}
	return []string{b, a}
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}
