package trace_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Two runs with different IDs, clocks and version formats are equal in
// canonical form; a changed write is not.
func TestCanonical(t *testing.T) {
	a := recordLinear(t, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	b := recordLinear(t, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))

	ca, err := trace.Canonical(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := trace.Canonical(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ca, cb); d != "" {
		t.Fatalf("canonical forms of two runs differ:\n%s", d)
	}
	if a[1].Checkpoint.ID == ca[1].Checkpoint.ID || ca[1].Checkpoint.ID != "cp1" || ca[1].Checkpoint.TS != "" {
		t.Errorf("checkpoint not canonical: %+v", ca[1].Checkpoint)
	}
	for _, c := range ca {
		if c.Method == trace.MethodPutWrites && c.TaskID != "task(|-1|~__pregel_pull, __start__)" {
			t.Errorf("first task ID %q, want task(|-1|~__pregel_pull, __start__)", c.TaskID)
		}
		if c.Method == trace.MethodPutWrites {
			break
		}
	}
	b[2].Writes[0].Value = "changed"
	cb, err = trace.Canonical(b)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Equal(ca, cb) {
		t.Error("a changed write is still canonically equal")
	}
}

// Versions map to their counter: integers as they are, Python-style
// strings without their zero padding and random fraction.
func TestCanonicalVersions(t *testing.T) {
	calls := []trace.Call{{Method: trace.MethodPut, Checkpoint: &spec.Checkpoint{ID: "x",
		ChannelVersions: spec.Versions{"a": "10", "b": "9", "c": "00000000000000000000000000000002.0123456789"}}, NewVersions: spec.Versions{"a": "10"}}}
	out, err := trace.Canonical(calls)
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Versions{"a": "v10", "b": "v9", "c": "v2"}
	if d := cmp.Diff(want, out[0].Checkpoint.ChannelVersions); d != "" {
		t.Error(d)
	}
	if calls[0].Checkpoint.ChannelVersions["a"] != "10" {
		t.Error("Canonical modified its input")
	}
}
