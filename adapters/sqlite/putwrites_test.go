package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestPutWritesAcrossStatements checks a PutWrites too large for one
// statement: every write lands with the index of its place in the call,
// regular writes keep the first value of a key and special ones the last,
// in every chunk.
func TestPutWritesAcrossStatements(t *testing.T) {
	ctx := context.Background()
	s, _ := openFile(t)
	cfg := spec.Config{ThreadID: "t", CheckpointID: "1"}
	mustPut(t, s, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1"}, nil, nil)
	n := 2*maxWritesPerStatement + 7
	writes := make([]spec.Write, n)
	for i := range writes {
		writes[i] = spec.Write{Channel: fmt.Sprint("c", i), Value: int64(i)}
	}
	writes[n-1] = spec.Write{Channel: spec.ErrorChannel, Value: "first"}
	if err := s.PutWrites(ctx, cfg, writes, "task", "p"); err != nil {
		t.Fatal(err)
	}
	again := make([]spec.Write, n)
	for i := range again {
		again[i] = spec.Write{Channel: fmt.Sprint("c", i), Value: int64(-i - 1)}
	}
	again[n-1] = spec.Write{Channel: spec.ErrorChannel, Value: "last"}
	if err := s.PutWrites(ctx, cfg, again, "task", "p"); err != nil {
		t.Fatal(err)
	}
	tp, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.PendingWrites) != n {
		t.Fatalf("%d pending writes, want %d", len(tp.PendingWrites), n)
	}
	// The special write (negative index) sorts first.
	if w := tp.PendingWrites[0]; w.Channel != spec.ErrorChannel || w.Value != "last" {
		t.Errorf("special write %+v, want the last value", w)
	}
	for i, w := range tp.PendingWrites[1:] {
		if w.Channel != fmt.Sprint("c", i) || w.Value != int64(i) {
			t.Fatalf("write %d is %+v, want c%d = %d (first wins)", i, w, i, i)
		}
	}
}
