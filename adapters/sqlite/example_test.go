package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Open a database file (created and migrated by Open), store a checkpoint
// with a pending write, and read it back, also after reopening the file.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "checkpointkit-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "checkpoints.db")

	saver, err := sqlite.Open(ctx, path, sqlite.WithListPageSize(16))
	if err != nil {
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
	if err := saver.PutWrites(ctx, cfg, []spec.Write{{Channel: "messages", Value: "hi"}}, "task-1", ""); err != nil {
		log.Fatal(err)
	}
	if err := saver.Close(); err != nil {
		log.Fatal(err)
	}

	saver, err = sqlite.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	defer saver.Close()
	for t, err := range saver.List(ctx, spec.ListOptions{ThreadID: "thread-1", Filter: spec.Metadata{"source": "input"}}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.Metadata["step"], t.Checkpoint.ChannelValues["messages"], t.PendingWrites[0].Value)
	}
	// Output:
	// -1 [hello] hi
}
