package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/checkpointkit/checkpointkit/spec"
)

// seedHistory bulk-loads n checkpoints into (thread, ns) with COPY, in one
// transaction: each has one channel value, one pending write and metadata
// {"source": "loop", "step": i, "parity": "even"|"odd"}. The rows are
// encoded by the same code as Put. It returns the IDs in ascending order.
func seedHistory(tb testing.TB, s *Saver, thread, ns string, n int) []string {
	tb.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	var cps, blobs, writes [][]any
	version := spec.Version("")
	for i := range n {
		ids[i] = fmt.Sprintf("%s-%08d", thread, i)
		version = spec.NextVersion(version)
		parity := "odd"
		if i%2 == 0 {
			parity = "even"
		}
		cp := spec.Checkpoint{V: 4, ID: ids[i], TS: "2026-01-01T00:00:00Z",
			ChannelValues: map[string]any{"counter": int64(i)}, ChannelVersions: spec.Versions{"counter": version}}
		parent := ""
		if i > 0 {
			parent = ids[i-1]
		}
		args, err := s.putArgs(spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: parent}, cp,
			spec.Metadata{"source": "loop", "step": i, "parity": parity}, spec.Versions{"counter": version})
		if err != nil {
			tb.Fatal(err)
		}
		// args: thread, ns, id, parent, record, channels, versions, md json,
		// blob channels, blob versions, blob values, md exact.
		cps = append(cps, []any{args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[11]})
		blobs = append(blobs, []any{thread, ns, "counter", string(version), args[10].([][]byte)[0]})
		w, err := s.serde.Encode(int64(i + 1))
		if err != nil {
			tb.Fatal(err)
		}
		writes = append(writes, []any{thread, ns, ids[i], "task", int32(0), "counter", w, ""})
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	copyRows := func(table string, cols []string, rows [][]any) {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{s.schema, table}, cols, pgx.CopyFromRows(rows)); err != nil {
			tb.Fatalf("copy into %s: %v", table, err)
		}
	}
	copyRows("checkpoints", []string{"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id",
		"checkpoint", "channels", "versions", "metadata", "metadata_exact"}, cps)
	copyRows("blobs", []string{"thread_id", "checkpoint_ns", "channel", "version", "value"}, blobs)
	copyRows("writes", []string{"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "value", "task_path"}, writes)
	if err := tx.Commit(ctx); err != nil {
		tb.Fatal(err)
	}
	return ids
}

// analyze refreshes the planner statistics of the saver's tables.
func analyze(tb testing.TB, s *Saver) {
	tb.Helper()
	if _, err := s.pool.Exec(context.Background(), "ANALYZE "+s.q.checkpoints+", "+s.q.blobs+", "+s.q.writes); err != nil {
		tb.Fatal(err)
	}
}

func TestSeedHistoryReadsBackLikePut(t *testing.T) {
	s := newTestSaver(t)
	ids := seedHistory(t, s, "seeded", "", 3)
	tup, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "seeded"})
	if err != nil {
		t.Fatal(err)
	}
	if tup.Checkpoint.ID != ids[2] || tup.Checkpoint.ChannelValues["counter"] != int64(2) ||
		len(tup.PendingWrites) != 1 || tup.Metadata["parity"] != "even" || tup.Parent.CheckpointID != ids[1] {
		t.Errorf("seeded tuple: %+v", tup)
	}
}
