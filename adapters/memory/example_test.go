package memory_test

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

// A runtime puts a checkpoint after each superstep and the writes of each
// task against the checkpoint the task started from; readers get the latest
// checkpoint with its pending writes.
func Example() {
	ctx := context.Background()
	saver := memory.New()

	v1 := saver.NextVersion("")
	first := spec.Checkpoint{
		V: 4, ID: spec.NewCheckpointID(-1), TS: "2026-01-01T00:00:00Z",
		ChannelValues:   map[string]any{"messages": []any{"hi"}},
		ChannelVersions: spec.Versions{"messages": v1},
	}
	cfg, _ := saver.Put(ctx, spec.Config{ThreadID: "thread-1"}, first,
		spec.Metadata{"source": "input", "step": -1}, spec.Versions{"messages": v1})

	_ = saver.PutWrites(ctx, cfg, []spec.Write{{Channel: "messages", Value: "hello back"}}, "task-1", "")

	latest, _ := saver.GetTuple(ctx, spec.Config{ThreadID: "thread-1"})
	fmt.Println(latest.Metadata["source"], latest.Checkpoint.ChannelValues["messages"])
	for _, w := range latest.PendingWrites {
		fmt.Println(w.TaskID, w.Channel, w.Value)
	}
	// Output:
	// input [hi]
	// task-1 messages hello back
}

// New returns a ready saver: there is no target to open, nothing to set
// up, and Close releases nothing, but both exist so that code written
// against one checkpointkit adapter works against another.
func ExampleNew() {
	ctx := context.Background()
	saver := memory.New(memory.WithSerde(spec.DefaultSerde()))
	defer saver.Close()
	if err := saver.Setup(ctx); err != nil { // a no-op, as Open's Setup is on the other adapters
		fmt.Println(err)
	}

	cfg, err := saver.Put(ctx, spec.Config{ThreadID: "thread-1"},
		spec.Checkpoint{V: 4, ID: spec.NewCheckpointID(0)}, spec.Metadata{"step": 0}, nil)
	if err != nil {
		fmt.Println(err)
	}
	tuple, _ := saver.GetTuple(ctx, cfg)
	fmt.Println(tuple.Config.ThreadID, tuple.Metadata["step"])
	// Output:
	// thread-1 0
}
