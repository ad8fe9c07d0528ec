package trace_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// recordLinear records a deterministic run of START -> a -> b and a
// History read, with checkpoint IDs minted from start.
func recordLinear(t *testing.T, start time.Time) []trace.Call {
	t.Helper()
	rec := trace.Record(memory.New())
	node := func(name string) refengine.NodeFunc {
		return func(context.Context, refengine.State) (refengine.Update, error) {
			return refengine.Update{"log": []any{name}}, nil
		}
	}
	g, err := refengine.NewStateGraph().
		AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
		AddKey("n", refengine.LastValue()).
		AddNode("a", node("a")).AddNode("b", node("b")).
		AddEdge(refengine.Start, "a").AddEdge("a", "b").
		Compile(refengine.CompileOptions{Saver: rec})
	if err != nil {
		t.Fatal(err)
	}
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync, NewCheckpointID: trace.SequentialIDs(start)}
	if _, err := g.Invoke(context.Background(), refengine.State{"n": 7, "log": []any{}}, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := g.History(context.Background(), cfg, refengine.HistoryOptions{Limit: 2}); err != nil {
		t.Fatal(err)
	}
	return rec.Calls()
}

func TestTraceRoundTripAndReplay(t *testing.T) {
	calls := recordLinear(t, time.Unix(1700000000, 0))
	data, err := trace.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	back, err := trace.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(calls) || back[len(back)-1].Method != trace.MethodList || len(back[len(back)-1].Tuples) != 2 {
		t.Fatalf("round trip lost calls: %d vs %d", len(back), len(calls))
	}
	again, err := trace.Marshal(back)
	if err != nil || !bytes.Equal(again, data) {
		t.Fatalf("trace does not round-trip byte for byte (err %v)", err)
	}
	if err := trace.Replay(context.Background(), memory.New(), back); err != nil {
		t.Fatalf("replay on a fresh saver: %v", err)
	}
	// A saver that returns something else is reported at the first
	// differing read.
	bad := trace.Replay(context.Background(), dropWrites{memory.New()}, back)
	var re *trace.ReplayError
	if !errors.As(bad, &re) || re.Method != trace.MethodList {
		t.Fatalf("replay against a write-dropping saver: %v", bad)
	}
	// Replaying on a saver that already holds the data fails the first
	// GetTuple, recorded as not found.
	s := memory.New()
	_ = trace.Replay(context.Background(), s, back)
	if err := trace.Replay(context.Background(), s, back); !errors.As(err, &re) || re.Index != 0 {
		t.Fatalf("second replay: %v", err)
	}
	if _, err := trace.Unmarshal([]byte(`{"calls":[{"method":"Frobnicate"}]}`)); err == nil {
		t.Error("unknown method accepted")
	}
}

func TestNormalizeTraceIgnoresIDsAndTimes(t *testing.T) {
	a, err := trace.Marshal(recordLinear(t, time.Unix(1700000000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := trace.Marshal(recordLinear(t, time.Unix(1800000000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Fatal("traces with different clocks should differ before normalisation")
	}
	na, err := trace.Normalize(a)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := trace.Normalize(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(na, nb) {
		t.Errorf("normalised traces differ:\n%s", firstDiff(na, nb))
	}
	if !bytes.Contains(na, []byte("<id1>")) || !bytes.Contains(na, []byte("<ts>")) || !bytes.Contains(na, []byte("<v1>")) {
		t.Error("normalised trace lacks ID, timestamp or version tokens")
	}
}

// dropWrites is a saver that silently ignores PutWrites.
type dropWrites struct{ spec.Saver }

func (dropWrites) PutWrites(context.Context, spec.Config, []spec.Write, string, string) error {
	return nil
}

func TestReplayDetectsExtraListResults(t *testing.T) {
	ctx := context.Background()
	rec := trace.Record(memory.New())
	cp := spec.Checkpoint{V: 4, ID: "a", ChannelValues: map[string]any{}, ChannelVersions: spec.Versions{}}
	if _, err := rec.Put(ctx, spec.Config{ThreadID: "t"}, cp, spec.Metadata{}, spec.Versions{}); err != nil {
		t.Fatal(err)
	}
	for _, err := range rec.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	calls := rec.Calls()
	if calls[1].Stopped || len(calls[1].Tuples) != 1 {
		t.Fatalf("recorded list: %+v", calls[1])
	}
	other := memory.New()
	cp.ID = "b"
	if _, err := other.Put(ctx, spec.Config{ThreadID: "t"}, cp, spec.Metadata{}, spec.Versions{}); err != nil {
		t.Fatal(err)
	}
	var re *trace.ReplayError
	if err := trace.Replay(ctx, other, calls); !errors.As(err, &re) || re.Index != 1 {
		t.Fatalf("replay with an extra checkpoint: %v", err)
	}
	if err := trace.Replay(ctx, memory.New(), calls); err != nil {
		t.Fatalf("replay on a fresh saver: %v", err)
	}
}

// firstDiff shows the first line where two traces differ.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range max(len(wl), len(gl)) {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, w, g)
		}
	}
	return ""
}
