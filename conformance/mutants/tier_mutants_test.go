package mutants

import (
	"context"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The mutants of tier_mutants.go must break only the core half of a split
// rule; these tests pin down what each leaves alone, so that its failures
// stay attributable to its own rule.

func TestTaskWritesReversedKeepsTasksAndSpecials(t *testing.T) {
	ctx := context.Background()
	m, ok := Lookup("task-writes-reversed")
	if !ok {
		t.Fatal("task-writes-reversed is not registered")
	}
	fill := func(s spec.Saver) []spec.PendingWrite {
		_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
		putW(ctx, s, "a", "b", wr("x", 1), wr(spec.InterruptChannel, "i"), wr("y", 2), wr("x", 3))
		putW(ctx, s, "a", "a", wr("z", 4))
		putW(ctx, s, "a", spec.NullTaskID, wr("x", 5), wr("x", 6))
		tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"})
		if err != nil {
			t.Fatal(err)
		}
		return tu.PendingWrites
	}
	want, got := fill(plain()), fill(m.Build())
	if len(got) != len(want) {
		t.Fatalf("got %d writes, want %d", len(got), len(want))
	}
	// Same task in every slot, special writes where they were.
	for i := range want {
		if got[i].TaskID != want[i].TaskID {
			t.Errorf("slot %d: task %q, want %q", i, got[i].TaskID, want[i].TaskID)
		}
		if spec.IsSpecialChannel(want[i].Channel) && got[i] != want[i] {
			t.Errorf("slot %d: special write %+v moved, got %+v", i, want[i], got[i])
		}
	}
	// Each task's regular writes reversed.
	regular := func(pws []spec.PendingWrite, task string) []spec.PendingWrite {
		var out []spec.PendingWrite
		for _, w := range pws {
			if w.TaskID == task && !spec.IsSpecialChannel(w.Channel) {
				out = append(out, w)
			}
		}
		return out
	}
	for _, task := range []string{"a", "b", spec.NullTaskID} {
		w, g := regular(want, task), regular(got, task)
		for i := range w {
			if g[i] != w[len(w)-1-i] {
				t.Errorf("task %q: regular writes %v, want %v reversed", task, g, w)
				break
			}
		}
	}
}

func TestUpdatedChannelsShortenedOnlyShortens(t *testing.T) {
	ctx := context.Background()
	m, ok := Lookup("updated-channels-shortened")
	if !ok {
		t.Fatal("updated-channels-shortened is not registered")
	}
	s := m.Build()
	for _, tc := range []struct {
		id       string
		put, get []string
	}{
		{"nil", nil, nil},
		{"empty", []string{}, []string{}},
		{"one", []string{"a"}, []string{"a"}},
		{"three", []string{"c", "a", "b"}, []string{"c", "a"}},
	} {
		if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{V: 4, ID: tc.id, UpdatedChannels: tc.put}, nil, nil); err != nil {
			t.Fatal(err)
		}
		tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: tc.id})
		if err != nil {
			t.Fatal(err)
		}
		if got := tu.Checkpoint.UpdatedChannels; !reflect.DeepEqual(got, tc.get) {
			t.Errorf("%s: UpdatedChannels %#v read back as %#v, want %#v", tc.id, tc.put, got, tc.get)
		}
	}
}

func TestTopLevelIntAsFloatKeepsNestedInts(t *testing.T) {
	ctx := context.Background()
	m, ok := Lookup("metadata-top-level-int-as-float")
	if !ok {
		t.Fatal("metadata-top-level-int-as-float is not registered")
	}
	s := m.Build()
	md := spec.Metadata{"step": 2, "source": "loop", "f": 1.5, "nested": map[string]any{"n": 3}, "list": []any{4}}
	if err := putCP(ctx, s, "t", "", "a", "", md, nil); err != nil {
		t.Fatal(err)
	}
	tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Metadata{"step": 2.0, "source": "loop", "f": 1.5, "nested": map[string]any{"n": int64(3)}, "list": []any{int64(4)}}
	if !reflect.DeepEqual(tu.Metadata, want) {
		t.Errorf("metadata %#v, want %#v", tu.Metadata, want)
	}
}
