package postgres

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/spec"
)

// filterCorpus is the metadata of the checkpoints the filter tests list.
var filterCorpus = []spec.Metadata{
	{"v": true},
	{"v": int64(1)},
	{"v": 1.0},
	{"v": 1.5},
	{"v": "1"},
	{"v": "true"},
	{"v": nil},
	{"other": nil},
	{},
	{"v": []any{int64(1), "a"}},
	{"v": []any{"a", int64(1)}},
	{"v": []any{}},
	{"v": map[string]any{"a": int64(1), "b": map[string]any{"c": "d"}}},
	{"v": map[string]any{"b": map[string]any{"c": "d"}, "a": 1.0}},
	{"v": map[string]any{"a": int64(1)}},
	{"v": map[string]any{}},
	{"a.b": "dot", "a": map[string]any{"b": "dot"}},
	{`it's "quoted"`: "q", "$1": "dollar", "?": "question", "": "empty key"},
	{"v": int64(1) << 60},
	{"v": float64(1<<60 + 256)},
	{"v": int64(1<<60 + 256)},
	{"v": int64(1<<60 + 200)},
	{"v": math.Copysign(0, -1)},
	{"v": int64(0)},
	{"v": "a\x00b"}, // top level: stored as "ab"
	{"v": []any{"a\x00b"}},
	{"v": []any{"a\x010b"}}, // would collide with an escaped NUL if escaping were not injective
	{"k\x00": "nul key"},
	{"v": "ünïcödé ✓"},
	{"run_id": "r1", "step": int64(3), "source": "loop"},
}

// filterProbes are the filters checked against the corpus; each result must
// equal what spec.MatchFilter says.
var filterProbes = []spec.Metadata{
	{},
	{"v": true},
	{"v": int64(1)},
	{"v": 1.0},
	{"v": 1.5},
	{"v": "1"},
	{"v": "true"},
	{"v": nil},
	{"other": nil},
	{"missing": nil},
	{"v": []any{int64(1), "a"}},
	{"v": []any{1.0, "a"}},
	{"v": []any{}},
	{"v": map[string]any{"a": 1.0, "b": map[string]any{"c": "d"}}},
	{"v": map[string]any{"a": int64(1)}},
	{"v": map[string]any{}},
	{"a.b": "dot"},
	{"a": map[string]any{"b": "dot"}},
	{`it's "quoted"`: "q"},
	{"$1": "dollar"},
	{"?": "question"},
	{"": "empty key"},
	{"v": int64(1) << 60},
	{"v": float64(1 << 60)},
	{"v": float64(1<<60 + 256)},
	{"v": int64(1<<60 + 256)},
	{"v": int64(1<<60 + 200)},
	{"v": 0.0},
	{"v": int64(0)},
	{"v": "a\x00b"},
	{"v": "ab"},
	{"v": []any{"a\x00b"}},
	{"v": []any{"a\x010b"}},
	{"v": []any{"a\x01" + "0b"}},
	{"k\x00": "nul key"},
	{"k": "nul key"},
	{"v": "ünïcödé ✓"},
	{"run_id": "r1", "step": int64(3)},
	{"run_id": "r1", "step": 3.0, "source": "loop"},
	{"run_id": "r1", "step": int64(4)},
	{"v": "x' OR '1'='1"},
	{"v') OR true --": int64(1)},
}

func TestFilterSemanticsMatchSpec(t *testing.T) {
	s := newTestSaver(t)
	stored := make([]spec.Metadata, len(filterCorpus))
	for i, md := range filterCorpus {
		mustPut(t, s, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: fmt.Sprintf("%03d", i)}, md, nil)
		n, err := spec.NormalizeMetadata(md)
		if err != nil {
			t.Fatal(err)
		}
		stored[i] = n
	}
	matches := 0
	for _, f := range filterProbes {
		nf, err := spec.NormalizeFilter(f)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := len(stored) - 1; i >= 0; i-- {
			if spec.MatchFilter(stored[i], nf) {
				want = append(want, fmt.Sprintf("t//%03d", i))
			}
		}
		matches += len(want)
		got := ids(listAll(t, s, spec.ListOptions{ThreadID: "t", Filter: f}))
		if !slices.Equal(got, want) {
			t.Errorf("filter %#v:\n got %v\nwant %v", f, got, want)
		}
	}
	if matches < 40 {
		t.Errorf("only %d matches in total: the corpus no longer exercises the filters", matches)
	}
}

