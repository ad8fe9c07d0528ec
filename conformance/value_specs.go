package conformance

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// modelValues returns named values covering the plain-value model, each in
// its normalised form.
func modelValues() map[string]any {
	mib := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	bin := make([]byte, 1<<20)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	deep := any("leaf")
	for i := range 24 {
		if i%2 == 0 {
			deep = []any{deep, int64(i)}
		} else {
			deep = map[string]any{"k": deep}
		}
	}
	return map[string]any{
		"nil":         nil,
		"true":        true,
		"false":       false,
		"int-min":     int64(math.MinInt64),
		"int-max":     int64(math.MaxInt64),
		"int-zero":    int64(0),
		"float-zero":  float64(0),
		"float-neg0":  math.Copysign(0, -1),
		"float-sub":   math.SmallestNonzeroFloat64,
		"float-max":   math.MaxFloat64,
		"float-exp":   -1.5e-300,
		"float-tenth": 0.1,
		"float-int":   2.0,
		"str-empty":   "",
		"str-odd":     "ü日本 \x00 nul |:%_'\"\\ \u2028",
		"str-mib":     mib,
		"bytes-empty": []byte{},
		"bytes-small": []byte{0, 1, 255},
		"bytes-mib":   bin,
		"list-empty":  []any{},
		"map-empty":   map[string]any{},
		"nested":      []any{map[string]any{"a": []any{int64(1), "x", nil, []byte{1}, 1.5, false}, "": map[string]any{}}, []any{}},
		"deep":        deep,
	}
}

// typeValues returns one value of each type of the value model, each in
// its normalised form.
func typeValues() map[string]any {
	return map[string]any{
		"nil": nil, "bool": true, "int": int64(7), "float": 2.5, "whole-float": 2.0, "string": "s",
		"bytes": []byte{1, 2}, "list": []any{int64(1), "x"}, "empty-list": []any{}, "map": map[string]any{"k": int64(1)},
		"empty-map": map[string]any{}, "nested": []any{map[string]any{"l": []any{}, "b": []byte{}, "f": 1.0}},
	}
}

// numberValues returns numbers of both Go types, alone and nested.
func numberValues() map[string]any {
	return map[string]any{
		"int": int64(7), "negative": int64(-3), "float": 2.5, "whole-float": 2.0, "zero-float": 0.0,
		"nested": []any{int64(1), 1.0, map[string]any{"i": int64(2), "f": 3.0}},
	}
}

// wholeFloatsAsInts returns v with every whole float64 turned into an
// int64: what a store with one number type gives back.
func wholeFloatsAsInts(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wholeFloatsAsInts(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = wholeFloatsAsInts(e)
		}
		return out
	}
	return v
}

// writeValues maps pending writes by channel.
func writeValues(ws []spec.PendingWrite) map[string]any {
	out := map[string]any{}
	for _, w := range ws {
		out[w.Channel] = w.Value
	}
	return out
}

// expectSameTypes is expectSame, except that numbers compare by value: their
// Go types are VALUE-8's matter.
func expectSameTypes(got, want map[string]any, what string) {
	g.GinkgoHelper()
	if !sameTypes(got, want) {
		g.Fail(fmt.Sprintf("%s differ (-want +got):\n%s", what, diffOf(got, want)))
	}
}

// sameTypes is same, except that an int64 and a float64 of equal value
// are the same.
func sameTypes(got, want any) bool {
	switch w := want.(type) {
	case int64:
		if f, ok := got.(float64); ok {
			return f == float64(w)
		}
	case float64:
		if i, ok := got.(int64); ok {
			return float64(i) == w
		}
	case []any:
		l, ok := got.([]any)
		if !ok || (l == nil) != (w == nil) || len(l) != len(w) {
			return false
		}
		for i := range w {
			if !sameTypes(l[i], w[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		m, ok := got.(map[string]any)
		if !ok || (m == nil) != (w == nil) || len(m) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := m[k]
			if !ok || !sameTypes(gv, wv) {
				return false
			}
		}
		return true
	}
	return same(got, want)
}

// versionsOf gives every channel of vals version "1".
func versionsOf(vals map[string]any) spec.Versions {
	vers := spec.Versions{}
	for k := range vals {
		vers[k] = "1"
	}
	return vers
}

// expectSameValues checks, key by key, that every value survived: it
// leaves the Go types to VALUE-1 (an integer read back as an equal float,
// bytes as a string, an empty list or map as nil pass here) and checks
// everything else exactly, the sign of zero included.
func expectSameValues(got, want map[string]any, what string) {
	g.GinkgoHelper()
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, ok := got[k]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s %s: missing", what, k))
		} else if !sameValue(v, want[k]) {
			bad = append(bad, fmt.Sprintf("%s %s (-want +got):\n%s", what, k, diffOf(v, want[k])))
		}
	}
	if len(got) != len(want) {
		bad = append(bad, fmt.Sprintf("%d %ss, want %d", len(got), what, len(want)))
	}
	if len(bad) > 0 {
		g.Fail(strings.Join(bad, "\n"))
	}
}

