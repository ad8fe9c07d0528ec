package mongo_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// storedMetadata is what TestFilterMatchesSpec stores, one checkpoint each.
var storedMetadata = []spec.Metadata{
	{"source": "input", "step": int64(-1)},
	{"source": "loop", "step": int64(1), "score": 1.0},
	{"source": "loop", "step": 1.0, "flag": true},
	{"source": "loop", "step": int64(2), "flag": int64(1), "tags": []any{"a", "b"}},
	{"tags": []any{"a"}, "nested": map[string]any{"x": int64(1), "y": []any{int64(1), "z"}}},
	{"nested": map[string]any{"y": []any{1.0, "z"}, "x": 1.0}, "n": nil},
	{"nested": map[string]any{"x": int64(1)}, "list": []any{[]any{"a"}, "x"}},
	{"$ne": int64(1), "a.b": "dotted", "a": map[string]any{"b": "nested"}},
	{"$where": "1", "op": map[string]any{"$ne": int64(1)}, "": "empty key"},
	{"op": map[string]any{"$gt": ""}, "%24ne": int64(1), "my_key": "abc"},
	{"big": int64(1) << 53, "bigf": float64(1 << 53), "odd": int64(1)<<53 + 1, "neg0": 0.0},
	{"run_id": "r1", "ü": "ünïcode", "Key": "upper"},
}

// filters are run against storedMetadata; the expected result of each is
// computed with spec.MatchFilter, the contract's definition.
var filters = []spec.Metadata{
	{},
	{"source": "loop"},
	{"step": int64(1)},
	{"step": 1.0},
	{"step": int64(1), "source": "loop"},
	{"step": int64(1), "source": "input"},
	{"flag": true},
	{"flag": int64(1)},
	{"flag": 1.0},
	{"tags": "a"},
	{"tags": []any{"a"}},
	{"tags": []any{"b", "a"}},
	{"tags": []any{"a", "b"}},
	{"nested": map[string]any{"x": int64(1), "y": []any{int64(1), "z"}}},
	{"nested": map[string]any{"y": []any{int64(1), "z"}, "x": 1.0}},
	{"nested": map[string]any{"x": int64(1)}},
	{"nested": map[string]any{}},
	{"list": []any{"a"}},
	{"list": "x"},
	{"n": nil},
	{"missing": nil},
	{"score": int64(1)},
	{"$ne": int64(1)},
	{"$ne": map[string]any{"$ne": int64(1)}},
	{"op": map[string]any{"$ne": int64(1)}},
	{"op": map[string]any{"$ne": int64(2)}},
	{"op": map[string]any{"$gt": ""}},
	{"op": map[string]any{"$exists": true}},
	{"$where": "1"},
	{"$where": "true"},
	{"a.b": "dotted"},
	{"a.b": "nested"},
	{"a": map[string]any{"b": "nested"}},
	{"": "empty key"},
	{"%24ne": int64(1)},
	{"$or": []any{map[string]any{"source": "loop"}}},
	{"source": map[string]any{"$regex": ".*"}},
	{"source": map[string]any{"$in": []any{"loop", "input"}}},
	{"my_key": "abc"},
	{"my_key": "\x00abc"},
	{"big": float64(1 << 53)},
	{"bigf": int64(1) << 53},
	{"odd": float64(1<<53 + 1)}, // rounds to 2^53: must not match 2^53+1
	{"neg0": math.Copysign(0, -1)},
	{"neg0": int64(0)},
	{"ü": "ünïcode"},
	{"key": "upper"},
	{"run_id": "r1"},
}

