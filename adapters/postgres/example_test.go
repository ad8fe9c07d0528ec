package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/checkpointkit/checkpointkit/adapters/postgres"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Open a saver in its own schema, create the tables, store a checkpoint and
// read it back. (Not run as a test: it needs a database.)
func Example() {
	ctx := context.Background()
	saver, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"), postgres.WithSchema("agent_checkpoints"))
	if err != nil {
		log.Fatal(err)
	}
	defer saver.Close()
	if err := saver.Setup(ctx); err != nil { // idempotent; safe from several processes
		log.Fatal(err)
	}

	versions := spec.Versions{"messages": saver.NextVersion("")}
	cp := spec.Checkpoint{
		V: 4, ID: spec.NewCheckpointID(0), TS: "2026-01-01T00:00:00Z",
		ChannelValues:   map[string]any{"messages": []any{"hello"}},
		ChannelVersions: versions,
	}
	cfg, err := saver.Put(ctx, spec.Config{ThreadID: "thread-1"}, cp, spec.Metadata{"source": "input", "step": -1}, versions)
	if err != nil {
		log.Fatal(err)
	}
	for t, err := range saver.List(ctx, spec.ListOptions{ThreadID: cfg.ThreadID, Filter: spec.Metadata{"source": "input"}, Limit: 10}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.Config.CheckpointID, t.Checkpoint.ChannelValues["messages"])
	}
}

// Behind PgBouncer in transaction mode, use no prepared statements.
func ExampleWithoutPreparedStatements() {
	ctx := context.Background()
	saver, err := postgres.Open(ctx, os.Getenv("PGBOUNCER_URL"), postgres.WithoutPreparedStatements())
	if err != nil {
		log.Fatal(err)
	}
	defer saver.Close()
}
