package enginetest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// linearGraph is START -> a -> b -> END with q (last value) and log
// (append reducer), as in pregel-semantics S1.
func linearGraph(c *checker, cnt *counter, s spec.Saver) *refengine.Graph {
	g := refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", cnt.logNode("a")).
		AddNode("b", cnt.logNode("b")).
		AddEdge(refengine.Start, "a").
		AddEdge("a", "b").
		AddEdge("b", refengine.End)
	return c.build(g, refengine.CompileOptions{Saver: s})
}

var linearInput = refengine.State{"q": "hi", "log": []any{}}

// checkLinearStore checks what a completed run of the linear graph stored:
// four checkpoints with LangGraph's exact values, versions, versions_seen,
// updated channels, metadata, parents and pending writes.
func checkLinearStore(ctx context.Context, c *checker, s spec.Saver, thread string) []*spec.Tuple {
	hs, err := history(ctx, s, thread, "")
	if !c.noErr("list", err) || !c.equal("checkpoints", len(hs), 4) {
		return nil
	}
	c.equal("sources", sources(hs), []any{"input", "loop", "loop", "loop"})
	c.equal("steps", steps(hs), []any{-1, 0, 1, 2})
	c.parentChain("root", hs)
	for i, t := range hs {
		c.equal("parents metadata", t.Metadata["parents"], map[string]any{})
		c.equal("checkpoint id clock sequence", t.Config.CheckpointID[19:23], []string{"bfff", "8000", "8001", "8002"}[i])
	}
	c.equal("C(-1) values", hs[0].Checkpoint.ChannelValues, map[string]any{"__start__": map[string]any{"q": "hi", "log": []any{}}})
	c.equal("C(0) values", hs[1].Checkpoint.ChannelValues, map[string]any{"q": "hi", "log": []any{}, "branch:to:a": nil})
	c.equal("C(1) values", hs[2].Checkpoint.ChannelValues, map[string]any{"q": "hi", "log": []any{"a"}, "branch:to:b": nil})
	c.equal("C(2) values", hs[3].Checkpoint.ChannelValues, map[string]any{"q": "hi", "log": []any{"a", "b"}})
	c.equal("C(-1) updated", hs[0].Checkpoint.UpdatedChannels, []string{"__start__"})
	c.equal("C(0) updated", hs[1].Checkpoint.UpdatedChannels, []string{"branch:to:a", "log", "q"})
	c.equal("C(1) updated", hs[2].Checkpoint.UpdatedChannels, []string{"branch:to:b", "log"})
	c.equal("C(2) updated", hs[3].Checkpoint.UpdatedChannels, []string{"log"})
	vs := func(i int) spec.Versions { return hs[i].Checkpoint.ChannelVersions }
	c.equal("C(0) channels", slices.Sorted(maps.Keys(vs(1))), []string{"__start__", "branch:to:a", "log", "q"})
	c.truef(vs(1)["q"] == vs(1)["log"] && vs(1)["q"] == vs(1)["branch:to:a"] && vs(1)["q"] == vs(1)["__start__"],
		"C(0): channels changed in one step must share one version: %v", vs(1))
	c.truef(spec.CompareVersions(vs(1)["q"], vs(0)["__start__"]) > 0, "C(0) versions not greater than C(-1)'s: %v %v", vs(1), vs(0))
	c.truef(spec.CompareVersions(vs(3)["log"], vs(2)["log"]) > 0 && spec.CompareVersions(vs(2)["log"], vs(1)["log"]) > 0,
		"log versions not strictly increasing")
	c.equal("C(2) versions_seen", slices.Sorted(maps.Keys(hs[3].Checkpoint.VersionsSeen)), []string{"__input__", "__start__", "a", "b"})
	c.equal("C(2) versions_seen[b]", hs[3].Checkpoint.VersionsSeen["b"], map[string]any{"branch:to:b": string(vs(2)["branch:to:b"])})
	ids := hs
	tStart := pullID(ids[0].Config.CheckpointID, "", 0, "__start__", "__start__")
	tA := pullID(ids[1].Config.CheckpointID, "", 1, "a", "branch:to:a")
	tB := pullID(ids[2].Config.CheckpointID, "", 2, "b", "branch:to:b")
	labels := map[string]string{tStart: "start", tA: "a", tB: "b"}
	c.equal("C(-1) pending writes", slices.Sorted(slices.Values(writesOf(hs[0].PendingWrites, labels))), []string{"start branch:to:a", "start log", "start q"})
	c.equal("C(0) pending writes", writesOf(hs[1].PendingWrites, labels), []string{"a log", "a branch:to:b"})
	c.equal("C(1) pending writes", writesOf(hs[2].PendingWrites, labels), []string{"b log"})
	c.equal("C(2) pending writes", writesOf(hs[3].PendingWrites, labels), []string{})
	if c.ok() {
		c.equal("a's log write", hs[1].PendingWrites[0].Value, []any{"a"})
	}
	return hs
}

