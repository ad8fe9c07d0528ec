package sqlite

import (
	"context"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestSmoke(t *testing.T) {
	for _, mem := range []bool{false, true} {
		var s *Saver
		if mem {
			s = openMemory(t)
		} else {
			s, _ = openFile(t)
		}
		ctx := context.Background()
		cfg := spec.Config{ThreadID: "t1"}
		cp, vs := checkpoint("0001", map[string]any{"a": int64(1), "b": []any{"x"}})
		mustPut(t, s, cfg, cp, spec.Metadata{"source": "input", "step": int64(-1), "f": 1.0}, vs)
		cp2, vs2 := checkpoint("0002", map[string]any{"a": int64(2)})
		cp2.ChannelVersions["b"] = "1"
		mustPut(t, s, spec.Config{ThreadID: "t1", CheckpointID: "0001"}, cp2, spec.Metadata{"source": "loop"}, vs2)
		if err := s.PutWrites(ctx, spec.Config{ThreadID: "t1", CheckpointID: "0002"},
			[]spec.Write{{Channel: "a", Value: int64(9)}, {Channel: spec.ErrorChannel, Value: "boom"}}, "task", "p"); err != nil {
			t.Fatal(err)
		}
		tup := mustGet(t, s, cfg)
		t.Logf("%+v parent=%+v", tup, tup.Parent)
		tup = mustGet(t, s, spec.Config{ThreadID: "t1", CheckpointID: "0001"})
		t.Logf("%+v md=%#v", tup.Checkpoint, tup.Metadata)
		t.Log(listIDs(t, s, spec.ListOptions{ThreadID: "t1"}))
		t.Log(listIDs(t, s, spec.ListOptions{Filter: spec.Metadata{"source": "loop"}}))
		t.Log(listIDs(t, s, spec.ListOptions{Filter: spec.Metadata{"f": int64(1)}, AllNamespaces: true}))
		if err := s.Prune(ctx, []string{"t1"}, spec.KeepLatest); err != nil {
			t.Fatal(err)
		}
		t.Log(listIDs(t, s, spec.ListOptions{ThreadID: "t1"}))
		if err := s.CopyThread(ctx, "t1", "t2"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteForRuns(ctx, []string{"r"}); err != nil {
			t.Fatal(err)
		}
		t.Log(listIDs(t, s, spec.ListOptions{AllNamespaces: true}))
	}
}
