package trace_test

import (
	"context"
	"fmt"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

// Record a deterministic run on one saver, write it as JSON and replay it
// against another saver.
func Example() {
	ctx := context.Background()
	rec := trace.Record(memory.New())
	g, err := refengine.NewStateGraph().
		AddKey("n", refengine.Reducer(refengine.AddNumbers, nil)).
		AddNode("inc", func(context.Context, refengine.State) (refengine.Update, error) {
			return refengine.Update{"n": 1}, nil
		}).
		AddEdge(refengine.Start, "inc").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		panic(err)
	}
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync,
		NewCheckpointID: trace.SequentialIDs(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))}
	if _, err := g.Invoke(ctx, refengine.State{"n": 41}, cfg); err != nil {
		panic(err)
	}

	data, err := trace.Marshal(rec.Calls())
	if err != nil {
		panic(err)
	}
	calls, err := trace.Unmarshal(data)
	if err != nil {
		panic(err)
	}
	var methods []string
	for _, c := range calls {
		methods = append(methods, c.Method)
	}
	fmt.Println(methods)
	fmt.Println("replay on a fresh saver:", trace.Replay(ctx, memory.New(), calls))
	// Output:
	// [GetTuple Put PutWrites Put PutWrites Put]
	// replay on a fresh saver: <nil>
}
