package bridge

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// histories builds the delta histories of a delta_history result
// description.
func (b vectorBuilder) histories(r map[string]any) map[string]spec.DeltaHistory {
	out := map[string]spec.DeltaHistory{}
	for ch, raw := range b.obj(r["histories"]) {
		hd := b.obj(raw)
		h := spec.DeltaHistory{Writes: []spec.PendingWrite{}}
		if seed, ok := hd["seed"]; ok {
			h.Seed, h.HasSeed = buildValue(b.t, b.obj(seed)), true
		}
		for _, e := range hd["writes"].([]any) {
			w := e.([]any)
			h.Writes = append(h.Writes, spec.PendingWrite{TaskID: w[0].(string), Channel: w[1].(string), Value: buildValue(b.t, b.obj(w[2]))})
		}
		out[ch] = h
	}
	return out
}

func (b vectorBuilder) encodeHistories(r map[string]any) []byte {
	raw, err := appendDeltaHistories(nil, b.histories(r))
	if err != nil {
		b.t.Fatal(err)
	}
	return raw
}

func (b vectorBuilder) checkHistories(result any, r map[string]any) {
	b.t.Helper()
	got, err := deltaHistoriesOf(result)
	if err != nil {
		b.t.Fatal(err)
	}
	if want := b.histories(r); !reflect.DeepEqual(got, want) {
		b.t.Errorf("decode histories:\n got %#v\nwant %#v", got, want)
	}
}

// historySaver is a fake saver with a DeltaHistoryReader that answers from
// a fixed table and records what it was asked.
type historySaver struct {
	spec.Saver
	got struct {
		cfg      spec.Config
		channels []string
	}
	answer map[string]spec.DeltaHistory
}

func (h *historySaver) DeltaHistory(_ context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	h.got.cfg, h.got.channels = cfg, channels
	return h.answer, nil
}

func TestDeltaSnapshotValueRoundTrip(t *testing.T) {
	in := map[string]any{
		"m": spec.DeltaSnapshot{Value: []any{"a", int64(1), map[string]any{"$k": []byte{0, 1}}}},
		"n": []any{spec.DeltaSnapshot{Value: nil}},
	}
	b, err := appendValue(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"m":{"$delta":["a",1,{"$map":{"$k":{"$bytes":"AAE="}}}]},"n":[{"$delta":null}]}`
	if string(b) != want {
		t.Fatalf("encoded %s, want %s", b, want)
	}
	out, err := decodeValue(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("decoded %#v, want %#v", out, in)
	}
}

func TestDeltaSnapshotsCountTowardsTheDepthLimit(t *testing.T) {
	var v any = "x"
	for range maxWireDepth + 1 {
		v = spec.DeltaSnapshot{Value: v}
	}
	if _, err := appendValue(nil, v); !errors.Is(err, ErrNotCarried) {
		t.Fatalf("a chain of %d snapshots: err %v, want ErrNotCarried", maxWireDepth+1, err)
	}
}

func TestDeltaHistoryServerWithoutReader(t *testing.T) {
	if caps := capabilitiesOf(struct{ spec.Saver }{}); slices.Contains(caps, capDeltaHistory) {
		t.Fatalf("capabilities %v advertise %s for a saver without a reader", caps, capDeltaHistory)
	}
	p := params{method: "delta_history", m: map[string]any{"channels": []any{"a"}, "config": map[string]any{"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": ""}}}
	if _, err := deltaHistory(context.Background(), struct{ spec.Saver }{}, &p); !errors.Is(err, errors.ErrUnsupported) || codeOf(err) != "unsupported" {
		t.Fatalf("err %v (code %q), want unsupported", err, codeOf(err))
	}
}

func TestDeltaHistoryServerWithReader(t *testing.T) {
	h := &historySaver{answer: map[string]spec.DeltaHistory{
		"a": {Seed: spec.DeltaSnapshot{Value: []any{"x"}}, HasSeed: true, Writes: []spec.PendingWrite{{TaskID: "t1", Channel: "a", Value: "y"}}},
		"b": {Writes: []spec.PendingWrite{}},
	}}
	if caps := capabilitiesOf(h); !slices.Contains(caps, capDeltaHistory) {
		t.Fatalf("capabilities %v lack %s", caps, capDeltaHistory)
	}
	p := params{method: "delta_history", m: map[string]any{"channels": []any{"a", "b"}, "config": map[string]any{"thread_id": "t", "checkpoint_ns": "n", "checkpoint_id": "c"}}}
	raw, err := deltaHistory(context.Background(), h, &p)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"histories":{"a":{"seed":{"$delta":["x"]},"writes":[["t1","a","y"]]},"b":{"writes":[]}}}`
	if string(raw) != want {
		t.Fatalf("result %s, want %s", raw, want)
	}
	if wantCfg := (spec.Config{ThreadID: "t", Namespace: "n", CheckpointID: "c"}); h.got.cfg != wantCfg || !reflect.DeepEqual(h.got.channels, []string{"a", "b"}) {
		t.Fatalf("saver asked for %+v %v", h.got.cfg, h.got.channels)
	}
	tree, err := decodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	back, err := deltaHistoriesOf(tree)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, h.answer) {
		t.Fatalf("decoded %#v, want %#v", back, h.answer)
	}
}
