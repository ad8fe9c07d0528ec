package msgpackread_test

import (
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/deltavectors"
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
	for _, v := range deltavectors.Python() {
		got, ok := readValue(v.Bytes())
		if !ok || !reflect.DeepEqual(got, v.Want) {
			t.Errorf("%s: Value(%s) = %#v, %v; want %#v", v.Name, v.Hex, got, ok, v.Want)
		}
	}
}

func TestValueRefusesMalformedSnapshots(t *testing.T) {
	for _, v := range deltavectors.Malformed() {
		if got, ok := readValue(v.Bytes()); ok {
			t.Errorf("%s: Value(%s) = %#v, want a refusal", v.Name, v.Hex, got)
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