// TestFilterMatchesSpec checks List filters against the contract's
// MatchFilter for every stored metadata and filter above: typed equality,
// literal '$' and dotted keys, operator-looking values that must be data,
// nested maps in any key order, lists in order, and null versus missing.
func TestFilterMatchesSpec(t *testing.T) {
	s := saverT(t)
	for i, md := range storedMetadata {
		put(t, s, "t", "", "", fmt.Sprintf("%03d", i), nil, md)
	}
	for _, f := range filters {
		var want []string
		for i := len(storedMetadata) - 1; i >= 0; i-- {
			md, err := spec.NormalizeMetadata(storedMetadata[i])
			if err != nil {
				t.Fatal(err)
			}
			if spec.MatchFilter(md, mongo.NormalizeFilterForTest(f)) {
				want = append(want, fmt.Sprintf("t//%03d", i))
			}
		}
		got := listIDs(t, s, spec.ListOptions{ThreadID: "t", Filter: f})
		if !slices.Equal(got, want) {
			t.Errorf("filter %#v: got %q, want %q", f, got, want)
		}
		// Limit counts matches, not candidates.
		if len(want) > 1 {
			got := listIDs(t, s, spec.ListOptions{ThreadID: "t", Filter: f, Limit: 1})
			if !slices.Equal(got, want[:1]) {
				t.Errorf("filter %#v limit 1: got %q, want %q", f, got, want[:1])
			}
		}
	}
}

// TestOperatorInjection stores documents that an unescaped query would
// match and checks that operator-shaped filter keys and values match only
// literally equal metadata.
func TestOperatorInjection(t *testing.T) {
	s := saverT(t)
	put(t, s, "t", "", "", "1", nil, spec.Metadata{"source": "loop", "step": int64(1)})
	put(t, s, "t", "", "", "2", nil, spec.Metadata{"source": map[string]any{"$ne": int64(1)}})
	for _, f := range []spec.Metadata{
		{"source": map[string]any{"$ne": int64(1)}},
		{"source": map[string]any{"$exists": true}},
		{"source": map[string]any{"$gt": ""}},
		{"$where": "function() { return true }"},
		{"$expr": map[string]any{"$eq": []any{int64(1), int64(1)}}},
		{"step": map[string]any{"$gte": int64(0)}},
		{"source.$ne": int64(1)},
	} {
		got := listIDs(t, s, spec.ListOptions{ThreadID: "t", Filter: f})
		var want []string
		if spec.Equal(f["source"], map[string]any{"$ne": int64(1)}) && len(f) == 1 {
			want = []string{"t//2"} // the literally equal stored value
		}
		if !slices.Equal(got, want) {
			t.Errorf("filter %#v: got %q, want %q", f, got, want)
		}
	}
	// Keys with '$' and '.' survive storage literally.
	md := spec.Metadata{"$set": map[string]any{"a.b": "c"}, "x.y": "z", "%": "%24"}
	put(t, s, "u", "", "", "1", nil, md)
	tup, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Equal(map[string]any(tup.Metadata), map[string]any(md)) {
		t.Errorf("metadata %#v, want %#v", tup.Metadata, md)
	}
	if got := listIDs(t, s, spec.ListOptions{ThreadID: "u", Filter: spec.Metadata{"$set": map[string]any{"a.b": "c"}}}); len(got) != 1 {
		t.Errorf("literal $-key filter: %q", got)
	}
}

// TestCanonicalEncoding checks the encoding behind filter tokens agrees
// with spec.Equal on pairs of values.
func TestCanonicalEncoding(t *testing.T) {
	vals := []any{
		nil, true, false, int64(0), 0.0, math.Copysign(0, -1), int64(1), 1.0, 1.5, "1", "", []any{}, map[string]any{},
		[]any{int64(1)}, []any{1.0}, []any{nil}, map[string]any{"a": int64(1)}, map[string]any{"a": 1.0},
		map[string]any{"a": int64(1), "b": "x"}, map[string]any{"b": "x", "a": 1.0}, int64(math.MaxInt64),
		float64(math.MaxInt64), int64(math.MinInt64), float64(math.MinInt64), int64(1) << 53, float64(1 << 53),
		int64(1)<<53 + 1, 1e300, -1e300, []any{"a", "b"}, []any{"b", "a"}, "a\x00", "a",
	}
	for _, a := range vals {
		for _, b := range vals {
			eq := bytes.Equal(mongo.Canonical(a), mongo.Canonical(b))
			if eq != spec.Equal(a, b) {
				t.Errorf("%#v vs %#v: canonical equal %v, spec.Equal %v", a, b, eq, spec.Equal(a, b))
			}
		}
	}
}
