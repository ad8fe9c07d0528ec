package spec_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Bytes LangGraph Python 1.x's JsonPlusSerializer.dumps_typed produced for
// _DeltaSnapshot([1, "a"]) and for
// {"x": _DeltaSnapshot({"k": [_DeltaSnapshot(2)]})} (its "msgpack" type).
const (
	pySnapshot       = "d6079201a161"
	pyNestedSnapshot = "81a178c7070781a16b91d40702"
)

func TestNormalizeDeltaSnapshot(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"scalar", spec.DeltaSnapshot{Value: 3}, spec.DeltaSnapshot{Value: int64(3)}},
		{"nil value", spec.DeltaSnapshot{}, spec.DeltaSnapshot{}},
		{"list converted", spec.DeltaSnapshot{Value: []int{1, 2}}, spec.DeltaSnapshot{Value: []any{int64(1), int64(2)}}},
		{"inside a map", map[string]any{"c": spec.DeltaSnapshot{Value: "x"}}, map[string]any{"c": spec.DeltaSnapshot{Value: "x"}}},
		{"nested", spec.DeltaSnapshot{Value: []any{spec.DeltaSnapshot{Value: uint8(2)}}},
			spec.DeltaSnapshot{Value: []any{spec.DeltaSnapshot{Value: int64(2)}}}},
		{"look-alike struct is not one", struct{ Value any }{1}, nil},
		{"pointer is not one", &spec.DeltaSnapshot{Value: 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spec.Normalize(tt.in)
			if tt.want == nil {
				if !errors.Is(err, spec.ErrUnsupportedValue) {
					t.Fatalf("Normalize(%#v) = %#v, %v; want ErrUnsupportedValue", tt.in, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Normalize(%#v) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestNormalizeDeltaSnapshotCopies(t *testing.T) {
	inner := []any{"a"}
	got, err := spec.Normalize(spec.DeltaSnapshot{Value: inner})
	if err != nil {
		t.Fatal(err)
	}
	inner[0] = "changed"
	if v := got.(spec.DeltaSnapshot).Value.([]any)[0]; v != "a" {
		t.Fatalf("normalised snapshot shares memory with its input: %v", v)
	}
}

func TestDeltaSnapshotDepth(t *testing.T) {
	// Each snapshot counts one level: MaxValueDepth of them is the limit.
	var v any = int64(1)
	for range spec.MaxValueDepth {
		v = spec.DeltaSnapshot{Value: v}
	}
	if _, err := spec.Normalize(v); err != nil {
		t.Fatalf("%d nested snapshots: %v", spec.MaxValueDepth, err)
	}
	if got := roundTrip(t, v); !reflect.DeepEqual(got, v) {
		t.Fatalf("%d nested snapshots changed in a round trip", spec.MaxValueDepth)
	}
	deeper := []any{v}
	if _, err := spec.Normalize(deeper); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("depth %d: error = %v, want ErrUnsupportedValue", spec.MaxValueDepth+1, err)
	}
	if _, err := spec.Normalize(spec.DeltaSnapshot{Value: v}); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("%d nested snapshots: error = %v, want ErrUnsupportedValue", spec.MaxValueDepth+1, err)
	}
}

func TestDeltaSnapshotRejectedInMetadata(t *testing.T) {
	tests := []struct {
		name string
		md   spec.Metadata
	}{
		{"top level", spec.Metadata{"s": spec.DeltaSnapshot{Value: 1}}},
		{"nested", spec.Metadata{"m": map[string]any{"l": []any{spec.DeltaSnapshot{Value: "x"}}}}},
		{"empty", spec.Metadata{"s": spec.DeltaSnapshot{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := spec.NormalizeMetadata(tt.md); !errors.Is(err, spec.ErrUnsupportedValue) {
				t.Errorf("NormalizeMetadata: error = %v, want ErrUnsupportedValue", err)
			}
			if _, err := spec.NormalizeFilter(tt.md); !errors.Is(err, spec.ErrUnsupportedValue) {
				t.Errorf("NormalizeFilter: error = %v, want ErrUnsupportedValue", err)
			}
		})
	}
}

func TestDeltaSnapshotEqual(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{spec.DeltaSnapshot{Value: int64(1)}, spec.DeltaSnapshot{Value: 1.0}, true},
		{spec.DeltaSnapshot{Value: []any{"a"}}, spec.DeltaSnapshot{Value: []any{"a"}}, true},
		{spec.DeltaSnapshot{}, spec.DeltaSnapshot{}, true},
		{spec.DeltaSnapshot{Value: int64(1)}, int64(1), false},
		{int64(1), spec.DeltaSnapshot{Value: int64(1)}, false},
		{spec.DeltaSnapshot{Value: "a"}, spec.DeltaSnapshot{Value: "b"}, false},
		{spec.DeltaSnapshot{Value: spec.DeltaSnapshot{Value: "a"}}, spec.DeltaSnapshot{Value: "a"}, false},
	}
	for _, tt := range tests {
		if got := spec.Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSerdeDeltaSnapshotRoundTrip(t *testing.T) {
	values := []any{
		spec.DeltaSnapshot{},
		spec.DeltaSnapshot{Value: int64(-5)},
		spec.DeltaSnapshot{Value: "text"},
		spec.DeltaSnapshot{Value: []byte{0, 1}},
		spec.DeltaSnapshot{Value: []any{}},
		spec.DeltaSnapshot{Value: map[string]any{"a": []any{1.5, nil}}},
		spec.DeltaSnapshot{Value: bytes.Repeat([]byte("x"), 70000)},
		[]any{int64(1), spec.DeltaSnapshot{Value: []any{spec.DeltaSnapshot{Value: map[string]any{}}}}},
		map[string]any{"c": spec.DeltaSnapshot{Value: map[string]any{"k": spec.DeltaSnapshot{Value: true}}}},
	}
	for _, v := range values {
		if got := roundTrip(t, v); !reflect.DeepEqual(got, v) {
			t.Errorf("round trip of %#v gave %#v", abbreviate(v), abbreviate(got))
		}
	}
}

func TestSerdeDeltaSnapshotLangGraphPython(t *testing.T) {
	tests := []struct {
		name string
		hex  string
		want any
	}{
		{"snapshot", pySnapshot, spec.DeltaSnapshot{Value: []any{int64(1), "a"}}},
		{"nested", pyNestedSnapshot, map[string]any{"x": spec.DeltaSnapshot{Value: map[string]any{
			"k": []any{spec.DeltaSnapshot{Value: int64(2)}},
		}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := hex.DecodeString(tt.hex)
			if err != nil {
				t.Fatal(err)
			}
			got, err := spec.DefaultSerde().Decode(data)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Decode(%s) = %#v, %v; want %#v", tt.hex, got, err, tt.want)
			}
			// Ours differs in integer width only; its shape is Python's:
			// an extension of type 7 whose payload is one value.
			enc, err := spec.DefaultSerde().Encode(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			back, err := spec.DefaultSerde().Decode(enc)
			if err != nil || !reflect.DeepEqual(back, tt.want) {
				t.Fatalf("round trip = %#v, %v", back, err)
			}
		})
	}
	enc, err := spec.DefaultSerde().Encode(spec.DeltaSnapshot{Value: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "d507a161"; hex.EncodeToString(enc) != want {
		t.Errorf("Encode(DeltaSnapshot{\"a\"}) = %x, want %s (fixext 2, type 7, fixstr \"a\")", enc, want)
	}
}

func TestSerdeRejectsMalformedExtensions(t *testing.T) {
	tests := []struct {
		name string
		hex  string
		ours bool // the error wraps ErrUnsupportedValue
	}{
		{"other extension type", "d40501", true},
		{"timestamp extension", "d6ff00000000", true},
		{"payload longer than its value", "d5070102", false},
		{"payload shorter than its value", "d50792a1", false},
		{"payload past the end", "c70a07a161", false},
		{"truncated", "d607", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, _ := hex.DecodeString(tt.hex)
			v, err := spec.DefaultSerde().Decode(data)
			if err == nil {
				t.Fatalf("Decode(%s) = %#v, want an error", tt.hex, v)
			}
			if tt.ours && !errors.Is(err, spec.ErrUnsupportedValue) {
				t.Fatalf("Decode(%s): error = %v, want ErrUnsupportedValue", tt.hex, err)
			}
		})
	}
}
