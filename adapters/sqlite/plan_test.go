package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// queryPlan returns SQLite's EXPLAIN QUERY PLAN details for query, one line
// per step.
func queryPlan(t *testing.T, s *Saver, query string, args ...any) string {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n")
}

// TestQueryPlans checks that GetTuple and List read checkpoints through an
// index in the order they return them: no full table scan and no sort step,
// so a limited read costs the same whatever the history depth. It also
// checks that values and writes are primary-key lookups.
func TestQueryPlans(t *testing.T) {
	s := openMemory(t)
	type query struct {
		name string
		sql  string
		args []any
	}
	queries := []query{
		{"get latest", getLatestSQL, []any{"t", ""}},
		{"get by id", getByIDSQL, []any{"t", "", "1"}},
	}
	for _, o := range []spec.ListOptions{
		{ThreadID: "t", Limit: 10},
		{ThreadID: "t", Before: "5"},
		{ThreadID: "t", Filter: spec.Metadata{"source": "loop", "step": int64(3)}},
		{ThreadID: "t", AllNamespaces: true},
		{Namespace: ""},
		{AllNamespaces: true, Before: "5"},
	} {
		f, _ := spec.NormalizeFilter(o.Filter)
		lq := buildListQuery(o, f)
		q1, a1 := lq.page(nil, 10)
		q2, a2 := lq.page(&rowKey{"t", "", "5"}, 10)
		queries = append(queries, query{"list first page " + q1, q1, a1}, query{"list next page " + q2, q2, a2})
	}
	for _, q := range queries {
		plan := queryPlan(t, s, q.sql, q.args...)
		for _, line := range strings.Split(plan, "\n") {
			if strings.Contains(line, "TEMP B-TREE") ||
				(strings.HasPrefix(line, "SCAN c") && !strings.Contains(line, "USING INDEX")) {
				t.Errorf("%s:\nplan has %q:\n%s", q.name, line, plan)
			}
		}
	}

	// GetTuple's checkpoint row brings its writes (writesColumn): a key
	// search of the writes, never a scan.
	for _, q := range queries[:2] {
		plan := queryPlan(t, s, q.sql, q.args...)
		if !strings.Contains(plan, "SEARCH w USING INDEX sqlite_autoindex_writes_1 (thread_id=? AND checkpoint_ns=? AND checkpoint_id=?)") ||
			strings.Contains(plan, "SCAN w") {
			t.Errorf("%s: writes are not a key search:\n%s", q.name, plan)
		}
	}

	blobs := queryPlan(t, s, `SELECT value FROM blobs WHERE kind = 'value' AND
		(thread_id, checkpoint_ns, channel, version) IN (VALUES `+placeholders(2, 4)+`)`,
		"t", "", "a", "1", "t", "", "b", "1")
	// blobs and writes are rowid tables (schema version 3): their primary
	// key is the unique index SQLite names sqlite_autoindex_<table>_1.
	if !strings.Contains(blobs, "SEARCH blobs USING INDEX sqlite_autoindex_blobs_1 (thread_id=? AND checkpoint_ns=? AND channel=? AND version=?)") {
		t.Errorf("blob lookup is not a primary-key search:\n%s", blobs)
	}
	writes := queryPlan(t, s, `SELECT value FROM writes
		WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (VALUES `+placeholders(2, 3)+`)`,
		"t", "", "1", "t", "", "2")
	if !strings.Contains(writes, "SEARCH writes USING INDEX sqlite_autoindex_writes_1 (thread_id=? AND checkpoint_ns=? AND checkpoint_id=?)") {
		t.Errorf("writes lookup is not a primary-key search:\n%s", writes)
	}
	runs := queryPlan(t, s, `SELECT 1 FROM checkpoints WHERE `+runIDExpr+` IN (?, ?)`, "a", "b")
	if !strings.Contains(runs, "checkpoints_by_run_id") {
		t.Errorf("run lookup does not use the run_id index:\n%s", runs)
	}
}

// countingQuerier counts the queries run through it.
type countingQuerier struct {
	rowQuerier
	queries int
}

func (c *countingQuerier) queryRows(ctx context.Context, query string, args []any, ncol int, fn func([]driver.Value) error) error {
	c.queries++
	return c.rowQuerier.queryRows(ctx, query, args, ncol, fn)
}

// TestPageQueryCount checks that the queries of a page of tuples are
// bounded whatever its size: one for the checkpoints and, on a page of two
// or more tuples of one thread and namespace, one contents statement for
// the values and writes (contents.go); a single tuple reads its values by
// a primary-key probe each (at most maxProbes) and its writes by one
// range. No query per checkpoint.
func TestPageQueryCount(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	for i := range 50 {
		id := fmt.Sprintf("%03d", i)
		cp := spec.Checkpoint{ID: id, ChannelValues: map[string]any{"a": int64(i), "b": "x"},
			ChannelVersions: spec.Versions{"a": spec.Version(id), "b": "1"}}
		mustPut(t, s, spec.Config{ThreadID: "t"}, cp, nil, cp.ChannelVersions)
		if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: id},
			[]spec.Write{{Channel: "a", Value: int64(i)}, {Channel: "b", Value: "w"}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{1, 10, 50} {
		query, args := buildListQuery(spec.ListOptions{ThreadID: "t"}, nil).page(nil, n)
		cq := &countingQuerier{rowQuerier: sqlRows{s.db}}
		page, _, _, err := s.loadPage(ctx, cq, query, args, &rowKey{thread: "t"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != n {
			t.Fatalf("page of %d has %d tuples", n, len(page))
		}
		for _, tup := range page {
			if len(tup.PendingWrites) != 2 || len(tup.Checkpoint.ChannelValues) != 2 {
				t.Fatalf("incomplete tuple %+v", tup)
			}
		}
		values := 2 * n // every checkpoint has a version of "a" and shares "b"@1
		if n > 1 {
			values = n + 1
		}
		want := 2 // checkpoints, contents
		if n == 1 {
			want = 2 + values // checkpoints, a probe per value, writes
			if values > maxProbes {
				want = 3 // checkpoints, a values list, writes
			}
		}
		if cq.queries != want {
			t.Errorf("page of %d (%d values) took %d queries, want %d", n, values, cq.queries, want)
		}
	}
}