// sameValue is same, except for the type changes VALUE-1 and VALUE-8 are
// about.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case int64:
		if f, ok := got.(float64); ok {
			return f == float64(w)
		}
	case float64:
		if i, ok := got.(int64); ok {
			return float64(i) == w && !math.Signbit(w)
		}
	case []byte:
		if s, ok := got.(string); ok {
			return s == string(w)
		}
		if got == nil {
			return len(w) == 0
		}
	case []any:
		if got == nil {
			return len(w) == 0
		}
		l, ok := got.([]any)
		if !ok || len(l) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(l[i], w[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		if got == nil {
			return len(w) == 0
		}
		m, ok := got.(map[string]any)
		if !ok || len(m) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := m[k]
			if !ok || !sameValue(gv, wv) {
				return false
			}
		}
		return true
	}
	return same(got, want)
}

// valueSpecs covers the value model (VALUE-*).
func valueSpecs(e *env) {
	g.Describe("Values", func() {
		check("[VALUE-1] reads channel values back with their types", lPut, func(ctx context.Context) {
			vals := typeValues()
			e.putValues(ctx, "t", "", "", "c1", vals, versionsOf(vals))
			for _, t := range []*spec.Tuple{e.readBack(ctx, "t", "", "c1"), e.listFirst(ctx, spec.ListOptions{ThreadID: "t"})} {
				expectSameTypes(t.Checkpoint.ChannelValues, vals, "channel values")
			}
		})

		check("[VALUE-8] keeps the Go type of numbers: int64 stays int64, float64 stays float64", lPut, func(ctx context.Context) {
			vals := numberValues()
			e.putValues(ctx, "t", "", "", "c1", vals, versionsOf(vals))
			cfg := e.put(ctx, "t", "", "", "c2", nil)
			for _, k := range slices.Sorted(maps.Keys(vals)) {
				e.writes(ctx, cfg, "task-"+k, spec.Write{Channel: k, Value: vals[k]})
			}
			got := []any{e.readBack(ctx, "t", "", "c1").Checkpoint.ChannelValues, writeValues(e.readBack(ctx, "t", "", "c2").PendingWrites)}
			want := []any{vals, vals}
			if !same(got, want) && same(got, []any{wholeFloatsAsInts(vals), wholeFloatsAsInts(vals)}) {
				differ("whole floats come back as integers (LangGraph.js's JSON serde has one number type)")
			}
			expectSame(got, want, "channel values, then write values by channel")
		})

		check("[VALUE-1] reads pending-write values back with their types", lWrites, func(ctx context.Context) {
			vals := typeValues()
			cfg := e.put(ctx, "t", "", "", "c1", nil)
			for _, k := range slices.Sorted(maps.Keys(vals)) {
				e.writes(ctx, cfg, "task-"+k, spec.Write{Channel: k, Value: vals[k]})
			}
			expectSameTypes(writeValues(e.readBack(ctx, "t", "", "c1").PendingWrites), vals, "write values by channel")
		})

		check("[VALUE-2] round-trips the whole value model as channel values", lPut, func(ctx context.Context) {
			vals := modelValues()
			e.putValues(ctx, "t", "", "", "c1", vals, versionsOf(vals))
			for _, t := range []*spec.Tuple{e.readBack(ctx, "t", "", "c1"), e.listFirst(ctx, spec.ListOptions{ThreadID: "t"})} {
				expectSameValues(t.Checkpoint.ChannelValues, vals, "channel")
			}
		})

		check("[VALUE-2] round-trips the whole value model as pending writes", lWrites, func(ctx context.Context) {
			vals := modelValues()
			cfg := e.put(ctx, "t", "", "", "c1", nil)
			for _, k := range slices.Sorted(maps.Keys(vals)) {
				e.writes(ctx, cfg, "task-"+k, spec.Write{Channel: k, Value: vals[k]})
			}
			got := map[string]any{}
			for _, w := range e.readBack(ctx, "t", "", "c1").PendingWrites {
				got[w.Channel] = w.Value
			}
			expectSameValues(got, vals, "write")
		})

		check("[VALUE-3] stores convertible Go values in their normalised form", lPut, func(ctx context.Context) {
			type myString string
			in := map[string]any{
				"int":      7,
				"int8":     int8(-5),
				"uint32":   uint32(42),
				"uint64":   uint64(math.MaxInt64),
				"float32":  float32(1.5),
				"named":    myString("x"),
				"strs":     []string{"a", "b"},
				"ints":     [2]int{1, 2},
				"typedmap": map[string]int{"a": 1},
				"uint8s":   []uint8{1, 2},
				"nil-list": []any(nil),
				"nil-ints": []int(nil),
				"nil-map":  map[string]any(nil),
				"nil-tmap": map[string]string(nil),
			}
			want := map[string]any{
				"int": int64(7), "int8": int64(-5), "uint32": int64(42), "uint64": int64(math.MaxInt64),
				"float32": 1.5, "named": "x", "strs": []any{"a", "b"}, "ints": []any{int64(1), int64(2)},
				"typedmap": map[string]any{"a": int64(1)}, "uint8s": []byte{1, 2},
				"nil-list": []any{}, "nil-ints": []any{}, "nil-map": map[string]any{}, "nil-tmap": map[string]any{},
			}
			vers := spec.Versions{}
			for k := range in {
				vers[k] = "1"
			}
			e.putValues(ctx, "t", "", "", "c1", in, vers)
			e.writes(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, "task", spec.Write{Channel: "w", Value: []int(nil)}, spec.Write{Channel: "m", Value: map[string]int8{"a": 1}})
			// Numbers compare by value: their Go types are VALUE-8's matter.
			t := e.readBack(ctx, "t", "", "c1")
			expectSameTypes(t.Checkpoint.ChannelValues, want, "channel values")
			expectSameTypes(writeValues(t.PendingWrites), map[string]any{"w": []any{}, "m": map[string]any{"a": int64(1)}}, "write values (a nil []int, a map[string]int8)")
		})

		check("[VALUE-4] rejects values outside the model with ErrUnsupportedValue and stores nothing", lPut, func(ctx context.Context) {
			x := 1
			bad := map[string]any{
				"struct": struct{ A int }{1}, "pointer": &x, "chan": make(chan int), "func": func() {},
				"intkeys": map[int]any{1: 1}, "uint-overflow": uint64(math.MaxUint64),
				"nested": []any{map[string]any{"k": struct{}{}}},
			}
			cfg := e.put(ctx, "t", "", "", "c0", nil)
			for name, v := range inOrder(bad) {
				cp := cpOf("c-"+name, map[string]any{"ok": "fine", "bad": v}, spec.Versions{"ok": "1", "bad": "1"})
				_, err := e.s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, spec.Versions{"ok": "1", "bad": "1"})
				Expect(err).To(MatchError(spec.ErrUnsupportedValue), "Put with %s", name)
				e.expectMissing(ctx, "t", "", "c-"+name)
				err = e.s.PutWrites(ctx, cfg, []spec.Write{{Channel: "ok", Value: 1}, {Channel: "bad", Value: v}}, "task-"+name, taskPath)
				Expect(err).To(MatchError(spec.ErrUnsupportedValue), "PutWrites with %s", name)
			}
			Expect(e.get(ctx, "t", "", "c0").PendingWrites).To(BeEmpty(), "a rejected PutWrites must store none of its writes")
			Expect(idsOf(e.list(ctx, spec.ListOptions{ThreadID: "t"}))).To(Equal([]string{"c0"}))
		})

		check("[VALUE-5] rejects metadata outside the JSON subset with ErrUnsupportedValue and stores nothing", lPut, func(ctx context.Context) {
			bad := map[string]spec.Metadata{
				"bytes": {"b": []byte("x")}, "nan": {"f": math.NaN()}, "inf": {"f": math.Inf(1)},
				"neg-inf": {"l": []any{math.Inf(-1)}}, "utf8": {"s": "\xff"}, "utf8-key": {"\xfe": 1},
				"nested-bytes": {"m": map[string]any{"b": []byte{}}}, "struct": {"s": struct{}{}},
			}
			for name, m := range bad {
				_, err := e.s.Put(ctx, spec.Config{ThreadID: "t"}, cpOf("c-"+name, nil, nil), m, nil)
				Expect(err).To(MatchError(spec.ErrUnsupportedValue), "metadata %s", name)
				e.expectMissing(ctx, "t", "", "c-"+name)
			}
			Expect(e.list(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true})).To(BeEmpty())
		})

		check("[VALUE-6] round-trips metadata with its types and arbitrary keys", lPut, func(ctx context.Context) {
			in := spec.Metadata{
				"source": "loop", "step": -1, "big": int64(math.MaxInt64), "f": 1.5, "whole": 2.0, "b": true, "n": nil,
				"list": []any{int64(1), "two", []any{}}, "map": map[string]any{"x": map[string]any{}}, "empty-list": []any{},
				"a.b": "dotted", "$where": "dollar", "it's \"q\"": "quotes", "ü日本": "unicode", "parents": map[string]any{},
			}
			want := map[string]any{
				"source": "loop", "step": int64(-1), "big": int64(math.MaxInt64), "f": 1.5, "whole": 2.0, "b": true, "n": nil,
				"list": []any{int64(1), "two", []any{}}, "map": map[string]any{"x": map[string]any{}}, "empty-list": []any{},
				"a.b": "dotted", "$where": "dollar", "it's \"q\"": "quotes", "ü日本": "unicode", "parents": map[string]any{},
			}
			e.put(ctx, "t", "", "", "c1", in)
			expectSame(map[string]any(e.readBack(ctx, "t", "", "c1").Metadata), want, "metadata")
			expectSame(map[string]any(e.listFirst(ctx, spec.ListOptions{ThreadID: "t"}).Metadata), want, "listed metadata")
		})

		check("[VALUE-11] reads top-level integer metadata back as int64, step included", lPut, func(ctx context.Context) {
			want := map[string]any{"step": int64(3), "neg": int64(-1), "zero": int64(0), "big": int64(1) << 53}
			in := spec.Metadata{"source": "loop"}
			for k, v := range want {
				in[k] = v
			}
			e.put(ctx, "t", "", "", "c1", in)
			md := e.readBack(ctx, "t", "", "c1").Metadata // GetTuple and List, which must agree
			for _, k := range slices.Sorted(maps.Keys(want)) {
				Expect(md[k]).To(equalTyped(want[k]), "metadata %q", k)
			}
		})

		check("[VALUE-7] removes NULs from top-level string metadata values only", lPut, func(ctx context.Context) {
			in := spec.Metadata{"s": "\x00a\x00b\x00", "nested": map[string]any{"s": "a\x00b"}, "list": []any{"\x00"}, "k\x00ey": "v"}
			want := map[string]any{"s": "ab", "nested": map[string]any{"s": "a\x00b"}, "list": []any{"\x00"}, "k\x00ey": "v"}
			e.put(ctx, "t", "", "", "c1", in)
			got := map[string]any(e.readBack(ctx, "t", "", "c1").Metadata)
			if same(got, map[string]any(in)) {
				differ("NUL characters are kept in metadata (LangGraph.js's savers)")
			}
			if !same(got, want) {
				g.Fail(fmt.Sprintf("metadata: got %q, want %q", got, want))
			}
		})
	})
}

// readBack reads a checkpoint back through both GetTuple and List (by its
// checkpoint ID) and fails the spec unless they return the same tuple,
// types included: a round trip must not depend on the method that reads
// it. It returns GetTuple's tuple.
func (e *env) readBack(ctx context.Context, thread, ns, id string) *spec.Tuple {
	g.GinkgoHelper()
	got := e.get(ctx, thread, ns, id)
	listed := e.list(ctx, spec.ListOptions{ThreadID: thread, Namespace: ns, CheckpointID: id})
	Expect(listed).To(HaveLen(1), "List of checkpoint %s", keyOf(thread, ns, id))
	// Nil and empty, and the order of different tasks' writes, are
	// other rules' matter (GET-6, PUT-13, WRITES-9).
	a, b := settled([]*spec.Tuple{got})[0], settled(listed)[0]
	if d := diffOf(b, a); d != "" {
		g.Fail(fmt.Sprintf("List and GetTuple read %s back differently (-GetTuple +List):\n%s", keyOf(thread, ns, id), d))
	}
	return got
}
