package mutants

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of List's metadata filter. Most replace spec.Equal by an equality
// that is wrong in exactly one case.

// filterList lists with inner without a filter and keeps the tuples whose
// metadata match the normalised filter under match.
func filterList(ctx context.Context, inner spec.Saver, o spec.ListOptions, match func(md, filter spec.Metadata) bool) iter.Seq2[*spec.Tuple, error] {
	filter, _ := spec.NormalizeFilter(o.Filter) // relist validates first
	return relist(ctx, inner, o, func(in *spec.ListOptions) { in.Filter = nil }, func(t *spec.Tuple) bool {
		return match(t.Metadata, filter)
	})
}

// matchEach matches every filter key literally with eq.
func matchEach(eq func(got, want any) bool) func(md, filter spec.Metadata) bool {
	return func(md, filter spec.Metadata) bool {
		for k, want := range filter {
			got, ok := md[k]
			if !ok || !eq(got, want) {
				return false
			}
		}
		return true
	}
}

// filterMutant builds a mutant whose List matches with match.
func filterMutant(match func(md, filter spec.Metadata) bool) func() spec.Saver {
	return func() spec.Saver {
		w := wrap()
		w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
			return filterList(ctx, w.Inner, o, match)
		}
		return w
	}
}

// witnessFilter puts one checkpoint per metadata and lists with filter.
func witnessFilter(filter spec.Metadata, mds ...spec.Metadata) func(context.Context, spec.Saver) any {
	return func(ctx context.Context, s spec.Saver) any {
		for i, md := range mds {
			_ = putCP(ctx, s, "t", "", string(rune('a'+i)), "", md, nil)
		}
		return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Filter: filter})
	}
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64:
		return true
	}
	return false
}

func init() {
	register(Mutant{
		Name: "filter-ignores-one-key", Rule: "LIST-FILTER-1",
		Description: "A filter with two or more keys ignores its greatest key.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if len(o.Filter) >= 2 {
					f := copyMeta(o.Filter)
					delete(f, slices.Max(sortedKeys(f)))
					o.Filter = f
				}
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: witnessFilter(spec.Metadata{"a": 1, "b": 2}, spec.Metadata{"a": 1, "b": 2}, spec.Metadata{"a": 1, "b": 3}),
	})
	register(Mutant{
		Name: "filter-true-is-one", Rule: "LIST-FILTER-4",
		Description: "The filter treats true as 1 and false as 0, as a database without a boolean type would.",
		New: filterMutant(matchEach(func(got, want any) bool {
			asNum := func(v any) any {
				if b, ok := v.(bool); ok {
					if b {
						return int64(1)
					}
					return int64(0)
				}
				return v
			}
			return spec.Equal(got, want) || spec.Equal(asNum(got), asNum(want))
		})),
		Witness: witnessFilter(spec.Metadata{"x": true}, spec.Metadata{"x": true}, spec.Metadata{"x": 1}),
	})
	register(Mutant{
		Name: "filter-nested-partial", Rule: "LIST-FILTER-6",
		Description: "A nested map in the filter matches any stored map containing its keys (containment, like JSONB @>).",
		New:         filterMutant(matchEach(containsValue)),
		Witness: witnessFilter(spec.Metadata{"m": map[string]any{"a": 1}},
			spec.Metadata{"m": map[string]any{"a": 1}}, spec.Metadata{"m": map[string]any{"a": 1, "b": 2}}),
	})
	register(Mutant{
		Name: "filter-number-strict", Rule: "LIST-FILTER-3",
		Description: "The filter compares numbers by type as well as value, so 1 never matches 1.0.",
		New: filterMutant(matchEach(func(got, want any) bool {
			if isNumber(got) && isNumber(want) {
				return got == want
			}
			return spec.Equal(got, want)
		})),
		Witness: witnessFilter(spec.Metadata{"n": 1}, spec.Metadata{"n": 1}, spec.Metadata{"n": 1.0}),
	})
	register(Mutant{
		Name: "filter-string-fold", Rule: "LIST-FILTER-5",
		Description: "The filter compares strings case-insensitively, as a case-insensitive collation would.",
		New: filterMutant(matchEach(func(got, want any) bool {
			g, ok1 := got.(string)
			w, ok2 := want.(string)
			if ok1 && ok2 {
				return strings.EqualFold(g, w)
			}
			return spec.Equal(got, want)
		})),
		Witness: witnessFilter(spec.Metadata{"s": "abc"}, spec.Metadata{"s": "abc"}, spec.Metadata{"s": "ABC"}),
	})
	register(Mutant{
		Name: "filter-list-unordered", Rule: "LIST-FILTER-7",
		Description: "A list in the filter matches a stored list with the same elements in any order.",
		New: filterMutant(matchEach(func(got, want any) bool {
			g, ok1 := got.([]any)
			w, ok2 := want.([]any)
			if !ok1 || !ok2 {
				return spec.Equal(got, want)
			}
			if len(g) != len(w) {
				return false
			}
			used := make([]bool, len(g))
		next:
			for _, we := range w {
				for i, ge := range g {
					if !used[i] && spec.Equal(ge, we) {
						used[i] = true
						continue next
					}
				}
				return false
			}
			return true
		})),
		Witness: witnessFilter(spec.Metadata{"l": []any{1, 2}}, spec.Metadata{"l": []any{1, 2}}, spec.Metadata{"l": []any{2, 1}}),
	})
	register(Mutant{
		Name: "filter-nil-matches-missing", Rule: "LIST-FILTER-8",
		Description: "A nil filter value also matches checkpoints that lack the key (SQL's NULL from a missing JSON key).",
		New: filterMutant(func(md, filter spec.Metadata) bool {
			for k, want := range filter {
				got, ok := md[k]
				if want == nil && !ok {
					continue
				}
				if !ok || !spec.Equal(got, want) {
					return false
				}
			}
			return true
		}),
		Witness: witnessFilter(spec.Metadata{"k": nil}, spec.Metadata{"k": nil}, spec.Metadata{"other": 1}),
	})
	register(Mutant{
		Name: "filter-dotted-path", Rule: "LIST-FILTER-2",
		Description: "A filter key containing dots is resolved as a path into nested maps instead of a literal key.",
		New: filterMutant(func(md, filter spec.Metadata) bool {
			for k, want := range filter {
				var got any = map[string]any(md)
				ok := true
				for part := range strings.SplitSeq(k, ".") {
					m, isMap := got.(map[string]any)
					if !isMap {
						ok = false
						break
					}
					got, ok = m[part]
					if !ok {
						break
					}
				}
				if !ok || !spec.Equal(got, want) {
					return false
				}
			}
			return true
		}),
		Witness: witnessFilter(spec.Metadata{"a.b": 1}, spec.Metadata{"a.b": 1}, spec.Metadata{"a": map[string]any{"b": 1}}),
	})
}

// containsValue reports whether got contains want: maps by key subset
// (recursively), everything else by spec.Equal.
func containsValue(got, want any) bool {
	wm, ok := want.(map[string]any)
	if !ok {
		return spec.Equal(got, want)
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, wv := range wm {
		gv, ok := gm[k]
		if !ok || !containsValue(gv, wv) {
			return false
		}
	}
	return true
}
