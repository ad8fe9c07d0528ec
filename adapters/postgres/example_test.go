package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/adapters/postgres"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Open a saver in its own schema (Open creates or migrates the tables),
// store a checkpoint and list it back through a metadata filter. (Compiled,
// not run: it needs a database.)
func ExampleOpen() {
	ctx := context.Background()
	saver, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"), postgres.WithSchema("agent_checkpoints"))
	if err != nil {
		log.Fatal(err)
	}
	defer saver.Close()

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

// Share a pool the application already has: New sets the schema up
// through it, and Close leaves it open. (Compiled, not run.)
func ExampleNew() {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	postgres.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	saver, err := postgres.New(ctx, pool)
	if err != nil {
		log.Fatal(err)
	}
	defer saver.Close() // leaves pool open
}

// Behind PgBouncer in transaction mode, use no prepared statements.
// (Compiled, not run.)
func ExampleWithoutPreparedStatements() {
	ctx := context.Background()
	saver, err := postgres.Open(ctx, os.Getenv("PGBOUNCER_URL"), postgres.WithoutPreparedStatements())
	if err != nil {
		log.Fatal(err)
	}
	defer saver.Close()
}
