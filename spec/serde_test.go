package spec_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

func roundTrip(t testing.TB, v any) any {
	t.Helper()
	data, err := spec.DefaultSerde().Encode(v)
	if err != nil {
		t.Fatalf("Encode(%#v): %v", v, err)
	}
	out, err := spec.DefaultSerde().Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return out
}

func TestSerdePreservesTypes(t *testing.T) {
	values := []any{
		nil, true, false,
		int64(0), int64(1), int64(-1), int64(127), int64(128), int64(-33), int64(math.MaxInt64), int64(math.MinInt64),
		0.0, 1.0, -2.5, 1e300, -1e-300, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1),
		"", "hello", "ünïcödé|:%_'\"\\", strings.Repeat("x", 1<<20),
		[]byte{}, []byte{0, 1, 255}, make([]byte, 1<<20),
		[]any{}, []any{nil, int64(1), "a", []any{}},
		map[string]any{}, map[string]any{"a": map[string]any{"b": []any{1.5, int64(2)}}, "": nil},
	}
	for _, v := range values {
		got := roundTrip(t, v)
		if !reflect.DeepEqual(got, v) {
			t.Errorf("round trip of %T changed it: got %T %v", v, got, abbreviate(got))
		}
	}
	if got := roundTrip(t, math.Copysign(0, -1)).(float64); !math.Signbit(got) {
		t.Error("-0 lost its sign")
	}
	if got := roundTrip(t, math.NaN()).(float64); !math.IsNaN(got) {
		t.Error("NaN did not survive")
	}
}

func abbreviate(v any) string {
	s := reflect.ValueOf(v).String()
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func TestSerdeRejectsUnsupported(t *testing.T) {
	_, err := spec.DefaultSerde().Encode(map[string]any{"c": make(chan int)})
	if !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("error = %v, want ErrUnsupportedValue", err)
	}
	if _, err := spec.DefaultSerde().Decode([]byte{0xc1}); err == nil {
		t.Fatal("decoding garbage must fail")
	}
}

// FuzzNormalizeSerde builds a value from fuzz input and checks that encoding
// then decoding returns exactly the normalised value.
func FuzzNormalizeSerde(f *testing.F) {
	f.Add([]byte("seed"), int64(42), 3.5, "s|t:u")
	f.Add([]byte{}, int64(math.MinInt64), math.Copysign(0, -1), "")
	f.Fuzz(func(t *testing.T, b []byte, i int64, fl float64, s string) {
		v := map[string]any{
			"b": b, "i": i, "f": fl, "s": s,
			"l":  []any{i, s, []any{b}},
			s:    map[string]any{"nested": []int{int(i % 1000)}},
			"u8": uint8(i),
		}
		nv, err := spec.Normalize(v)
		if err != nil {
			t.Fatal(err)
		}
		got := roundTrip(t, v)
		if math.IsNaN(fl) {
			return // NaN != NaN under DeepEqual
		}
		if !reflect.DeepEqual(got, nv) {
			t.Fatalf("round trip mismatch:\n got %#v\nwant %#v", got, nv)
		}
	})
}
