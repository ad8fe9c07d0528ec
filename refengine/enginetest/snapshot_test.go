package enginetest_test

import (
	"context"
	"maps"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// snapshotSaver stores each checkpoint's ChannelValues as a whole snapshot,
// as LangGraph's SQLite and MongoDB savers do: it ignores newVersions and
// has the memory adapter store every channel of the checkpoint under its
// version, so a channel missing from ChannelValues reads back absent even
// when an earlier checkpoint stored a value for that version (PUT-7).
type snapshotSaver struct{ spec.Saver }

func (s snapshotSaver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, _ spec.Versions) (spec.Config, error) {
	return s.Saver.Put(ctx, cfg, cp, md, maps.Clone(cp.ChannelVersions))
}

// TestCompleteChannelValues runs every scenario on a whole-snapshot saver.
// The scenarios check state, history and stored values, so they pass only
// if every Put of refengine carries the complete ChannelValues of its
// checkpoint, not just the channels of newVersions: the property that lets
// a snapshot saver (conformance.WholeSnapshots) back the engine.
func TestCompleteChannelValues(t *testing.T) {
	for _, sc := range enginetest.All() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			env := &enginetest.Env{Saver: snapshotSaver{memory.New()}}
			if err := sc.Run(t.Context(), env); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSnapshotSaverDetectsPartialValues shows that the check above can
// fail: an engine that passed only the updated channels would lose the
// others on a snapshot saver.
func TestSnapshotSaverDetectsPartialValues(t *testing.T) {
	ctx := t.Context()
	s := snapshotSaver{memory.New()}
	cfg := spec.Config{ThreadID: "t"}
	first := spec.Checkpoint{V: 4, ID: "1", ChannelValues: map[string]any{"a": int64(1), "b": int64(2)},
		ChannelVersions: spec.Versions{"a": "1", "b": "1"}, VersionsSeen: map[string]spec.Versions{}}
	if _, err := s.Put(ctx, cfg, first, spec.Metadata{}, spec.Versions{"a": "1", "b": "1"}); err != nil {
		t.Fatal(err)
	}
	// Only "b" changed; a partial ChannelValues leaves "a" out.
	second := spec.Checkpoint{V: 4, ID: "2", ChannelValues: map[string]any{"b": int64(3)},
		ChannelVersions: spec.Versions{"a": "1", "b": "2"}, VersionsSeen: map[string]spec.Versions{}}
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, second, spec.Metadata{}, spec.Versions{"b": "2"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Checkpoint.ChannelValues["a"]; ok {
		t.Fatalf("snapshot saver kept channel a from an earlier checkpoint: %v", got.Checkpoint.ChannelValues)
	}
}