// TestFilterNamedCases pins the rules the issue names, independently of
// spec.MatchFilter.
func TestFilterNamedCases(t *testing.T) {
	s := newTestSaver(t)
	put := func(id string, md spec.Metadata) {
		mustPut(t, s, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: id}, md, nil)
	}
	put("bool", spec.Metadata{"x": true})
	put("int", spec.Metadata{"x": int64(1)})
	put("float", spec.Metadata{"x": 1.0})
	put("nested", spec.Metadata{"x": map[string]any{"p": []any{int64(1), map[string]any{"q": nil}}}})
	put("null", spec.Metadata{"x": nil})
	put("dotted", spec.Metadata{"x.y": int64(1)})
	put("path", spec.Metadata{"x": map[string]any{"y": int64(1)}})
	cases := []struct {
		filter spec.Metadata
		want   []string
	}{
		{spec.Metadata{"x": true}, []string{"bool"}},
		{spec.Metadata{"x": int64(1)}, []string{"int", "float"}},
		{spec.Metadata{"x": 1.0}, []string{"int", "float"}},
		{spec.Metadata{"x": nil}, []string{"null"}},
		{spec.Metadata{"x": map[string]any{"p": []any{1.0, map[string]any{"q": nil}}}}, []string{"nested"}},
		{spec.Metadata{"x": map[string]any{"p": []any{int64(1)}}}, nil},
		{spec.Metadata{"x.y": 1.0}, []string{"dotted"}},
		{spec.Metadata{"x": map[string]any{"y": int64(1)}}, []string{"path"}},
	}
	for _, c := range cases {
		got := listAll(t, s, spec.ListOptions{ThreadID: "t", Filter: c.filter})
		var names []string
		for _, tup := range got {
			names = append(names, tup.Config.CheckpointID)
		}
		slices.Sort(names)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("filter %#v: got %v want %v", c.filter, names, want)
		}
	}
}

// TestFilterNeverSplicedIntoSQL checks the compiled SQL text holds no
// filter key or value, whatever they contain.
func TestFilterNeverSplicedIntoSQL(t *testing.T) {
	s := unsetSaver(t, sharedPoolOrNil(), WithSchema("x"))
	key, val := "k'); DROP TABLE x; --$1", "v' OR 1=1 --"
	p, err := s.planList(spec.ListOptions{ThreadID: "th'", Filter: spec.Metadata{key: val}, Before: "b'"})
	if err != nil {
		t.Fatal(err)
	}
	sql, args := s.pageSQL(p, &cursor{thread: "t'", ns: "n'", id: "i'"}, 10)
	for _, bad := range []string{"DROP", "OR 1=1", "th'", "b'", "t'", "n'", "i'"} {
		if strings.Contains(sql, bad) {
			t.Errorf("SQL contains %q:\n%s", bad, sql)
		}
	}
	if !slices.Contains(args, any(key)) || !slices.Contains(args, any(`"v' OR 1=1 --"`)) {
		t.Errorf("key and value not passed as parameters: %#v", args)
	}
}

func TestFilterJSONEncoding(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{int64(-3), "-3"},
		{1.0, "1"},
		{1.5, "1.5"},
		{1e-7, "1e-07"},
		{float64(1<<60 + 256), "1152921504606847232"},
		{1e21, "1000000000000000000000"},
		{"a\x00b\x01c", `"a\u00010b\u00011c"`},
		{map[string]any{"b": nil, "a\x00": []any{true}}, `{"a\u00010":[true],"b":null}`},
	}
	for _, c := range cases {
		got, err := filterJSON(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("filterJSON(%#v) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if escapeNUL("a\x00") == escapeNUL("a\x010") {
		t.Error("escapeNUL is not injective")
	}
}

// sharedPoolOrNil lets pure SQL-building tests run without a database: New
// needs a non-nil pool but these tests never use it.
func sharedPoolOrNil() *pgxpool.Pool {
	if shared.pool != nil {
		return shared.pool
	}
	return new(pgxpool.Pool)
}