var linear = Scenario{
	Name: "linear",
	Rule: "ENGINE-LINEAR-1",
	Doc:  "a linear graph stores LangGraph's exact checkpoints, pending writes and call sequence (sync durability)",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "linear"}
		cnt := newCounter()
		rec := env.recorder()
		g := linearGraph(c, cnt, rec)
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-linear", refengine.DurabilitySync, true)
		res, err := g.Invoke(ctx, linearInput, cfg)
		env.done()
		if !c.noErr("invoke", err) {
			return c.err
		}
		c.equal("final state", res.Values, map[string]any{"q": "hi", "log": []any{"a", "b"}})
		c.equal("executions a,b", cnt.counts("a", "b"), []int64{1, 1})
		hs := checkLinearStore(ctx, c, env.Saver, cfg.ThreadID)
		if !c.ok() {
			return c.err
		}
		calls := env.Calls
		if !c.equal("call sequence", methods(calls), "GetTuple,Put,PutWrites,Put,PutWrites,Put,PutWrites,Put") {
			return c.err
		}
		c.truef(calls[0].NotFound, "first GetTuple should find nothing, got error %q", calls[0].Err)
		c.equal("GetTuple config", calls[0].Config, spec.Config{ThreadID: cfg.ThreadID})
		wantNew := [][]string{{"__start__"}, {"__start__", "branch:to:a", "log", "q"}, {"branch:to:a", "branch:to:b", "log"}, {"branch:to:b", "log"}}
		for i, p := range []int{1, 3, 5, 7} {
			call := calls[p]
			wantParent := ""
			if i > 0 {
				wantParent = hs[i-1].Config.CheckpointID
			}
			c.equal("Put parent", call.Config, spec.Config{ThreadID: cfg.ThreadID, CheckpointID: wantParent})
			c.equal("Put checkpoint ID", call.Checkpoint.ID, hs[i].Config.CheckpointID)
			c.equal("Put new_versions channels", slices.Sorted(maps.Keys(call.NewVersions)), wantNew[i])
			c.equal("Put metadata", call.Metadata, map[string]any{"source": []string{"input", "loop", "loop", "loop"}[i], "step": i - 1, "parents": map[string]any{}})
		}
		for i, p := range []int{2, 4, 6} {
			call := calls[p]
			c.equal("PutWrites target", call.Config, spec.Config{ThreadID: cfg.ThreadID, CheckpointID: hs[i].Config.CheckpointID})
			c.equal("PutWrites task path", call.TaskPath, []string{"~__pregel_pull, __start__", "~__pregel_pull, a", "~__pregel_pull, b"}[i])
		}
		c.equal("a's PutWrites", calls[4].Writes, []spec.Write{{Channel: "log", Value: []any{"a"}}, {Channel: "branch:to:b"}})
		snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
		if c.noErr("get state", err) {
			c.equal("next after completion", snap.Next, []string{})
			c.equal("state values", snap.Values, res.Values)
		}
		hist, err := g.History(ctx, cfg, refengine.HistoryOptions{})
		if c.noErr("history", err) && c.equal("history length", len(hist), 4) {
			var next []any
			for _, h := range hist {
				next = append(next, h.Next)
			}
			c.equal("history next, newest first", next, []any{[]any{}, []any{"b"}, []any{"a"}, []any{"__start__"}})
		}
		return c.err
	},
}

