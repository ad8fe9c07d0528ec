package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// bufferNode is the part of an EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
// node the delta plan test reads.
type bufferNode struct {
	NodeType     string       `json:"Node Type"`
	RelationName string       `json:"Relation Name"`
	ActualRows   float64      `json:"Actual Rows"`
	ActualLoops  float64      `json:"Actual Loops"`
	SharedHit    float64      `json:"Shared Hit Blocks"`
	SharedRead   float64      `json:"Shared Read Blocks"`
	Plans        []bufferNode `json:"Plans"`
	// ExecutionTime is the statement's, on the top node only (ms).
	ExecutionTime float64 `json:"-"`
}

// relationRows returns the rows each relation's scans produced, all loops
// together.
func (n bufferNode) relationRows(out map[string]float64) map[string]float64 {
	if out == nil {
		out = map[string]float64{}
	}
	if n.RelationName != "" {
		out[n.RelationName] += n.ActualRows * max(n.ActualLoops, 1)
	}
	for _, c := range n.Plans {
		c.relationRows(out)
	}
	return out
}

// explainDelta runs EXPLAIN (ANALYZE, BUFFERS) on the statement
// DeltaHistory sends for checkpoint id (empty for the latest) of thread and
// channels, with plan_cache_mode set to mode (force_custom_plan or
// force_generic_plan: the plan a prepared statement gets after five runs).
func explainDelta(t *testing.T, s *Saver, mode, thread, id string, channels ...string) bufferNode {
	t.Helper()
	ctx := context.Background()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(ctx, "RESET plan_cache_mode") }()
	var out []byte
	sql := "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + s.q.deltaHistory
	if err := conn.QueryRow(ctx, sql, s.args(thread, "", id, channels)...).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plans []struct {
		Plan          bufferNode `json:"Plan"`
		ExecutionTime float64    `json:"Execution Time"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("parse plan: %v (%s)", err, out)
	}
	plans[0].Plan.ExecutionTime = plans[0].ExecutionTime
	return plans[0].Plan
}

// deltaThread returns the steps of a linear thread of n checkpoints with
// a snapshot of msgs every every checkpoints (the first included) and one
// write to msgs and one to nos against each, so the history of the last
// reaches back (n-1)%every+1 ancestors to its seed. Every checkpoint gives
// msgs, nos and other a version (savertest.BuildSteps): three blob rows
// each, most of them "no value".
func deltaThread(n, every int) []savertest.Step {
	steps := make([]savertest.Step, n)
	for i := range n {
		st := savertest.Step{ID: fmt.Sprintf("d%05d", i),
			MD: spec.Metadata{spec.DeltaCountersKey: map[string]any{"msgs": []any{int64(i % every), int64(i % every)}}},
			Writes: []savertest.TaskWrites{savertest.OneWrite("t", "", "msgs", int64(i)),
				savertest.OneWrite("u", "", "nos", int64(i))}}
		if i > 0 {
			st.Parent = steps[i-1].ID
		}
		if i%every == 0 {
			st.Values = map[string]any{"msgs": spec.DeltaSnapshot{Value: []any{int64(i)}}}
		}
		steps[i] = st
	}
	return steps
}

// TestDeltaPlanBounded checks, on a fresh schema before any ANALYZE (as
// after a burst of Puts, until autovacuum catches up) and after one, with
// custom and generic plans, that the history statement's cost follows the
// chain it walks, not the thread around it: a 49-ancestor chain at the end
// of a 400-checkpoint thread touches about as many buffers as a 50-ancestor
// one in a 51-checkpoint thread, a 300-ancestor chain about six times as
// many, and every scan of checkpoints, blobs and writes produces a bounded
// number of rows per ancestor.
func TestDeltaPlanBounded(t *testing.T) {
	s := newTestSaver(t)
	savertest.BuildSteps(t, s, "short", "", deltaThread(51, 50))  // tip d00050: 50 ancestors to d00000
	savertest.BuildSteps(t, s, "long", "", deltaThread(400, 350)) // tip d00399: 49 ancestors to d00350
	savertest.BuildSteps(t, s, "deep", "", deltaThread(301, 300)) // tip d00300: 300 ancestors to d00000
	check := func(t *testing.T, mode string) {
		buffers := map[string]float64{}
		for _, c := range []struct {
			name, thread, id string
			ancestors        int
		}{
			{"short", "short", "", 50},
			{"long", "long", "", 49},
			{"long by ID", "long", "d00399", 49},
			{"long, older target", "long", "d00380", 30},
			{"deep", "deep", "", 300},
		} {
			plan := explainDelta(t, s, mode, c.thread, c.id, "msgs")
			buffers[c.name] = plan.SharedHit + plan.SharedRead
			rows := plan.relationRows(nil)
			t.Logf("%s (%d ancestors): %g buffers, %.2f ms, rows by relation %v",
				c.name, c.ancestors, buffers[c.name], plan.ExecutionTime, rows)
			// Per ancestor: its row and its parent's probe in checkpoints,
			// the probes of its msgs version in blobs, its msgs write.
			for rel, perAncestor := range map[string]float64{"checkpoints": 2, "blobs": 2, "writes": 2} {
				if got, limit := rows[rel], perAncestor*float64(c.ancestors+2); got > limit {
					t.Errorf("%s: %s scans produced %g rows, want at most %g for %d ancestors",
						c.name, rel, got, limit, c.ancestors)
				}
			}
		}
		for _, name := range []string{"long", "long by ID"} {
			if buffers[name] > 1.25*buffers["short"]+20 {
				t.Errorf("%s: %g buffers for 49 ancestors in a thread of 400, %g for 50 in a thread of 51: the cost grows with the thread",
					name, buffers[name], buffers["short"])
			}
		}
		if buffers["deep"] > 7.5*buffers["short"] {
			t.Errorf("buffers: %g for 300 ancestors, %g for 50: more than linear in the chain", buffers["deep"], buffers["short"])
		}
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run("no statistics, "+mode, func(t *testing.T) { check(t, mode) })
	}
	analyze(t, s)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run("analyzed, "+mode, func(t *testing.T) { check(t, mode) })
	}
}
