package savertest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DeltaSnapshotValues stores delta snapshots as channel and write values
// and checks that GetTuple and List give them back as snapshots, never as
// their bare values, and that metadata holding one stores nothing
// (VALUE-12).
func DeltaSnapshotValues(t *testing.T, s spec.Saver) {
	t.Helper()
	ctx := context.Background()
	thread := "delta-snapshot-values"
	values := map[string]any{
		"delta":  spec.DeltaSnapshot{Value: []any{int64(1), "a"}},
		"plain":  []any{int64(1), "a"},
		"empty":  spec.DeltaSnapshot{},
		"big":    spec.DeltaSnapshot{Value: strings.Repeat("x", 40000)},
		"nested": map[string]any{"k": spec.DeltaSnapshot{Value: []any{spec.DeltaSnapshot{Value: map[string]any{"b": []byte{0, 1}}}}}},
	}
	versions := spec.Versions{}
	for ch := range values {
		versions[ch] = "1"
	}
	first := spec.Checkpoint{V: 4, ID: spec.NewCheckpointID(0), TS: "2026-01-01T00:00:00Z",
		ChannelValues: values, ChannelVersions: versions, VersionsSeen: map[string]spec.Versions{}}
	md := spec.Metadata{"step": int64(0), spec.DeltaCountersKey: map[string]any{"delta": []any{int64(0), int64(0)}}}
	cfg1, err := s.Put(ctx, spec.Config{ThreadID: thread}, first, md, versions)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	writes := []spec.Write{
		{Channel: "delta", Value: spec.DeltaSnapshot{Value: map[string]any{"n": int64(2)}}},
		{Channel: "plain", Value: map[string]any{"n": int64(2)}},
	}
	if err := s.PutWrites(ctx, cfg1, writes, "task-1", "~path"); err != nil {
		t.Fatalf("PutWrites: %v", err)
	}
	second := first
	second.ID = spec.NewCheckpointID(1)
	second.ChannelValues = map[string]any{"delta": spec.DeltaSnapshot{Value: "v2"}}
	second.ChannelVersions = spec.Versions{"delta": "2"}
	cfg2, err := s.Put(ctx, cfg1, second, spec.Metadata{"step": int64(1)}, spec.Versions{"delta": "2"})
	if err != nil {
		t.Fatalf("Put: %v", err)
	}

	want := map[string]map[string]any{cfg1.CheckpointID: values, cfg2.CheckpointID: second.ChannelValues}
	wantWrites := []spec.PendingWrite{
		{TaskID: "task-1", Channel: "delta", Value: writes[0].Value},
		{TaskID: "task-1", Channel: "plain", Value: writes[1].Value},
	}
	check := func(how string, tu *spec.Tuple) {
		t.Helper()
		if got := tu.Checkpoint.ChannelValues; !reflect.DeepEqual(got, want[tu.Config.CheckpointID]) {
			t.Errorf("%s %s: channel values %#v, want %#v", how, tu.Config.CheckpointID, got, want[tu.Config.CheckpointID])
		}
		if tu.Config.CheckpointID == cfg1.CheckpointID && !reflect.DeepEqual(tu.PendingWrites, wantWrites) {
			t.Errorf("%s: pending writes %#v, want %#v", how, tu.PendingWrites, wantWrites)
		}
	}
	for _, cfg := range []spec.Config{cfg1, cfg2} {
		tu, err := s.GetTuple(ctx, cfg)
		if err != nil {
			t.Fatalf("GetTuple: %v", err)
		}
		check("GetTuple", tu)
	}
	n := 0
	for tu, err := range s.List(ctx, spec.ListOptions{ThreadID: thread}) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		check("List", tu)
		n++
	}
	if n != 2 {
		t.Fatalf("List gave %d tuples, want 2", n)
	}

	bad := second
	bad.ID = spec.NewCheckpointID(2)
	_, err = s.Put(ctx, cfg2, bad, spec.Metadata{"s": spec.DeltaSnapshot{Value: int64(1)}}, spec.Versions{"delta": "2"})
	if !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("Put with a snapshot in metadata: error = %v, want ErrUnsupportedValue", err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: thread, CheckpointID: bad.ID}); !errors.Is(err, spec.ErrNotFound) {
		t.Fatalf("GetTuple of the rejected checkpoint: error = %v, want ErrNotFound", err)
	}
}
