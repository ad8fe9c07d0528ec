package bridge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/checkpointkit/checkpointkit/spec"
)

// same reports whether two plain values are identical: same types, floats
// by bits (so -0 differs from 0) with any NaN equal to any NaN, nil slices
// and maps distinct from empty ones.
func same(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.IsNaN(x) && math.IsNaN(y)
		}
		return math.Float64bits(x) == math.Float64bits(y)
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			if yv, ok := y[k]; !ok || !same(xv, yv) {
				return false
			}
		}
		return true
	case []byte:
		y, ok := b.([]byte)
		return ok && (x == nil) == (y == nil) && string(x) == string(y)
	}
	return reflect.TypeOf(a) == reflect.TypeOf(b) && reflect.DeepEqual(a, b)
}

func encode(t testing.TB, v any) string {
	t.Helper()
	b, err := appendValue(nil, v)
	if err != nil {
		t.Fatalf("encode %#v: %v", v, err)
	}
	return string(b)
}

func TestEncodeValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"true", true, `true`},
		{"false", false, `false`},
		{"zero", int64(0), `0`},
		{"max safe", int64(1<<53 - 1), `9007199254740991`},
		{"min safe", int64(-(1<<53 - 1)), `-9007199254740991`},
		{"2^53", int64(1 << 53), `{"$int":"9007199254740992"}`},
		{"-2^53", int64(-(1 << 53)), `{"$int":"-9007199254740992"}`},
		{"max int64", int64(math.MaxInt64), `{"$int":"9223372036854775807"}`},
		{"min int64", int64(math.MinInt64), `{"$int":"-9223372036854775808"}`},
		{"go int", 7, `7`},
		{"half", 0.5, `0.5`},
		{"tenth", 0.1, `0.1`},
		{"tiny", 1.5e-300, `1.5e-300`},
		{"subnormal", math.SmallestNonzeroFloat64, `5e-324`},
		{"small", 1e-7, `1e-7`},
		{"negative fraction", -2.25, `-2.25`},
		{"integral float", 2.0, `{"$float":"2"}`},
		{"float zero", 0.0, `{"$float":"0"}`},
		{"negative zero", math.Copysign(0, -1), `{"$float":"-0"}`},
		{"1e20", 1e20, `{"$float":"100000000000000000000"}`},
		{"1e300", 1e300, `{"$float":"1e+300"}`},
		{"max float", math.MaxFloat64, `{"$float":"1.7976931348623157e+308"}`},
		{"NaN", math.NaN(), `{"$float":"NaN"}`},
		{"+Inf", math.Inf(1), `{"$float":"Infinity"}`},
		{"-Inf", math.Inf(-1), `{"$float":"-Infinity"}`},
		{"float32", float32(1.5), `1.5`},
		{"empty string", "", `""`},
		{"escapes", "a\"b\\c\n\r\t\x00\x1f", `"a\"b\\c\n\r\t\u0000\u001f"`},
		{"unicode", "ü日本", `"ü日本"`},
		{"line separators", "\u2028\u2029", `"\u2028\u2029"`},
		{"empty bytes", []byte{}, `{"$bytes":""}`},
		{"bytes", []byte{0, 1, 255}, `{"$bytes":"AAH/"}`},
		{"nil bytes", []byte(nil), `{"$bytes":""}`},
		{"empty list", []any{}, `[]`},
		{"list", []any{int64(1), "x", nil}, `[1,"x",null]`},
		{"typed slice", []string{"a", "b"}, `["a","b"]`},
		{"empty map", map[string]any{}, `{}`},
		{"map", map[string]any{"a": int64(1)}, `{"a":1}`},
		{"dollar key alone", map[string]any{"$where": int64(1)}, `{"$map":{"$where":1}}`},
		{"tag-like key alone", map[string]any{"$int": "5"}, `{"$map":{"$int":"5"}}`},
		{"dollar map nested", map[string]any{"a": map[string]any{"$map": map[string]any{}}}, `{"a":{"$map":{"$map":{}}}}`},
		{"dollar key not first", map[string]any{"a$": true}, `{"a$":true}`},
		{"metadata", spec.Metadata{"$x": nil}, `{"$map":{"$x":null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := encode(t, tc.in); got != tc.want {
				t.Errorf("encode %#v = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestEncodeValueRejects checks that what the protocol cannot carry is
// ErrNotCarried, never spec.ErrUnsupportedValue: the saver behind the
// bridge did not refuse it.
func TestEncodeValueRejects(t *testing.T) {
	x := 1
	self := map[string]any{}
	self["self"] = self
	deep := any(int64(1))
	for range maxWireDepth + 1 {
		deep = []any{deep}
	}
	for name, v := range map[string]any{
		"struct":        struct{ A int }{1},
		"pointer":       &x,
		"func":          func() {},
		"int keys":      map[int]any{1: 1},
		"uint overflow": uint64(math.MaxUint64),
		"nested struct": []any{map[string]any{"k": struct{}{}}},
		"bad utf8":      "\xff",
		"bad utf8 key":  map[string]any{"\xfe": 1},
		"nested utf8":   []any{"ok", map[string]any{"k": "a\xc0"}},
		"self":          self,
		"too deep":      deep,
	} {
		_, err := appendValue(nil, v)
		if !errors.Is(err, ErrNotCarried) || !errors.Is(err, errors.ErrUnsupported) || errors.Is(err, spec.ErrUnsupportedValue) {
			t.Errorf("%s: got %v, want ErrNotCarried and not ErrUnsupportedValue", name, err)
		}
	}
}

// TestEncodeValueCarriesDeepValues checks that the client leaves
// SPEC.md VALUE-10 to the saver: a value deeper than spec.MaxValueDepth is
// sent.
func TestEncodeValueCarriesDeepValues(t *testing.T) {
	deep := any("x")
	for range spec.MaxValueDepth + 5 {
		deep = map[string]any{"k": []any{deep}}
	}
	if _, err := appendValue(nil, deep); err != nil {
		t.Fatalf("a value %d levels deep: %v", 2*(spec.MaxValueDepth+5), err)
	}
}

func TestDecodeValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{`null`, nil},
		{`true`, true},
		{`1`, int64(1)},
		{`-0`, int64(0)},
		{`9223372036854775807`, int64(math.MaxInt64)},
		{`18446744073709551616`, float64(1 << 64)}, // beyond int64: a number, read as a float
		{`1.0`, 1.0},
		{`-0.0`, math.Copysign(0, -1)},
		{`1e3`, 1000.0},
		{`1E-2`, 0.01},
		{`1e400`, math.Inf(1)},
		{`"x"`, "x"},
		{`"\u00fc\ud83d\ude00"`, "ü😀"},
		{`{"$int":"-9223372036854775808"}`, int64(math.MinInt64)},
		{`{"$int":"5"}`, int64(5)},
		{`{"$float":"2"}`, 2.0},
		{`{"$float":"-0"}`, math.Copysign(0, -1)},
		{`{"$float":"1e+300"}`, 1e300},
		{`{"$float":"NaN"}`, math.NaN()},
		{`{"$float":"Infinity"}`, math.Inf(1)},
		{`{"$float":"-Infinity"}`, math.Inf(-1)},
		{`{"$bytes":""}`, []byte{}},
		{`{"$bytes":"AAH/"}`, []byte{0, 1, 255}},
		{`[]`, []any{}},
		{`[{"$bytes":"AA=="},[],{}]`, []any{[]byte{0}, []any{}, map[string]any{}}},
		{`{}`, map[string]any{}},
		{`{"$map":{"$where":1}}`, map[string]any{"$where": int64(1)}},
		{`{"$map":{"$map":{}}}`, map[string]any{"$map": map[string]any{}}},
		{`{"$map":{"a":{"$float":"3"}}}`, map[string]any{"a": 3.0}},
		{`{"$int":"1","b":2}`, map[string]any{"$int": "1", "b": int64(2)}}, // two keys: a map, not a tag
		{`{"a":{"$map":{}}}`, map[string]any{"a": map[string]any{}}},
	} {
		got, err := decodeValue([]byte(tc.in))
		if err != nil {
			t.Errorf("decode %s: %v", tc.in, err)
			continue
		}
		if !same(got, tc.want) {
			t.Errorf("decode %s = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestDecodeValueRejects(t *testing.T) {
	for in, want := range map[string]error{
		`{"$int":"9223372036854775808"}`: ErrBadRequest,
		`{"$int":"1.5"}`:                 ErrBadRequest,
		`{"$int":5}`:                     ErrBadRequest,
		`{"$float":"two"}`:               ErrBadRequest,
		`{"$float":2}`:                   ErrBadRequest,
		`{"$bytes":"AAH"}`:               ErrBadRequest, // unpadded
		`{"$bytes":"*"}`:                 ErrBadRequest,
		`{"$bytes":null}`:                ErrBadRequest,
		`{"$map":[]}`:                    ErrBadRequest,
		`{"$map":"x"}`:                   ErrBadRequest,
		`{"$foo":1}`:                     ErrBadRequest,
		`{"$foo":"x"}`:                   ErrBadRequest,
		`[{"$set":{}}]`:                  ErrBadRequest,
		`{"a":{"$":0}}`:                  ErrBadRequest,
		`1 2`:                            ErrBadRequest,
		`{`:                              ErrBadRequest,
		``:                               ErrBadRequest,
	} {
		if _, err := decodeValue([]byte(in)); !errors.Is(err, want) {
			t.Errorf("decode %s: got %v, want %v", in, err, want)
		}
	}
}

// TestDecodeObject checks that a shape object (channel values, metadata) is
// never read as a tag itself, while the values in it are.
func TestDecodeObject(t *testing.T) {
	decodeObject := func(s string) (map[string]any, error) {
		tree, err := decodeJSON([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return valuesOf(tree, "object")
	}
	got, err := decodeObject(`{"$where":{"$bytes":"AA=="}}`)
	if err != nil || !same(got, map[string]any{"$where": []byte{0}}) {
		t.Errorf("got %#v, %v", got, err)
	}
	if got, err := decodeObject(`null`); err != nil || got != nil {
		t.Errorf("null: got %#v, %v; want a nil map", got, err)
	}
	if _, err := decodeObject(`[]`); !errors.Is(err, ErrBadRequest) {
		t.Errorf("array: got %v, want ErrBadRequest", err)
	}
	b, err := appendObject(nil, map[string]any{"$where": "x"})
	if err != nil || string(b) != `{"$where":"x"}` {
		t.Errorf("appendObject = %s, %v; want the shape unwrapped", b, err)
	}
}

func TestRoundTripModelValues(t *testing.T) {
	deep := any("leaf")
	for i := range 40 {
		if i%2 == 0 {
			deep = []any{deep, int64(i)}
		} else {
			deep = map[string]any{"$k": deep}
		}
	}
	for name, v := range map[string]any{
		"ints":    []any{int64(0), int64(1<<53 - 1), int64(1 << 53), int64(math.MinInt64), int64(math.MaxInt64), int64(-1)},
		"floats":  []any{0.0, math.Copysign(0, -1), 2.0, 0.1, -1.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1), 1e21, 123456789.5},
		"strings": []any{"", "ü日本 \x00 nul |:%_'\"\\ \u2028", strings.Repeat("0123456789abcdef", 1<<12)},
		"bytes":   []any{[]byte{}, []byte{0, 1, 255}, make([]byte, 1<<16)},
		"nested":  []any{map[string]any{"a": []any{int64(1), "x", nil, []byte{1}, 1.5, false}, "": map[string]any{}}, []any{}},
		"dollars": map[string]any{"$a": map[string]any{"$b": map[string]any{"$int": "1"}, "c": nil}},
		"deep":    deep,
	} {
		got, err := decodeValue([]byte(encode(t, v)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if !same(got, v) {
			t.Errorf("%s: round trip gave %#v", name, got)
		}
	}
}

// FuzzValueRoundTrip builds a value of the model from the fuzzer's bytes
// and checks that it survives encoding and decoding, types and bits
// included.
func FuzzValueRoundTrip(f *testing.F) {
	for _, seed := range []string{"", "\x00", "\x02\xff\xff\xff\xff\xff\xff\xff\xff", "\x08\x03\x04\x00\x01\x05", "\x09\x02$a\x01\x0a\x01"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		v := g.value(0)
		enc, err := appendValue(nil, v)
		if err != nil {
			t.Fatalf("encode %#v: %v", v, err)
		}
		if !utf8.Valid(enc) || strings.ContainsAny(string(enc), "\n\r") {
			t.Fatalf("encoding is not one line of UTF-8: %q", enc)
		}
		got, err := decodeValue(enc)
		if err != nil {
			t.Fatalf("decode %s: %v", enc, err)
		}
		if !same(got, v) {
			t.Fatalf("round trip of %#v through %s gave %#v", v, enc, got)
		}
	})
}

// FuzzDecodeValue decodes arbitrary text: it must never panic, and what it
// accepts must survive a second round trip unchanged.
func FuzzDecodeValue(f *testing.F) {
	for _, seed := range []string{`null`, `{"$int":"12"}`, `{"$map":{"$x":[1,2.5,{"$bytes":"AA=="}]}}`, `[{"$float":"-0"}]`, `{"$q":1}`, `1e999`, `"\ud800"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeValue(data)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) && !errors.Is(err, spec.ErrUnsupportedValue) {
				t.Fatalf("decode %q: error %v is neither bad_request nor unsupported_value", data, err)
			}
			return
		}
		enc, err := appendValue(nil, v)
		if err != nil {
			t.Fatalf("re-encode %#v: %v", v, err)
		}
		again, err := decodeValue(enc)
		if err != nil || !same(again, v) {
			t.Fatalf("%q decoded to %#v, re-encoded as %s, decoded again to %#v (%v)", data, v, enc, again, err)
		}
	})
}

