package spec_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

type myInts []int32
type myMap map[string]uint8

func TestNormalizeConverts(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"bool", true, true},
		{"int", 7, int64(7)},
		{"int8", int8(-3), int64(-3)},
		{"uint16", uint16(9), int64(9)},
		{"max uint64 that fits", uint64(math.MaxInt64), int64(math.MaxInt64)},
		{"float32", float32(1.5), 1.5},
		{"negative zero", math.Copysign(0, -1), math.Copysign(0, -1)},
		{"string", "a|b:c", "a|b:c"},
		{"bytes", []byte("x"), []byte("x")},
		{"nil bytes become empty bytes", []byte(nil), []byte{}},
		{"typed slice", myInts{1, 2}, []any{int64(1), int64(2)}},
		{"array", [2]string{"a", "b"}, []any{"a", "b"}},
		{"nil slice becomes empty list", []any(nil), []any{}},
		{"typed map", myMap{"k": 1}, map[string]any{"k": int64(1)}},
		{"nil map becomes empty map", map[string]any(nil), map[string]any{}},
		{"metadata type", spec.Metadata{"a": []string{"x"}}, map[string]any{"a": []any{"x"}}},
		{"nested", map[string]any{"l": []any{map[string]int{"n": 1}}}, map[string]any{"l": []any{map[string]any{"n": int64(1)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spec.Normalize(tt.in)
			if err != nil {
				t.Fatalf("Normalize(%#v): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Normalize(%#v) = %#v, want %#v", tt.in, got, tt.want)
			}
			if f, ok := tt.want.(float64); ok && math.Signbit(f) != math.Signbit(got.(float64)) {
				t.Fatalf("sign of zero lost")
			}
		})
	}
}

func TestNormalizeRejects(t *testing.T) {
	type point struct{ X int }
	tests := []struct {
		name     string
		in       any
		wantPath string
	}{
		{"struct", point{1}, "$"},
		{"pointer", new(int), "$"},
		{"chan in list", []any{1, make(chan int)}, "$[1]"},
		{"func in map", map[string]any{"f": func() {}}, `$["f"]`},
		{"int keys", map[int]string{1: "a"}, "$"},
		{"uint64 overflow", []any{uint64(math.MaxUint64)}, "$[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := spec.Normalize(tt.in)
			if !errors.Is(err, spec.ErrUnsupportedValue) {
				t.Fatalf("Normalize(%#v) error = %v, want ErrUnsupportedValue", tt.in, err)
			}
			if want := "value at " + tt.wantPath + ":"; !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not name path %q", err, tt.wantPath)
			}
		})
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestNormalizeDoesNotShare(t *testing.T) {
	in := map[string]any{"l": []any{"a"}, "b": []byte("x")}
	out, err := spec.Normalize(in)
	if err != nil {
		t.Fatal(err)
	}
	in["l"].([]any)[0] = "changed"
	in["b"].([]byte)[0] = 'y'
	in["new"] = 1
	want := map[string]any{"l": []any{"a"}, "b": []byte("x")}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("output changed with input: %#v", out)
	}
}

func TestNormalizeMetadata(t *testing.T) {
	md, err := spec.NormalizeMetadata(spec.Metadata{
		"top":    "a\x00b",
		"nested": map[string]any{"s": "c\x00d"},
		"list":   []any{"e\x00"},
		"n":      1,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Metadata{
		"top":    "ab",
		"nested": map[string]any{"s": "c\x00d"},
		"list":   []any{"e\x00"},
		"n":      int64(1),
	}
	if !reflect.DeepEqual(md, want) {
		t.Fatalf("got %#v, want %#v", md, want)
	}
	if md, err := spec.NormalizeMetadata(nil); err != nil || md == nil || len(md) != 0 {
		t.Fatalf("nil metadata: %#v, %v", md, err)
	}
	for name, bad := range map[string]spec.Metadata{
		"bytes":        {"b": []byte("x")},
		"NaN":          {"f": math.NaN()},
		"Inf nested":   {"m": map[string]any{"f": math.Inf(1)}},
		"bad utf8":     {"s": "\xff"},
		"bad utf8 key": {"\xff": 1},
		"struct":       {"s": struct{}{}},
	} {
		if _, err := spec.NormalizeMetadata(bad); !errors.Is(err, spec.ErrUnsupportedValue) {
			t.Errorf("%s: error = %v, want ErrUnsupportedValue", name, err)
		}
	}
	// Filters keep NULs.
	f, err := spec.NormalizeFilter(spec.Metadata{"top": "a\x00"})
	if err != nil || f["top"] != "a\x00" {
		t.Fatalf("NormalizeFilter = %#v, %v", f, err)
	}
}

func TestEqualAndMatchFilter(t *testing.T) {
	md := spec.Metadata{
		"source":  "loop",
		"step":    int64(1),
		"ratio":   0.5,
		"flag":    true,
		"none":    nil,
		"a.b":     "dotted",
		"nested":  map[string]any{"x": int64(1), "y": []any{"p", "q"}},
		"list":    []any{int64(1), int64(2)},
		"$weird'": `"quoted"`,
	}
	tests := []struct {
		name   string
		filter spec.Metadata
		want   bool
	}{
		{"empty filter", spec.Metadata{}, true},
		{"string", spec.Metadata{"source": "loop"}, true},
		{"string mismatch", spec.Metadata{"source": "input"}, false},
		{"int equals float", spec.Metadata{"step": 1.0}, true},
		{"float equals float", spec.Metadata{"ratio": 0.5}, true},
		{"true is not 1", spec.Metadata{"flag": int64(1)}, false},
		{"1 is not true", spec.Metadata{"step": true}, false},
		{"bool", spec.Metadata{"flag": true}, true},
		{"nil matches present null", spec.Metadata{"none": nil}, true},
		{"nil does not match absent", spec.Metadata{"absent": nil}, false},
		{"nil does not match value", spec.Metadata{"source": nil}, false},
		{"dotted key is literal", spec.Metadata{"a.b": "dotted"}, true},
		{"dotted key is not a path", spec.Metadata{"nested.x": int64(1)}, false},
		{"nested whole, reordered", spec.Metadata{"nested": map[string]any{"y": []any{"p", "q"}, "x": 1.0}}, true},
		{"nested partial", spec.Metadata{"nested": map[string]any{"x": int64(1)}}, false},
		{"list in order", spec.Metadata{"list": []any{int64(1), int64(2)}}, true},
		{"list out of order", spec.Metadata{"list": []any{int64(2), int64(1)}}, false},
		{"list prefix", spec.Metadata{"list": []any{int64(1)}}, false},
		{"odd key", spec.Metadata{"$weird'": `"quoted"`}, true},
		{"all keys", spec.Metadata{"source": "loop", "step": int64(1)}, true},
		{"one key fails", spec.Metadata{"source": "loop", "step": int64(2)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := spec.NormalizeFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got := spec.MatchFilter(md, f); got != tt.want {
				t.Fatalf("MatchFilter(%v) = %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
	if spec.Equal(math.NaN(), math.NaN()) {
		t.Fatal("NaN must equal nothing")
	}
	if !spec.Equal([]byte("a"), []byte("a")) || spec.Equal([]byte("a"), "a") {
		t.Fatal("byte slices compare as bytes only")
	}
	if spec.Equal(int64(math.MaxInt64), float64(math.MaxInt64)) {
		t.Fatal("2^63-1 must not equal 2^63")
	}
}
