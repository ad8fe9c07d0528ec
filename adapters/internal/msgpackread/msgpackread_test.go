package msgpackread_test

import (
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/msgpackread"
	"github.com/checkpointkit/checkpointkit/spec"
)

// readValue reads data whole with a Reader.
func readValue(data []byte) (any, bool) {
	r := msgpackread.New(data)
	v, ok := r.Value()
	return v, ok && r.Done()
}

// TestValueAgreesWithSerde checks that whatever the reader reads, it reads
// as the default serde decodes it, and that it reads the forms it claims.
func TestValueAgreesWithSerde(t *testing.T) {
	serde := spec.DefaultSerde()
	tests := []struct {
		name string
		v    any
		fast bool // the reader reads it itself
	}{
		{"nil", nil, true},
		{"int", int64(-300), true},
		{"float", 2.5, true},
		{"string", "héllo", true},
		{"list", []any{int64(1), "a", nil, true}, true},
		{"map", map[string]any{"a": map[string]any{"b": []any{}}}, true},
		{"snapshot", spec.DeltaSnapshot{Value: []any{int64(1), "a"}}, true},
		{"empty snapshot", spec.DeltaSnapshot{}, true},
		{"nested snapshots", map[string]any{"c": spec.DeltaSnapshot{Value: []any{spec.DeltaSnapshot{Value: "x"}}}}, true},
		{"snapshot of 300 bytes", spec.DeltaSnapshot{Value: string(make([]byte, 300))}, true},
		{"snapshot of 70000 bytes", spec.DeltaSnapshot{Value: string(make([]byte, 70000))}, true},
		{"bytes", []byte{1}, false},
		{"snapshot of bytes", spec.DeltaSnapshot{Value: []byte{1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := serde.Encode(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := serde.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := readValue(data)
			if ok != tt.fast {
				t.Fatalf("reader read %x: %v, want %v", data, ok, tt.fast)
			}
			if ok && !reflect.DeepEqual(got, want) {
				t.Fatalf("reader gives %#v, serde %#v", got, want)
			}
		})
	}
}

func TestValueReadsLangGraphPythonSnapshots(t *testing.T) {
	tests := []struct {
		hex  string
		want any
	}{
		// JsonPlusSerializer().dumps_typed(_DeltaSnapshot([1, "a"]))
		{"d6079201a161", spec.DeltaSnapshot{Value: []any{int64(1), "a"}}},
		// ... of {"x": _DeltaSnapshot({"k": [_DeltaSnapshot(2)]})}
		{"81a178c7070781a16b91d40702", map[string]any{"x": spec.DeltaSnapshot{Value: map[string]any{
			"k": []any{spec.DeltaSnapshot{Value: int64(2)}},
		}}}},
	}
	for _, tt := range tests {
		data, _ := hex.DecodeString(tt.hex)
		got, ok := readValue(data)
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Value(%s) = %#v, %v; want %#v", tt.hex, got, ok, tt.want)
		}
	}
}

func TestValueRefusesMalformedSnapshots(t *testing.T) {
	for _, h := range []string{
		"d40501",     // another extension type
		"d5070102",   // payload longer than its value
		"d50792a1",   // payload shorter than its value
		"c70a07a161", // payload past the end
		"d607",       // truncated
		"c807",       // truncated length
	} {
		data, _ := hex.DecodeString(h)
		if v, ok := readValue(data); ok {
			t.Errorf("Value(%s) = %#v, want a refusal", h, v)
		}
	}
}

func TestValueDepthLimit(t *testing.T) {
	var v any = int64(1)
	for range msgpackread.MaxDepth + 1 {
		v = spec.DeltaSnapshot{Value: v}
	}
	data, err := spec.DefaultSerde().Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := readValue(data); ok {
		t.Fatalf("the reader followed %d levels", msgpackread.MaxDepth+1)
	}
}
