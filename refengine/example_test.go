package refengine_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// A graph that asks for approval, interrupted and resumed on the in-memory
// adapter.
func Example() {
	ctx := context.Background()
	saver := memory.New()

	g, err := refengine.NewStateGraph().
		AddKey("draft", refengine.LastValue()).
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("write", func(ctx context.Context, s refengine.State) (refengine.Update, error) {
			return refengine.Update{"draft": "hello", "log": []any{"written"}}, nil
		}).
		AddNode("review", func(ctx context.Context, s refengine.State) (refengine.Update, error) {
			answer, err := refengine.Interrupt(ctx, fmt.Sprintf("approve %q?", s["draft"]))
			if err != nil {
				return nil, err // the run stops here until it is resumed
			}
			return refengine.Update{"log": []any{"review: " + fmt.Sprint(answer)}}, nil
		}).
		AddEdge(refengine.Start, "write").
		AddEdge("write", "review").
		AddEdge("review", refengine.End).
		Compile(refengine.CompileOptions{Saver: saver})
	if err != nil {
		panic(err)
	}

	cfg := refengine.RunConfig{ThreadID: "thread-1"}
	res, err := g.Invoke(ctx, refengine.State{"log": []any{}}, cfg)
	if err != nil {
		panic(err)
	}
	fmt.Println("interrupted:", res.Interrupted, res.Interrupts[0].Value)

	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("next:", snap.Next)

	res, err = g.Invoke(ctx, refengine.Command{Resume: "yes"}, cfg)
	if err != nil {
		panic(err)
	}
	fmt.Println("log:", res.Values["log"])

	history, err := g.History(ctx, cfg, refengine.HistoryOptions{})
	if err != nil {
		panic(err)
	}
	for _, h := range history {
		fmt.Println(h.Metadata["source"], h.Metadata["step"], h.Next)
	}
	// Output:
	// interrupted: true approve "hello"?
	// next: [review]
	// log: [written review: yes]
	// loop 2 []
	// loop 1 [review]
	// loop 0 [write]
	// input -1 [__start__]
}

// A node that calls a compiled graph twice: each call is a subgraph run of
// its own, in the task's namespace and then in that namespace plus "|1".
func ExampleGraph_InvokeFromNode() {
	ctx := context.Background()
	saver := memory.New()

	summarize, err := refengine.NewStateGraph().
		AddKey("text", refengine.LastValue()).
		AddKey("summary", refengine.LastValue()).
		AddNode("summarize", func(ctx context.Context, s refengine.State) (refengine.Update, error) {
			return refengine.Update{"summary": fmt.Sprint("short ", s["text"])}, nil
		}).
		AddEdge(refengine.Start, "summarize").
		Compile(refengine.CompileOptions{}) // a subgraph uses its caller's saver
	if err != nil {
		panic(err)
	}
	g, err := refengine.NewStateGraph().
		AddKey("summaries", refengine.Reducer(refengine.AppendList, []any{})).
		AddNode("writer", func(ctx context.Context, s refengine.State) (refengine.Update, error) {
			var out []any
			for _, text := range []string{"report", "memo"} {
				res, err := summarize.InvokeFromNode(ctx, refengine.State{"text": text})
				if err != nil {
					return nil, err // an interrupt in the subgraph must be returned
				}
				out = append(out, res["summary"])
			}
			return refengine.Update{"summaries": out}, nil
		}).
		AddEdge(refengine.Start, "writer").
		Compile(refengine.CompileOptions{Saver: saver})
	if err != nil {
		panic(err)
	}

	res, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "thread-1"})
	if err != nil {
		panic(err)
	}
	fmt.Println("summaries:", res.Values["summaries"])

	namespaces := map[string]bool{}
	for tup, err := range saver.List(ctx, spec.ListOptions{ThreadID: "thread-1", AllNamespaces: true}) {
		if err != nil {
			panic(err)
		}
		if ns := tup.Config.Namespace; ns != "" {
			_, counter, _ := strings.Cut(ns, spec.NSSep)
			namespaces[fmt.Sprintf("%s (level %q)", spec.RecastNamespace(ns), counter)] = true
		}
	}
	fmt.Println("subgraph lineages:", slices.Sorted(maps.Keys(namespaces)))
	// Output:
	// summaries: [short report short memo]
	// subgraph lineages: [writer (level "") writer (level "1")]
}

// A node that steers the graph with a Command: an update, and the node to
// run next.
func ExampleStateGraph_AddCommandNode() {
	ctx := context.Background()
	g, err := refengine.NewStateGraph().
		AddKey("amount", refengine.LastValue()).
		AddKey("route", refengine.LastValue()).
		AddCommandNode("triage", func(ctx context.Context, s refengine.State) (refengine.Command, error) {
			if s["amount"].(int64) > 100 {
				return refengine.Command{Goto: []string{"review"}, Update: map[string]any{"route": "manual"}}, nil
			}
			return refengine.Command{Goto: []string{refengine.End}, Update: map[string]any{"route": "auto"}}, nil
		}).
		AddNode("review", func(ctx context.Context, s refengine.State) (refengine.Update, error) {
			return refengine.Update{"route": "reviewed"}, nil
		}).
		AddEdge(refengine.Start, "triage").
		Compile(refengine.CompileOptions{Saver: memory.New()})
	if err != nil {
		panic(err)
	}
	for i, amount := range []int{50, 500} {
		res, err := g.Invoke(ctx, refengine.State{"amount": amount}, refengine.RunConfig{ThreadID: fmt.Sprint("thread-", i)})
		if err != nil {
			panic(err)
		}
		fmt.Println(amount, res.Values["route"])
	}
	// Output:
	// 50 auto
	// 500 reviewed
}
