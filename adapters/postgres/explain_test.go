package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// planNode is the part of an EXPLAIN (FORMAT JSON) node the tests read.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	ActualRows   float64    `json:"Actual Rows"`
	ActualLoops  float64    `json:"Actual Loops"`
	Plans        []planNode `json:"Plans"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

func (n planNode) String() string {
	var b strings.Builder
	var rec func(planNode, int)
	rec = func(n planNode, depth int) {
		fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", depth), n.NodeType)
		if n.RelationName != "" {
			fmt.Fprintf(&b, " on %s", n.RelationName)
		}
		if n.IndexName != "" {
			fmt.Fprintf(&b, " using %s", n.IndexName)
		}
		fmt.Fprintf(&b, " (rows=%g loops=%g)\n", n.ActualRows, n.ActualLoops)
		for _, c := range n.Plans {
			rec(c, depth+1)
		}
	}
	rec(n, 0)
	return b.String()
}

// explain runs EXPLAIN (ANALYZE, FORMAT JSON) on the page statement List
// would run for opts after cur (nil: the first page).
func explain(t *testing.T, s *Saver, opts spec.ListOptions, cur *cursor) planNode {
	t.Helper()
	p, err := s.planList(opts)
	if err != nil {
		t.Fatal(err)
	}
	n := s.pageLen(100, opts.Limit) // a full-size page
	sql, args := s.pageSQL(p, cur, n)
	var out []byte
	if err := s.pool.QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("parse plan: %v (%s)", err, out)
	}
	return plans[0].Plan
}

// TestExplainIndexRangeScans checks, on a table of 13,000 checkpoints (a
// 10,000-deep thread among others), with and without statistics, that the reads
// the contract makes hot never scan the checkpoints table sequentially, and
// that the limited ones read only the rows they return.
func TestExplainIndexRangeScans(t *testing.T) {
	s := newTestSaver(t)
	ids := seedHistory(t, s, "deep", "", 10_000)
	seedHistory(t, s, "deep", "child:1", 1_000)
	for i := range 8 {
		seedHistory(t, s, fmt.Sprintf("other-%d", i), "", 250)
	}
	// Twice: right after the bulk load, before any statistics exist (as
	// after a burst of Puts, until autovacuum catches up), then after
	// ANALYZE.
	t.Run("no statistics", func(t *testing.T) { checkPlans(t, s, ids) })
	analyze(t, s)
	t.Run("analyzed", func(t *testing.T) { checkPlans(t, s, ids) })
}

func checkPlans(t *testing.T, s *Saver, ids []string) {

	cases := []struct {
		name string
		opts spec.ListOptions
		// maxRows bounds the rows the checkpoints scan may produce (0: no
		// bound checked).
		maxRows float64
		cur     *cursor
	}{
		{"GetTuple latest", spec.ListOptions{ThreadID: "deep", Limit: 1}, 1, nil},
		{"GetTuple by id", spec.ListOptions{ThreadID: "deep", CheckpointID: ids[5000], Limit: 1}, 1, nil},
		{"List thread+limit", spec.ListOptions{ThreadID: "deep", Limit: 10}, 10, nil},
		{"List thread+before+limit", spec.ListOptions{ThreadID: "deep", Before: ids[5000], Limit: 10}, 10, nil},
		{"List thread+filter+limit", spec.ListOptions{ThreadID: "deep", Filter: spec.Metadata{"parity": "even"}, Limit: 5}, 10, nil},
		{"List thread+two-key filter+limit", spec.ListOptions{ThreadID: "deep", Filter: spec.Metadata{"source": "loop", "parity": "even"}, Limit: 5}, 10, nil},
		{"List subgraph namespace", spec.ListOptions{ThreadID: "deep", Namespace: "child:1", Limit: 10}, 10, nil},
		{"List all threads+limit", spec.ListOptions{AllNamespaces: true, Limit: 10}, 10, nil},
		{"List all threads+before+limit", spec.ListOptions{AllNamespaces: true, Before: ids[100], Limit: 10}, 10, nil},
		{"List thread unlimited (one page)", spec.ListOptions{ThreadID: "deep"}, float64(defaultPageSize), nil},
		{"List thread, a later page", spec.ListOptions{ThreadID: "deep"}, float64(defaultPageSize),
			&cursor{thread: "deep", id: ids[5000]}},
		{"List all threads, a later page", spec.ListOptions{AllNamespaces: true}, float64(defaultPageSize),
			&cursor{thread: "deep", ns: "", id: ids[5000]}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := explain(t, s, c.opts, c.cur)
			t.Logf("plan:\n%s", plan)
			sawCheckpoints := false
			plan.walk(func(n planNode) {
				if n.NodeType == "Seq Scan" {
					t.Errorf("sequential scan on %s", n.RelationName)
				}
				if c.maxRows > 0 && (n.RelationName == "blobs" || n.RelationName == "writes") &&
					n.ActualRows*max(n.ActualLoops, 1) > c.maxRows {
					// One value and one write per checkpoint: more rows
					// means a scan wider than a primary-key probe.
					t.Errorf("%s scan produced %g rows in %g loops, want at most %g in all",
						n.RelationName, n.ActualRows, n.ActualLoops, c.maxRows)
				}
				if n.RelationName != "checkpoints" {
					return
				}
				sawCheckpoints = true
				if !strings.HasPrefix(n.NodeType, "Index") {
					t.Errorf("checkpoints read by %s, want an index scan", n.NodeType)
				}
				if c.maxRows > 0 && n.ActualRows*max(n.ActualLoops, 1) > c.maxRows {
					t.Errorf("checkpoints scan produced %g rows, want at most %g", n.ActualRows, c.maxRows)
				}
			})
			if !sawCheckpoints {
				t.Error("plan does not read checkpoints")
			}
			// Sorting the page itself is fine; sorting more than a page
			// (the whole thread, say) means cost grows with depth.
			plan.walk(func(n planNode) {
				if n.NodeType == "Sort" && c.maxRows > 0 && n.ActualRows > c.maxRows {
					t.Errorf("plan sorts %g rows", n.ActualRows)
				}
			})
		})
	}
}
