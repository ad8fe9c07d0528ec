package enginetest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The Go sides of the scenarios of bridge/python/scenarios/policies.py:
// retry policies, node caching, the durability modes on interrupts and
// subgraphs, and history reads.
func init() {
	for name, run := range map[string]func(context.Context, spec.Saver) error{
		"retry_policy":               retryPolicyRun,
		"retry_exhausted":            retryExhaustedRun,
		"cache_hit":                  cacheHitRun,
		"durability_sync_interrupt":  durabilityInterruptRun(refengine.DurabilitySync),
		"durability_async_interrupt": durabilityInterruptRun(refengine.DurabilityAsync),
		"durability_exit_interrupt":  durabilityInterruptRun(refengine.DurabilityExit),
		"durability_async_subgraph":  durabilitySubgraphRun(refengine.DurabilityAsync),
		"durability_exit_subgraph":   durabilitySubgraphRun(refengine.DurabilityExit),
		"history_before_limit":       historyBeforeLimitRun,
		"command_fork":               commandForkRun,
	} {
		lgpyOnly[name] = run
	}
}

var errBoom = errors.New("boom")

// retrying returns a node function that fails failures times and then logs
// name, retried inside the node up to attempts times: refengine has no
// retry policies, and LangGraph Python retries a task without the saver
// seeing the failed attempts (langgraph/pregel/_retry.py run_with_retry),
// so retrying inside the node produces the same saver traffic.
func retrying(failures, attempts int, name string) refengine.NodeFunc {
	runs := 0
	return func(context.Context, refengine.State) (refengine.Update, error) {
		var err error
		for range attempts {
			runs++
			if runs > failures {
				return refengine.Update{"log": []any{name}}, nil
			}
			err = errBoom
		}
		return nil, err
	}
}

func retryGraph(rec spec.Saver, failures, attempts int) (*refengine.Graph, error) {
	return logGraph().
		AddNode("a", logNode("a")).
		AddNode("b", retrying(failures, attempts, "b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b").
		Compile(refengine.CompileOptions{Saver: rec})
}

func retryPolicyRun(ctx context.Context, rec spec.Saver) error {
	g, err := retryGraph(rec, 2, 3)
	if err != nil {
		return err
	}
	_, err = g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-retry-policy", refengine.DurabilitySync))
	return err
}

func retryExhaustedRun(ctx context.Context, rec spec.Saver) error {
	g, err := retryGraph(rec, 2, 2)
	if err != nil {
		return err
	}
	cfg := lgjsRun("engine-retry-exhausted", refengine.DurabilitySync)
	if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); !errors.Is(err, errBoom) {
		return fmt.Errorf("run 1: %v, want boom", err)
	}
	_, err = g.Invoke(ctx, nil, cfg)
	return err
}

// cacheHitRun: the linear graph on two threads. LangGraph Python's second
// run takes a's writes from its node cache and saves them as the task's
// writes (langgraph/pregel/_loop.py:1784, put_writes with cached=True),
// which is what running a again saves.
func cacheHitRun(ctx context.Context, rec spec.Saver) error {
	g, err := linearGraph(rec)
	if err != nil {
		return err
	}
	for _, thread := range []string{"engine-cache-1", "engine-cache-2"} {
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun(thread, refengine.DurabilitySync)); err != nil {
			return err
		}
	}
	return nil
}

// durabilityInterruptRun: START -> a -> b, b asking "?", with durability d,
// then a resume.
func durabilityInterruptRun(d refengine.Durability) func(context.Context, spec.Saver) error {
	return func(ctx context.Context, rec spec.Saver) error {
		g, err := logGraph().
			AddNode("a", logNode("a")).
			AddNode("b", askNode("b:")).
			AddEdge(refengine.Start, "a").AddEdge("a", "b").
			Compile(refengine.CompileOptions{Saver: rec})
		if err != nil {
			return err
		}
		cfg := lgjsRun("engine-durability-"+string(d), d)
		if _, err := g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, cfg); err != nil {
			return err
		}
		res, err := g.Invoke(ctx, refengine.Command{Resume: "ok"}, cfg)
		if err == nil && fmt.Sprint(res.Values["log"]) != "[a b:ok]" {
			err = fmt.Errorf("log = %v", res.Values["log"])
		}
		return err
	}
}

// durabilitySubgraphRun: START -> sub (START -> x -> y) -> after, with
// durability d.
func durabilitySubgraphRun(d refengine.Durability) func(context.Context, spec.Saver) error {
	return func(ctx context.Context, rec spec.Saver) error {
		child, err := logGraph().
			AddNode("x", logNode("x")).AddNode("y", logNode("y")).
			AddEdge(refengine.Start, "x").AddEdge("x", "y").
			Compile(refengine.CompileOptions{})
		if err != nil {
			return err
		}
		g, err := subgraphGraph(rec, child)
		if err != nil {
			return err
		}
		_, err = g.Invoke(ctx, refengine.State{"log": []any{}, "q": "hi"}, lgjsRun("engine-subgraph-"+string(d), d))
		return err
	}
}

// historyBeforeLimitRun: the linear graph, its history, the two
// checkpoints before the second newest, and the state of the third newest.
func historyBeforeLimitRun(ctx context.Context, rec spec.Saver) error {
	g, cfg, hist, err := linearHistory(ctx, rec, "engine-history-before")
	if err != nil {
		return err
	}
	if _, err := g.History(ctx, cfg, refengine.HistoryOptions{Before: hist[1].Config.CheckpointID, Limit: 2}); err != nil {
		return err
	}
	at := cfg
	at.CheckpointID = hist[2].Config.CheckpointID
	_, err = g.GetState(ctx, at, refengine.StateOptions{})
	return err
}

// commandForkRun: the linear graph, then a Command (update q, goto b) sent
// to its step-0 checkpoint: the run forks it, the fork carries the
// Command's writes, and a and b run.
func commandForkRun(ctx context.Context, rec spec.Saver) error {
	g, cfg, hist, err := linearHistory(ctx, rec, "engine-command-fork")
	if err != nil {
		return err
	}
	at := stepZero(cfg, hist)
	res, err := g.Invoke(ctx, refengine.Command{Update: map[string]any{"q": "again"}, Goto: []string{"b"}}, at)
	if err == nil && fmt.Sprint(res.Values["q"], " ", res.Values["log"]) != "again [a b b]" {
		err = fmt.Errorf("values = %v", res.Values)
	}
	return err
}
