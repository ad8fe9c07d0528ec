package sqlite

import (
	"context"
	"database/sql/driver"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestHeldStatementKeepsSnapshot checks what GetTuple's read relies on
// instead of BEGIN and COMMIT: while the checkpoint query's statement is
// active (queryFirst before release), later queries on the connection read
// the same snapshot, whatever other connections commit meanwhile; after
// release they see the commits.
func TestHeldStatementKeepsSnapshot(t *testing.T) {
	s, _ := openFile(t)
	ctx := context.Background()
	cp, vs := checkpoint("1", map[string]any{"a": "x"})
	mustPut(t, s, spec.Config{ThreadID: "t"}, cp, nil, vs)

	count := func(q rowQuerier, table string) int64 {
		t.Helper()
		var n int64
		if err := q.queryRows(ctx, "SELECT count(*) FROM "+table, nil, 1, func(cols []driver.Value) error {
			n = cols[0].(int64)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		r := &rawConn{c: dc.(*sqlite3.SQLiteConn)}
		row, release, err := r.queryFirst(ctx, getLatestSQL, []any{"t", ""}, 5)
		if err != nil || row == nil {
			t.Fatalf("queryFirst: %v, %v", row, err)
		}
		// Another connection commits a checkpoint and pending writes.
		cp2, vs2 := checkpoint("2", map[string]any{"a": "y"})
		vs2["a"] = "2"
		mustPut(t, s, spec.Config{ThreadID: "t", CheckpointID: "1"}, cp2, nil, vs2)
		if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, []spec.Write{{Channel: "a", Value: 1}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		if n, w := count(r, "checkpoints"), count(r, "writes"); n != 1 || w != 0 {
			t.Errorf("with the statement held: %d checkpoints and %d writes, want the snapshot's 1 and 0", n, w)
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
		if n, w := count(r, "checkpoints"), count(r, "writes"); n != 2 || w != 1 {
			t.Errorf("after release: %d checkpoints and %d writes, want 2 and 1", n, w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
