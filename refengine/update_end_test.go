package refengine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// UpdateState as End on an interrupted thread finishes the pending task
// without running it (pregel-semantics §6.2 item 6): an "update"
// checkpoint at step+1 whose ID carries the loaded step as clock sequence,
// with nothing left to run; a later Invoke(nil) runs nothing.
func TestUpdateStateAsEnd(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("ask")
	g := twoQuestions(t, s, runs)
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync}
	if _, err := g.Invoke(ctx, refengine.State{"q": "orig"}, cfg); err != nil {
		t.Fatal(err)
	}
	before := history(t, s, "t", "")
	last := before[len(before)-1]
	if _, err := g.UpdateState(ctx, cfg, refengine.Update{"q": "x"}, refengine.End); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("update as End with values: got %v, want ErrInvalidArgument", err)
	}
	out, err := g.UpdateState(ctx, cfg, nil, refengine.End)
	if err != nil {
		t.Fatalf("update as End: %v", err)
	}
	hs := history(t, s, "t", "")
	if len(hs) != len(before)+1 {
		t.Fatalf("%d checkpoints, want %d", len(hs), len(before)+1)
	}
	end := hs[len(hs)-1]
	if end.Config.CheckpointID != out.CheckpointID || end.Parent == nil || end.Parent.CheckpointID != last.Config.CheckpointID {
		t.Errorf("update checkpoint %v parent %v, want a child of %s", end.Config, end.Parent, last.Config.CheckpointID)
	}
	step, _ := last.Metadata["step"].(int64)
	if end.Metadata["source"] != "update" || end.Metadata["step"] != step+1 {
		t.Errorf("metadata = %v, want source update, step %d", end.Metadata, step+1)
	}
	if got, want := end.Config.CheckpointID[19:23], last.Config.CheckpointID[19:23]; got != want {
		t.Errorf("clock sequence %s, want the loaded checkpoint's %s", got, want)
	}
	if _, ok := end.Checkpoint.VersionsSeen["ask"]["branch:to:ask"]; !ok {
		t.Errorf("ask's trigger not consumed: versions_seen = %v", end.Checkpoint.VersionsSeen)
	}
	snap, err := g.GetState(ctx, cfg, refengine.StateOptions{})
	if err != nil || len(snap.Next) != 0 {
		t.Fatalf("next after update as End = %v (%v), want nothing", snap.Next, err)
	}
	res, err := g.Invoke(ctx, nil, cfg)
	if err != nil || res.Interrupted || runs.get("ask") != 1 {
		t.Errorf("Invoke after End: %+v %v, ask ran %d times (want 1)", res, err, runs.get("ask"))
	}
}