// gen builds values of the plain-value model from fuzz input.
type gen struct {
	data []byte
}

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) uint64() uint64 {
	var b [8]byte
	n := copy(b[:], g.data)
	g.data = g.data[n:]
	return binary.LittleEndian.Uint64(b[:])
}

func (g *gen) string() string {
	n := int(g.byte() % 16)
	n = min(n, len(g.data))
	s := string(g.data[:n])
	g.data = g.data[n:]
	return strings.ToValidUTF8(s, "\ufffd")
}

func (g *gen) value(depth int) any {
	if len(g.data) == 0 {
		return nil
	}
	switch k := g.byte() % 12; {
	case k == 0:
		return nil
	case k == 1:
		return g.byte()%2 == 0
	case k == 2:
		return int64(g.uint64())
	case k == 3:
		return int64(int8(g.byte()))
	case k == 4:
		return math.Float64frombits(g.uint64())
	case k == 5:
		return []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1 << 53, 0.5, 1e300}[g.byte()%8]
	case k == 6:
		return g.string()
	case k == 7:
		return []byte(g.string())
	case k == 8 && depth < 5:
		out := []any{}
		for range g.byte() % 4 {
			out = append(out, g.value(depth+1))
		}
		return out
	case (k == 9 || k == 10) && depth < 5:
		out := map[string]any{}
		for range g.byte()%3 + 1 {
			key := g.string()
			if k == 10 {
				key = "$" + key
			}
			out[key] = g.value(depth + 1)
		}
		return out
	case k == 11:
		return float64(int64(g.uint64()) >> (g.byte() % 64))
	}
	return fmt.Sprint(depth)
}
