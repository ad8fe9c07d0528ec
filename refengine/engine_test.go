package refengine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

func compile(t *testing.T, g *refengine.StateGraph, opts refengine.CompileOptions) *refengine.Graph {
	t.Helper()
	cg, err := g.Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	return cg
}

func put(name string, key string, v any) refengine.NodeFunc {
	return func(context.Context, refengine.State) (refengine.Update, error) {
		return refengine.Update{key: v}, nil
	}
}

func TestBuilderRejectsBadGraphs(t *testing.T) {
	noop := put("", "x", 1)
	cases := map[string]*refengine.StateGraph{
		"reserved node":      refengine.NewStateGraph().AddNode("__start__", noop),
		"colon in node":      refengine.NewStateGraph().AddNode("a:b", noop),
		"pipe in node":       refengine.NewStateGraph().AddNode("a|b", noop),
		"duplicate node":     refengine.NewStateGraph().AddNode("a", noop).AddNode("a", noop),
		"nil node":           refengine.NewStateGraph().AddNode("a", nil),
		"reserved key":       refengine.NewStateGraph().AddKey("branch:to:x", refengine.LastValue()),
		"duplicate key":      refengine.NewStateGraph().AddKey("x", refengine.LastValue()).AddKey("x", refengine.LastValue()),
		"reducer without fn": refengine.NewStateGraph().AddKey("x", refengine.Reducer(nil, nil)),
		"no start edge":      refengine.NewStateGraph().AddNode("a", noop),
		"edge to unknown":    refengine.NewStateGraph().AddNode("a", noop).AddEdge(refengine.Start, "a").AddEdge("a", "b"),
		"edge from unknown":  refengine.NewStateGraph().AddNode("a", noop).AddEdge(refengine.Start, "a").AddEdge("b", "a"),
		"edge into start":    refengine.NewStateGraph().AddNode("a", noop).AddEdge("a", refengine.Start),
		"short join":         refengine.NewStateGraph().AddNode("a", noop).AddEdge(refengine.Start, "a").AddJoin([]string{"a"}, "a"),
		"join from unknown":  refengine.NewStateGraph().AddNode("a", noop).AddEdge(refengine.Start, "a").AddJoin([]string{"a", "b"}, "a"),
	}
	for name, g := range cases {
		if _, err := g.Compile(refengine.CompileOptions{}); !errors.Is(err, refengine.ErrInvalidGraph) {
			t.Errorf("%s: Compile error = %v, want ErrInvalidGraph", name, err)
		}
	}
	g := refengine.NewStateGraph().AddNode("a", noop).AddEdge(refengine.Start, "a")
	if _, err := g.Compile(refengine.CompileOptions{InterruptBefore: []string{"nope"}}); !errors.Is(err, refengine.ErrInvalidGraph) {
		t.Errorf("interrupt on unknown node: %v", err)
	}
}

func TestInvokeRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	g := compile(t, refengine.NewStateGraph().AddKey("x", refengine.LastValue()).
		AddNode("a", put("a", "x", 1)).AddEdge(refengine.Start, "a"), refengine.CompileOptions{Saver: s})
	if _, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{}); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("empty thread: %v", err)
	}
	if _, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t", Namespace: "sub:1"}); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("Invoke in a subgraph namespace: %v", err)
	}
	if hs := history(t, s, "t", ""); len(hs) > 0 {
		t.Errorf("a rejected Invoke stored %d checkpoints", len(hs))
	}
	if _, err := g.Invoke(ctx, nil, refengine.RunConfig{ThreadID: "t"}); !errors.Is(err, refengine.ErrEmptyInput) {
		t.Errorf("nothing to resume: %v", err)
	}
	if _, err := g.Invoke(ctx, (*refengine.Command)(nil), refengine.RunConfig{ThreadID: "t"}); !errors.Is(err, refengine.ErrEmptyInput) {
		t.Errorf("nil *Command (continue) with nothing to resume: %v", err)
	}
	if _, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t", Durability: "never"}); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("bad durability: %v", err)
	}
	if _, err := g.Invoke(ctx, refengine.State{"x": struct{}{}}, refengine.RunConfig{ThreadID: "t"}); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Errorf("unsupported value: %v", err)
	}
	if _, err := g.Invoke(ctx, nil, refengine.RunConfig{ThreadID: "t", CheckpointID: "1f00fd5f-2036-6ce4-bfff-ac42e9890362"}); !errors.Is(err, spec.ErrNotFound) {
		t.Errorf("replay of a missing checkpoint: %v", err)
	}
	if _, err := g.Invoke(ctx, refengine.Command{Resume: "x"}, refengine.RunConfig{ThreadID: "t"}); !errors.Is(err, refengine.ErrEmptyInput) {
		t.Errorf("command on a fresh thread: %v", err)
	}
	if _, err := g.Invoke(ctx, refengine.State{"x": 1}, refengine.RunConfig{ThreadID: "t2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, refengine.Command{Goto: []string{"zzz"}}, refengine.RunConfig{ThreadID: "t2"}); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("goto unknown node: %v", err)
	}
	if _, err := g.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{"not-an-id": 1}}, refengine.RunConfig{ThreadID: "t2"}); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("bad resume map key: %v", err)
	}
	if _, err := g.Invoke(ctx, refengine.Command{}, refengine.RunConfig{ThreadID: "t2"}); !errors.Is(err, refengine.ErrEmptyInput) {
		t.Errorf("empty command: %v", err)
	}
	noSaver := compile(t, refengine.NewStateGraph().AddNode("a", put("a", "x", 1)).AddEdge(refengine.Start, "a"), refengine.CompileOptions{})
	if _, err := noSaver.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t"}); !errors.Is(err, refengine.ErrNoSaver) {
		t.Errorf("no saver: %v", err)
	}
	if _, err := refengine.Interrupt(ctx, "x"); !errors.Is(err, refengine.ErrNotInTask) {
		t.Errorf("Interrupt outside a node: %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	s := memory.New()
	ctx, cancel := context.WithCancel(context.Background())
	g := compile(t, refengine.NewStateGraph().AddKey("x", refengine.LastValue()).
		AddNode("a", func(context.Context, refengine.State) (refengine.Update, error) {
			cancel()
			return refengine.Update{"x": 1}, nil
		}).
		AddNode("b", put("b", "x", 2)).
		AddEdge(refengine.Start, "a").AddEdge("a", "b"), refengine.CompileOptions{Saver: s})
	_, err := g.Invoke(ctx, refengine.State{"x": 0}, refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// Two parallel nodes writing one last-value key: both writes are saved, the
// step fails when applied, no checkpoint is written, and resuming repeats
// the error without re-running the nodes (LangGraph S13).
func TestConcurrentLastValueWrites(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("a", "b")
	node := func(name string) refengine.NodeFunc {
		return func(context.Context, refengine.State) (refengine.Update, error) {
			runs.n[name].Add(1)
			return refengine.Update{"x": name}, nil
		}
	}
	g := compile(t, refengine.NewStateGraph().AddKey("x", refengine.LastValue()).
		AddNode("a", node("a")).AddNode("b", node("b")).
		AddEdge(refengine.Start, "a").AddEdge(refengine.Start, "b"), refengine.CompileOptions{Saver: s})
	cfg := refengine.RunConfig{ThreadID: "t"}
	for range 2 {
		if _, err := g.Invoke(ctx, refengine.State{}, cfg); !errors.Is(err, refengine.ErrInvalidUpdate) {
			t.Fatalf("got %v, want ErrInvalidUpdate", err)
		}
		cfg2 := cfg
		if _, err := g.Invoke(ctx, nil, cfg2); !errors.Is(err, refengine.ErrInvalidUpdate) {
			t.Fatalf("resume: got %v, want ErrInvalidUpdate", err)
		}
	}
	hs := history(t, s, "t", "")
	// Two inputs, each with its input and step-0 checkpoint; the failing step
	// never produced one.
	if len(hs) != 4 {
		t.Fatalf("%d checkpoints, want 4", len(hs))
	}
	if got := len(hs[1].PendingWrites); got != 2 {
		t.Errorf("C(0) has %d writes, want both nodes' writes", got)
	}
	// The second input discarded the failed step, so each node ran twice.
	if runs.get("a") != 2 || runs.get("b") != 2 {
		t.Errorf("runs a=%d b=%d, want 2 each", runs.get("a"), runs.get("b"))
	}
}

func TestJoinBarrier(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("a", "b", "c")
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", runs.logNode("a")).AddNode("b", runs.logNode("b")).AddNode("c", runs.logNode("c")).
		AddEdge(refengine.Start, "a").AddEdge(refengine.Start, "b").
		AddJoin([]string{"a", "b"}, "c"), refengine.CompileOptions{Saver: s})
	res, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t", Deterministic: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Values["log"]; !spec.Equal(got, []any{"a", "b", "c"}) {
		t.Errorf("log = %v", got)
	}
	hs := history(t, s, "t", "")
	if len(hs) != 4 {
		t.Fatalf("%d checkpoints, want 4", len(hs))
	}
	if got := hs[2].Checkpoint.ChannelValues["join:a+b:c"]; !spec.Equal(got, []any{"a", "b"}) {
		t.Errorf("barrier after a and b = %#v, want [a b]", got)
	}
	if got := hs[3].Checkpoint.ChannelValues["join:a+b:c"]; !spec.Equal(got, []any{}) {
		t.Errorf("barrier after c = %#v, want an empty stored set", got)
	}
	if runs.get("c") != 1 {
		t.Errorf("c ran %d times", runs.get("c"))
	}
}

func TestRecursionLimit(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	g := compile(t, refengine.NewStateGraph().
		AddKey("n", refengine.Reducer(refengine.AddNumbers, nil)).
		AddNode("loop", put("loop", "n", 1)).
		AddEdge(refengine.Start, "loop").AddEdge("loop", "loop"), refengine.CompileOptions{Saver: s})
	_, err := g.Invoke(ctx, refengine.State{"n": 0}, refengine.RunConfig{ThreadID: "t", RecursionLimit: 3, Durability: refengine.DurabilitySync})
	if !errors.Is(err, refengine.ErrRecursionLimit) {
		t.Fatalf("got %v, want ErrRecursionLimit", err)
	}
	// The run may go up to step -1+3+1 = 3: checkpoints of steps -1 to 3,
	// then the tick of step 4 is refused.
	if hs := history(t, s, "t", ""); len(hs) != 5 {
		t.Errorf("%d checkpoints, want 5", len(hs))
	}
}

// Command with goto and update on a finished thread: the null-task writes
// are saved on the latest checkpoint, the node runs, no input checkpoint
// (LangGraph S14).
func TestCommandGotoUpdate(t *testing.T) {
	ctx := context.Background()
	rec := trace.Record(memory.New())
	runs := newCounter("a", "b")
	g := compile(t, refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", runs.logNode("a")).AddNode("b", runs.logNode("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b"), refengine.CompileOptions{Saver: rec})
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync}
	if _, err := g.Invoke(ctx, refengine.State{"q": "hi"}, cfg); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	res, err := g.Invoke(ctx, refengine.Command{Goto: []string{"b"}, Update: map[string]any{"q": "again"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Equal(res.Values["log"], []any{"a", "b", "b"}) || res.Values["q"] != "again" {
		t.Errorf("values = %v", res.Values)
	}
	calls := rec.Calls()
	if got := methodsOf(calls); !slices.Equal(got, []string{"GetTuple", "PutWrites", "PutWrites", "Put"}) {
		t.Fatalf("calls = %v", got)
	}
	if calls[1].TaskID != spec.NullTaskID || len(calls[1].Writes) != 2 || calls[1].Writes[0] != (spec.Write{Channel: "branch:to:b", Value: "__start__"}) {
		t.Errorf("null writes = %+v", calls[1])
	}
	if calls[3].Metadata["source"] != "loop" || calls[3].Metadata["step"] != int64(3) {
		t.Errorf("checkpoint metadata = %v", calls[3].Metadata)
	}
}

// New input on a thread with pending work discards it: the input checkpoint
// gets step k+1 and the pending node never runs (LangGraph S12).
func TestNewInputDiscardsPendingTasks(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("a", "b")
	g := compile(t, refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("a", runs.logNode("a")).AddNode("b", runs.logNode("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b"),
		refengine.CompileOptions{Saver: s, InterruptBefore: []string{"b"}})
	cfg := refengine.RunConfig{ThreadID: "t", Durability: refengine.DurabilitySync}
	for range 2 {
		res, err := g.Invoke(ctx, refengine.State{}, cfg)
		if err != nil || !res.Interrupted {
			t.Fatalf("res=%v err=%v", res, err)
		}
	}
	hs := history(t, s, "t", "")
	var got []any
	for _, h := range hs {
		got = append(got, []any{h.Metadata["source"], h.Metadata["step"]})
	}
	want := []any{[]any{"input", -1}, []any{"loop", 0}, []any{"loop", 1}, []any{"input", 2}, []any{"loop", 3}, []any{"loop", 4}}
	if nw, _ := spec.Normalize(want); !spec.Equal(got, nw) {
		t.Errorf("history = %v, want %v", got, want)
	}
	if runs.get("a") != 2 || runs.get("b") != 0 {
		t.Errorf("runs a=%d b=%d", runs.get("a"), runs.get("b"))
	}
	if v := hs[5].Checkpoint.ChannelValues["log"]; !spec.Equal(v, []any{"a", "a"}) {
		t.Errorf("log = %v", v)
	}
}

func methodsOf(calls []trace.Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Method
	}
	return out
}

func TestPanickingNodeFailsItsTask(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	g := compile(t, refengine.NewStateGraph().AddKey("x", refengine.LastValue()).
		AddNode("a", func(context.Context, refengine.State) (refengine.Update, error) { panic("kaboom") }).
		AddEdge(refengine.Start, "a"), refengine.CompileOptions{Saver: s})
	_, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t"})
	var te *refengine.TaskError
	if !errors.Is(err, refengine.ErrNodePanic) || !errors.As(err, &te) || te.Node != "a" {
		t.Fatalf("got %v, want a's task to fail with ErrNodePanic", err)
	}
	hs := history(t, s, "t", "")
	if len(hs) != 2 || len(hs[1].PendingWrites) != 1 || hs[1].PendingWrites[0].Channel != spec.ErrorChannel {
		t.Fatalf("the panic was not saved as an __error__ write: %+v", hs[len(hs)-1].PendingWrites)
	}
}

// A panicking reducer fails the run with ErrReducerPanic instead of
// escaping Invoke; the step's writes stay saved, no checkpoint follows.
func TestPanickingReducerFailsTheRun(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	boom := func(any, any) (any, error) { panic("reducer kaboom") }
	g := compile(t, refengine.NewStateGraph().AddKey("x", refengine.Reducer(boom, int64(0))).
		AddNode("a", func(context.Context, refengine.State) (refengine.Update, error) { return refengine.Update{"x": 1}, nil }).
		AddEdge(refengine.Start, "a"), refengine.CompileOptions{Saver: s})
	_, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync})
	if !errors.Is(err, refengine.ErrReducerPanic) {
		t.Fatalf("got %v, want ErrReducerPanic", err)
	}
	hs := history(t, s, "t", "")
	if len(hs) != 2 || len(hs[1].PendingWrites) == 0 || hs[1].PendingWrites[0].Channel != "x" {
		t.Fatalf("want the input and step-0 checkpoints with a's write pending, got %d checkpoints", len(hs))
	}
}
