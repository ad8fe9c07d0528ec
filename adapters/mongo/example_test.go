package mongo_test

import (
	"context"
	"fmt"
	"log"

	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Open a saver (Open creates its indexes), store a checkpoint with a
// pending write and read it back. (Compiled, not run: it needs a server.)
func ExampleOpen() {
	ctx := context.Background()
	s, err := mongo.Open(ctx, "mongodb://localhost:27017/", mongo.WithDatabase("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	v := s.NextVersion("")
	cp := spec.Checkpoint{
		V: 4, ID: spec.NewCheckpointID(0), TS: "2026-01-01T00:00:00Z",
		ChannelValues:   map[string]any{"messages": []any{"hello"}},
		ChannelVersions: spec.Versions{"messages": v},
	}
	cfg, err := s.Put(ctx, spec.Config{ThreadID: "thread-1"}, cp, spec.Metadata{"source": "input", "step": -1}, spec.Versions{"messages": v})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "messages", Value: "hi"}}, "task-1", ""); err != nil {
		log.Fatal(err)
	}

	latest, err := s.GetTuple(ctx, spec.Config{ThreadID: "thread-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(latest.Checkpoint.ChannelValues["messages"], len(latest.PendingWrites))

	for t, err := range s.List(ctx, spec.ListOptions{ThreadID: "thread-1", Filter: spec.Metadata{"source": "input"}, Limit: 10}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.Config.CheckpointID == cfg.CheckpointID)
	}
}

// Share a client the application already has: New creates the indexes
// through it, and Close leaves it connected. (Compiled, not run.)
func ExampleNew() {
	ctx := context.Background()
	client, err := mongodrv.Connect(options.Client().ApplyURI("mongodb://localhost:27017/"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Disconnect(ctx)
	s, err := mongo.New(ctx, client, mongo.WithDatabase("app"), mongo.WithCollectionPrefix("agent_"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close() // leaves client connected
}
