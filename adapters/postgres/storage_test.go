package postgres

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// count returns the number of rows of one of the saver's tables matching
// an optional condition on thread_id.
func count(t *testing.T, s *Saver, table, thread string) int {
	t.Helper()
	sql := "SELECT count(*) FROM " + table
	var args []any
	if thread != "" {
		sql += " WHERE thread_id = $1"
		args = append(args, thread)
	}
	var n int
	if err := s.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestValuesStoredOncePerVersion checks the storage layout: checkpoints
// that share a channel version share one blob row, a cleared channel is a
// NULL row, and Prune keeps exactly the rows the latest checkpoint needs.
func TestValuesStoredOncePerVersion(t *testing.T) {
	s := newTestSaver(t)
	ctx := context.Background()
	big := strings.Repeat("x", 10_000)
	mustPut(t, s, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1",
		ChannelValues: map[string]any{"big": big, "small": int64(1)}, ChannelVersions: spec.Versions{"big": "1", "small": "1"}},
		nil, spec.Versions{"big": "1", "small": "1"})
	for _, id := range []string{"2", "3", "4"} {
		// Only "small" changes; "big" stays at version 1.
		mustPut(t, s, spec.Config{ThreadID: "t", CheckpointID: "1"}, spec.Checkpoint{ID: id,
			ChannelValues: map[string]any{"small": int64(len(id))}, ChannelVersions: spec.Versions{"big": "1", "small": spec.Version(id)}},
			nil, spec.Versions{"small": spec.Version(id)})
	}
	// "small" cleared at version 5.
	mustPut(t, s, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "5",
		ChannelValues: map[string]any{}, ChannelVersions: spec.Versions{"big": "1", "small": "5"}},
		nil, spec.Versions{"small": "5"})
	if n := count(t, s, s.q.blobs, "t"); n != 6 {
		t.Errorf("%d blob rows, want 6 (big once, small at 1..5)", n)
	}
	var nulls int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.q.blobs+" WHERE value IS NULL").Scan(&nulls); err != nil {
		t.Fatal(err)
	}
	if nulls != 1 {
		t.Errorf("%d NULL (cleared) values, want 1", nulls)
	}
	tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "3"})
	if err != nil || tup.Checkpoint.ChannelValues["big"] != big || tup.Checkpoint.ChannelValues["small"] != int64(1) {
		t.Fatalf("checkpoint 3: %v %v", err, tup)
	}
	tup, err = s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tup.Checkpoint.ChannelValues["small"]; ok || tup.Checkpoint.ChannelValues["big"] != big {
		t.Errorf("latest: values %v, want big only", tup.Checkpoint.ChannelValues)
	}

	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "5"}, []spec.Write{{Channel: "a", Value: 1}}, "task", "p"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "2"}, []spec.Write{{Channel: "a", Value: 1}}, "task", "p"); err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, []string{"t"}, spec.KeepLatest); err != nil {
		t.Fatal(err)
	}
	if c, b, w := count(t, s, s.q.checkpoints, "t"), count(t, s, s.q.blobs, "t"), count(t, s, s.q.writes, "t"); c != 1 || b != 2 || w != 1 {
		t.Errorf("after prune: %d checkpoints, %d values, %d writes; want 1, 2 (big@1, small@5), 1", c, b, w)
	}
	var taskPath string
	if err := s.pool.QueryRow(ctx, "SELECT task_path FROM "+s.q.writes).Scan(&taskPath); err != nil || taskPath != "p" {
		t.Errorf("task path stored as %q, %v", taskPath, err)
	}
}

// TestOptions checks that Open and New reject bad options and targets
// with ErrInvalidArgument before touching the database.
func TestOptions(t *testing.T) {
	pool := sharedPoolOrNil()
	ctx := context.Background()
	for name, opt := range map[string]Option{
		"empty schema":   WithSchema(""),
		"long schema":    WithSchema(strings.Repeat("s", 64)),
		"NUL schema":     WithSchema("a\x00b"),
		"nil serde":      WithSerde(nil),
		"zero page size": WithListPageSize(0),
		"unknown mode":   WithQueryExecMode(99),
		"nil option":     nil,
	} {
		if _, err := New(ctx, pool, opt); !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("New with %s: %v, want ErrInvalidArgument", name, err)
		}
		if _, err := Open(ctx, "postgres://127.0.0.1:1/never", opt); !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("Open with %s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := New(ctx, nil); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("nil pool: %v", err)
	}
	if s := unsetSaver(t, pool, WithSchema(strings.Repeat("s", 63))); s.Schema() != strings.Repeat("s", 63) {
		t.Errorf("63-byte schema: %q", s.Schema())
	}
	for _, target := range []string{"", "postgres://%zz"} {
		if _, err := Open(ctx, target); !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("Open(%q): %v, want ErrInvalidArgument", target, err)
		}
	}
}

// TestOpenOwnsItsPool checks that Open returns a ready saver whose Close
// (idempotent) closes its pool, and that Close of a New saver leaves the
// caller's pool open.
func TestOpenOwnsItsPool(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, testDSN(t), WithSchema(uniqueSchema("open")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unsetSaver(t, testPool(t), WithSchema(s.Schema())).DropSchema(context.Background()) })
	checkLatest(t, s)
	mustPut(t, s, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1"}, nil, nil)
	pool := s.pool
	var c io.Closer = s
	for range 2 { // idempotent
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if err := pool.Ping(ctx); err == nil {
		t.Error("Close left the pool it opened open")
	}
	s, err = Open(ctx, testDSN(t), WithSchema(s.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err != nil {
		t.Errorf("reopened: %v", err)
	}

	// New never closes the caller's pool.
	borrowed, err := New(ctx, testPool(t), WithSchema(s.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := borrowed.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if err := testPool(t).Ping(ctx); err != nil {
		t.Errorf("Close of a New saver closed the caller's pool: %v", err)
	}
}
