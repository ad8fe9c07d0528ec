package mongo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// randomTree returns the steps of a thread of n checkpoints forming a
// random tree (mostly a chain, with forks), stored parents first, whose
// IDs sort in no relation to the tree, with snapshots of msgs here and
// there, counters that understate the chains, a write to msgs against
// every checkpoint and run IDs r0 to r3.
func randomTree(rng *rand.Rand, n int) []savertest.Step {
	names := rng.Perm(n)
	steps := make([]savertest.Step, n)
	for i := range n {
		md := spec.Metadata{"run_id": fmt.Sprintf("r%d", rng.IntN(4)),
			spec.DeltaCountersKey: map[string]any{"msgs": []any{int64(rng.IntN(3)), int64(rng.IntN(3))}}}
		steps[i] = savertest.Step{ID: fmt.Sprintf("x%03d", names[i]), MD: md,
			Writes: []savertest.TaskWrites{savertest.OneWrite("t", "", "msgs", int64(i))}}
		switch {
		case i == 0:
		case rng.IntN(10) < 7:
			steps[i].Parent = steps[i-1].ID
		default:
			steps[i].Parent = steps[rng.IntN(i)].ID
		}
		if rng.IntN(12) == 0 {
			steps[i].Values = map[string]any{"msgs": spec.DeltaSnapshot{Value: []any{int64(i)}}}
		}
	}
	return steps
}

// TestDeltaShapes checks DeltaHistory against spec.WalkDeltaHistory at
// every checkpoint of random trees whose IDs do not follow the parent
// links and whose counters are wrong: the paged walk must read further
// (below and above the target) whenever its pages end before the seeds.
// Then DeleteForRuns of two runs must leave every surviving checkpoint's
// history as it was (DELTA-13).
func TestDeltaShapes(t *testing.T) {
	ctx := context.Background()
	s := saverT(t)
	for seed := range uint64(2) {
		thread := fmt.Sprintf("shape%d", seed)
		steps := randomTree(rand.New(rand.NewPCG(seed, 21)), 45)
		savertest.BuildSteps(t, s, thread, "", steps)
		before := map[string]map[string]spec.DeltaHistory{}
		for _, st := range steps {
			cfg := spec.Config{ThreadID: thread, CheckpointID: st.ID}
			want, err := spec.WalkDeltaHistory(ctx, s, cfg, []string{"msgs"})
			if err != nil {
				t.Fatal(err)
			}
			savertest.ExpectDelta(t, thread+"/"+st.ID, savertest.DeltaAt(t, s, cfg, "msgs"), want)
			before[st.ID] = want
		}
		if err := s.DeleteForRuns(ctx, []string{"r1", "r2"}); err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			if r := st.MD["run_id"]; r == "r1" || r == "r2" {
				continue
			}
			cfg := spec.Config{ThreadID: thread, CheckpointID: st.ID}
			savertest.ExpectDelta(t, thread+"/"+st.ID+" after DeleteForRuns", savertest.DeltaAt(t, s, cfg, "msgs"), before[st.ID])
		}
	}
}

// TestDeltaPagedWalkEdges checks DeltaHistory against spec.WalkDeltaHistory
// where the paged walk must go past what the counters promise (a chain of
// 120 whose counters all say 1, read by ID: the first page, then a larger
// one, then the rest) and where a parent is missing between the pages'
// IDs.
func TestDeltaPagedWalkEdges(t *testing.T) {
	ctx := context.Background()
	s := saverT(t)
	under := savertest.SnapshotChain(120)
	for i := range under {
		under[i].MD = spec.Metadata{spec.DeltaCountersKey: map[string]any{"msgs": []any{int64(1), int64(1)}}}
	}
	savertest.BuildSteps(t, s, "under", "", under)
	savertest.BuildSteps(t, s, "orphan", "", []savertest.Step{
		{ID: "o1", Values: map[string]any{"msgs": spec.DeltaSnapshot{Value: []any{}}}},
		{ID: "o3", Parent: "o2", Writes: []savertest.TaskWrites{savertest.OneWrite("t", "", "msgs", "3")}},
		{ID: "o4", Parent: "o3"},
	})
	for _, cfg := range []spec.Config{
		{ThreadID: "under", CheckpointID: "s0120"},
		{ThreadID: "under", CheckpointID: "s0060"},
		{ThreadID: "under"},
		{ThreadID: "orphan", CheckpointID: "o4"},
	} {
		want, err := spec.WalkDeltaHistory(ctx, s, cfg, []string{"msgs", "nos"})
		if err != nil {
			t.Fatal(err)
		}
		savertest.ExpectDelta(t, cfg.ThreadID+"/"+cfg.CheckpointID, savertest.DeltaAt(t, s, cfg, "msgs", "nos"), want)
	}
}
