package spec_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

type selfMap map[string]any
type selfList []any

// nestLists returns a value of exactly depth nested lists around a leaf.
func nestLists(depth int) any {
	var v any = "leaf"
	for range depth {
		v = []any{v}
	}
	return v
}

// nestMixed alternates maps and typed containers, so every Normalize path
// (fast switch and reflection) counts depth.
func nestMixed(depth int) any {
	var v any = int64(1)
	for i := range depth {
		switch i % 4 {
		case 0:
			v = []any{v}
		case 1:
			v = map[string]any{"k": v}
		case 2:
			v = selfList{v}
		default:
			v = selfMap{"k": v}
		}
	}
	return v
}

func TestNormalizeRejectsSelfContaining(t *testing.T) {
	m := map[string]any{"a": int64(1)}
	m["self"] = m
	fan := map[string]any{}
	fan["a"], fan["b"], fan["c"] = fan, fan, fan // 3^depth paths if not detected
	l := make([]any, 2)
	l[0], l[1] = "x", nil
	l[1] = l
	deep := map[string]any{}
	deep["l"] = []any{map[string]any{"back": deep}}
	typed := selfMap{}
	typed["me"] = typed
	tl := make(selfList, 1)
	tl[0] = tl
	md := spec.Metadata{}
	md["md"] = md
	tests := []struct {
		name string
		v    any
		path string
	}{
		{"map holding itself", m, `$["self"]`},
		{"map holding itself three times", fan, `$[`},
		{"list holding itself", l, `$[1]`},
		{"map through a list", deep, `$["l"][0]["back"]`},
		{"typed map", typed, `$["me"]`},
		{"typed list", tl, `$[0]`},
		{"metadata", md, `$["md"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := spec.Normalize(tt.v)
			if !errors.Is(err, spec.ErrUnsupportedValue) || !strings.Contains(err.Error(), "contains itself") {
				t.Fatalf("Normalize error = %v, want ErrUnsupportedValue for a value that contains itself", err)
			}
			if !strings.Contains(err.Error(), "value at "+tt.path) {
				t.Errorf("error %q does not name path %s", err, tt.path)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("rejection took %v", d)
			}
		})
	}
	if _, err := spec.NormalizeMetadata(md); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Errorf("NormalizeMetadata of self-containing metadata: %v", err)
	}
	if _, err := spec.DefaultSerde().Encode(fan); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Errorf("serde Encode of self-containing value: %v", err)
	}
}

// TestNormalizeSharedIsNotACycle: the same list or map reached twice, but
// not inside itself, is an ordinary value, and so are empty containers
// that share storage.
func TestNormalizeSharedIsNotACycle(t *testing.T) {
	shared := []any{int64(1)}
	sm := map[string]any{"k": "v"}
	backing := []any{"a", "b", "c"}
	v := map[string]any{
		"twice":  []any{shared, shared, map[string]any{"again": shared}},
		"maps":   []any{sm, map[string]any{"x": sm}},
		"empty":  []any{[]any{}, []any{}, []any{[]any{}}},
		"prefix": []any{backing[:1], backing[:2]}, // same start, different length
	}
	got, err := spec.Normalize(v)
	if err != nil {
		t.Fatalf("Normalize: %v", err)
	}
	if !spec.Equal(got, mustNormalize(t, v)) {
		t.Fatal("not deterministic")
	}
	// Sub-slices of one array nested in one another, none inside itself.
	arr := make([]any, 3)
	arr[0] = "x"
	arr[1] = arr[:1]
	arr[2] = arr[:2]
	if _, err := spec.Normalize(arr); err != nil {
		t.Fatalf("Normalize(sub-slices): %v", err)
	}
}

func mustNormalize(t *testing.T, v any) any {
	t.Helper()
	nv, err := spec.Normalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return nv
}

func TestNormalizeDepthLimit(t *testing.T) {
	for _, build := range []struct {
		name string
		f    func(int) any
	}{{"lists", nestLists}, {"mixed", nestMixed}} {
		t.Run(build.name, func(t *testing.T) {
			if _, err := spec.Normalize(build.f(spec.MaxValueDepth)); err != nil {
				t.Fatalf("depth %d rejected: %v", spec.MaxValueDepth, err)
			}
			_, err := spec.Normalize(build.f(spec.MaxValueDepth + 1))
			if !errors.Is(err, spec.ErrUnsupportedValue) || !strings.Contains(err.Error(), "nested deeper than 100") {
				t.Fatalf("depth %d: error = %v, want ErrUnsupportedValue", spec.MaxValueDepth+1, err)
			}
			if _, err := spec.Normalize(build.f(100_000)); !errors.Is(err, spec.ErrUnsupportedValue) {
				t.Fatalf("depth 100000: error = %v", err)
			}
		})
	}
	// Arrays count too.
	var arr any = "leaf"
	for range spec.MaxValueDepth + 1 {
		arr = [1]any{arr}
	}
	if _, err := spec.Normalize(arr); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("nested arrays: error = %v", err)
	}
	// Metadata is a map itself: its values may nest one level less.
	if _, err := spec.NormalizeMetadata(spec.Metadata{"v": nestLists(spec.MaxValueDepth - 1)}); err != nil {
		t.Fatalf("metadata at the limit: %v", err)
	}
	if _, err := spec.NormalizeMetadata(spec.Metadata{"v": nestLists(spec.MaxValueDepth)}); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("metadata over the limit: error = %v", err)
	}
	if _, err := spec.NormalizeFilter(spec.Metadata{"v": nestLists(spec.MaxValueDepth)}); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("filter over the limit: error = %v", err)
	}
	// What Normalize accepts, the default serde round-trips.
	v := nestMixed(spec.MaxValueDepth)
	if got := roundTrip(t, v); !spec.Equal(got, mustNormalize(t, v)) {
		t.Fatal("deepest value does not round-trip")
	}
}

// FuzzNormalizeShape builds a value whose shape (nesting, sharing and
// self-reference) is driven by the fuzz input: Normalize must never crash
// and must reject exactly the values that contain themselves or nest too
// deeply.
func FuzzNormalizeShape(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{5, 5, 5, 5, 5, 5})
	f.Add([]byte{2, 0, 2, 0, 4, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 400 {
			ops = ops[:400]
		}
		// Containers are built bottom-up; op 4 and 5 make the newest
		// container hold itself or an ancestor-to-be (a cycle).
		type node struct {
			v     any
			depth int
			cycle bool
		}
		cur := node{v: "leaf"}
		for _, op := range ops {
			switch op % 6 {
			case 0:
				cur = node{v: []any{cur.v, int64(op)}, depth: cur.depth + 1, cycle: cur.cycle}
			case 1:
				cur = node{v: map[string]any{"k": cur.v}, depth: cur.depth + 1, cycle: cur.cycle}
			case 2:
				cur = node{v: selfList{cur.v, "x"}, depth: cur.depth + 1, cycle: cur.cycle}
			case 3:
				cur = node{v: selfMap{"a": cur.v, "b": int64(0)}, depth: cur.depth + 1, cycle: cur.cycle}
			case 4:
				m := map[string]any{"x": cur.v}
				m["self"] = m
				cur = node{v: m, depth: cur.depth + 1, cycle: true}
			case 5:
				l := []any{cur.v, nil}
				l[1] = l
				cur = node{v: l, depth: cur.depth + 1, cycle: true}
			}
		}
		_, err := spec.Normalize(cur.v)
		wantErr := cur.cycle || cur.depth > spec.MaxValueDepth
		if wantErr != (err != nil) {
			t.Fatalf("depth %d, cycle %v: error = %v", cur.depth, cur.cycle, err)
		}
		if err != nil && !errors.Is(err, spec.ErrUnsupportedValue) {
			t.Fatalf("error %v does not wrap ErrUnsupportedValue", err)
		}
	})
}

// benchValue is a checkpoint-sized value: a few hundred leaves over maps
// and lists five levels deep.
func benchValue() any {
	rows := make([]any, 50)
	for i := range rows {
		rows[i] = map[string]any{
			"id": int64(i), "name": "row", "score": 0.5, "ok": true,
			"tags": []any{"a", "b", map[string]any{"deep": []any{int64(1), []byte("x")}}},
		}
	}
	return map[string]any{"messages": rows, "meta": map[string]any{"n": int64(50)}}
}

func BenchmarkNormalize(b *testing.B) {
	v := benchValue()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := spec.Normalize(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalizeDeep(b *testing.B) {
	v := nestLists(spec.MaxValueDepth)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := spec.Normalize(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalizeSelfContaining(b *testing.B) {
	fan := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d"} {
		fan[k] = fan
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := spec.Normalize(fan); err == nil {
			b.Fatal("accepted")
		}
	}
}
