package mongo_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// snapshotEvery returns the steps of a linear thread of n checkpoints, a
// snapshot of msgs every every checkpoints and the engines' counters in
// every checkpoint's metadata, a write to msgs against each.
func snapshotEvery(n, every int, runs func(i int) string) []savertest.Step {
	steps := make([]savertest.Step, n)
	for i := range n {
		md := spec.Metadata{spec.DeltaCountersKey: map[string]any{"msgs": []any{int64(i % every), int64(i % every)}}}
		if runs != nil {
			md["run_id"] = runs(i)
		}
		steps[i] = savertest.Step{ID: fmt.Sprintf("e%05d", i), MD: md,
			Writes: []savertest.TaskWrites{savertest.OneWrite("t", "", "msgs", int64(i))}}
		if i > 0 {
			steps[i].Parent = steps[i-1].ID
		}
		if i%every == 0 {
			steps[i].Values = map[string]any{"msgs": spec.DeltaSnapshot{Value: []any{int64(i)}}}
		}
	}
	return steps
}

// TestDeltaBoundedByThread checks from the commands on the wire that
// DeltaHistory, by ID and for the latest, costs the same commands and
// reads the same documents for a 4-ancestor chain at the end of a
// 50-checkpoint thread as at the end of a 300-checkpoint one: its cost
// follows the chain, not the thread. (Prune(KeepLatest) walks the chain
// the same way, deltaKeep.)
func TestDeltaBoundedByThread(t *testing.T) {
	ctx := context.Background()
	s, log := monitoredSaver(t)
	type cost struct{ commands, docs map[string]int }
	seq := 0
	measure := func(t *testing.T, n int, call func(thread, tip string) error) cost {
		seq++
		thread := fmt.Sprintf("b%d-%d", n, seq)
		savertest.BuildSteps(t, s, thread, "", snapshotEvery(n, 5, nil))
		log.reset()
		if err := call(thread, fmt.Sprintf("e%05d", n-1)); err != nil {
			t.Fatal(err)
		}
		cm, _ := log.snapshot()
		return cost{cm, log.documentsByCollection()}
	}
	history := func(byID bool) func(thread, tip string) error {
		return func(thread, tip string) error {
			cfg := spec.Config{ThreadID: thread}
			if byID {
				cfg.CheckpointID = tip
			}
			h, err := s.DeltaHistory(ctx, cfg, []string{"msgs"})
			if err == nil && (len(h["msgs"].Writes) != 4 || !h["msgs"].HasSeed) {
				err = fmt.Errorf("history %#v, want a seed and 4 writes", h["msgs"])
			}
			return err
		}
	}
	measure(t, 5, history(false)) // warm-up: the client connects and the saver's setup is done
	for _, c := range []struct {
		name string
		call func(thread, tip string) error
	}{
		{"DeltaHistory latest", history(false)},
		{"DeltaHistory by ID", history(true)},
	} {
		t.Run(c.name, func(t *testing.T) {
			short, long := measure(t, 50, c.call), measure(t, 300, c.call)
			t.Logf("thread of 50: %v, docs %v", short.commands, short.docs)
			t.Logf("thread of 300: %v, docs %v", long.commands, long.docs)
			if !maps.Equal(short.commands, long.commands) {
				t.Errorf("commands: %v for a thread of 50, %v for one of 300", short.commands, long.commands)
			}
			if !maps.Equal(short.docs, long.docs) {
				t.Errorf("documents read: %v for a thread of 50, %v for one of 300", short.docs, long.docs)
			}
			if got := short.docs[mongo.CheckpointsCollection]; got > 32+5 {
				t.Errorf("%d checkpoint documents read for a chain of 4", got)
			}
		})
	}
}

// TestDeleteForRunsBoundedByTail checks from the documents on the wire
// that DeleteForRuns of the latest run reads the checkpoints from that
// run's first on, not the thread before it, and still spares what a
// surviving chain needs.
func TestDeleteForRunsBoundedByTail(t *testing.T) {
	ctx := context.Background()
	s, log := monitoredSaver(t)
	// 300 checkpoints, a snapshot every 5; run "old" up to e00296, then
	// "gone" (e00297, e00298) and "kept" (e00299), whose chain back to the
	// snapshot at e00295 needs e00297 and e00298.
	run := func(i int) string {
		switch {
		case i >= 299:
			return "kept"
		case i >= 297:
			return "gone"
		}
		return "old"
	}
	savertest.BuildSteps(t, s, "tail", "", snapshotEvery(300, 5, run))
	before := savertest.DeltaAt(t, s, spec.Config{ThreadID: "tail"}, "msgs")
	log.reset()
	if err := s.DeleteForRuns(ctx, []string{"gone"}); err != nil {
		t.Fatal(err)
	}
	docs := log.documentsByCollection()
	t.Logf("documents read: %v", docs)
	if got := docs[mongo.CheckpointsCollection]; got > 40 {
		t.Errorf("DeleteForRuns of the last run read %d checkpoint documents of a 300-checkpoint thread", got)
	}
	savertest.ExpectDelta(t, "after DeleteForRuns", savertest.DeltaAt(t, s, spec.Config{ThreadID: "tail"}, "msgs"), before)
	ids := savertest.IDs(t, s, "tail", "")
	if len(ids) != 300 || !slices.Contains(ids, "e00297") {
		t.Errorf("after DeleteForRuns: %d checkpoints, want all 300 (the run's two are on the survivor's chain)", len(ids))
	}
}