var linearAsync = Scenario{
	Name: "linear_async",
	Rule: "ENGINE-ASYNC-1",
	Doc:  "with async durability the writes of a superstep reach the saver before the checkpoint they belong to, and are kept",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "linear_async"}
		cnt := newCounter()
		g := linearGraph(c, cnt, env.recorder())
		if !c.ok() {
			return c.err
		}
		cfg := env.run("engine-linear-async", refengine.DurabilityAsync, true)
		res, err := g.Invoke(ctx, linearInput, cfg)
		env.done()
		if !c.noErr("invoke", err) {
			return c.err
		}
		c.equal("final state", res.Values, map[string]any{"q": "hi", "log": []any{"a", "b"}})
		// Deterministic async mode issues each Put after the next step's writes.
		c.equal("call sequence", methods(env.Calls), "GetTuple,PutWrites,Put,PutWrites,Put,PutWrites,Put,Put")
		checkLinearStore(ctx, c, env.Saver, cfg.ThreadID)
		return c.err
	},
}

var linearConcurrent = Scenario{
	Name: "linear_concurrent",
	Rule: "ENGINE-ASYNC-2",
	Doc:  "several threads run concurrently with background saver calls (async durability) and each stores the exact linear history",
	Run: func(ctx context.Context, env *Env) error {
		c := &checker{name: "linear_concurrent"}
		cnt := newCounter()
		const n = 4
		gate := newOverlapGate(env.recorder(), n)
		g := linearGraph(c, cnt, gate)
		if !c.ok() {
			return c.err
		}
		errs := make(chan error, n)
		for i := range n {
			go func() {
				_, err := g.Invoke(ctx, linearInput, env.run("engine-conc-"+string(rune('a'+i)), refengine.DurabilityAsync, false))
				gate.release() // a run that ended early must not hold the others
				errs <- err
			}()
		}
		for range n {
			c.noErr("invoke", <-errs)
		}
		env.done()
		c.equal("executions a,b", cnt.counts("a", "b"), []int64{n, n})
		for i := range n {
			checkLinearStore(ctx, c, env.Saver, "engine-conc-"+string(rune('a'+i)))
		}
		return c.err
	},
}

// overlapGate makes the threads of linear_concurrent overlap in the saver
// for certain: it holds back each thread's input checkpoint until every
// thread has stored its first writes (with async durability they do not
// wait for that Put), so every thread has writes waiting for a checkpoint
// at the same time. It only delays calls, which async durability allows;
// release lets everything through, so a run that fails early cannot block
// the others.
type overlapGate struct {
	spec.Saver
	n int

	mu      sync.Mutex
	writers map[string]bool
	open    chan struct{}
}

func newOverlapGate(s spec.Saver, n int) *overlapGate {
	return &overlapGate{Saver: s, n: n, writers: map[string]bool{}, open: make(chan struct{})}
}

func (g *overlapGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// Put waits, for an input checkpoint, until the gate opens.
func (g *overlapGate) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	if md["source"] == "input" {
		select {
		case <-g.open:
		case <-ctx.Done():
			return spec.Config{}, ctx.Err()
		}
	}
	return g.Saver.Put(ctx, cfg, cp, md, nv)
}

// PutWrites opens the gate once every thread has stored writes.
func (g *overlapGate) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	err := g.Saver.PutWrites(ctx, cfg, writes, taskID, taskPath)
	g.mu.Lock()
	g.writers[cfg.ThreadID] = true
	full := len(g.writers) == g.n
	g.mu.Unlock()
	if full {
		g.release()
	}
	return err
}

// NextVersion delegates to the wrapped saver's generator.
func (g *overlapGate) NextVersion(cur spec.Version) spec.Version {
	if vg, ok := g.Saver.(spec.VersionGenerator); ok {
		return vg.NextVersion(cur)
	}
	return spec.NextVersion(cur)
}
