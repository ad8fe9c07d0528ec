package refengine_test

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
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
