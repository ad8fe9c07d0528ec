package mutants

import (
	"context"
	"math"
	"strings"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of how channel and write values are encoded and decoded. They
// plug a lossy spec.Serde into the memory adapter, which is the layer where
// real adapters lose types.

// lossySerde decodes with the default serde, then rewrites every node of
// the value with f.
type lossySerde struct{ f func(any) any }

func (s lossySerde) Encode(v any) ([]byte, error) { return spec.DefaultSerde().Encode(v) }

func (s lossySerde) Decode(data []byte) (any, error) {
	v, err := spec.DefaultSerde().Decode(data)
	if err != nil {
		return nil, err
	}
	return walk(v, s.f), nil
}

func withSerde(f func(any) any) func() spec.Saver {
	return func() spec.Saver { return wrap(memory.WithSerde(lossySerde{f})) }
}

// witnessValue stores v as a channel value and reads it back.
func witnessValue(v any) func(context.Context, spec.Saver) any {
	return func(ctx context.Context, s spec.Saver) any {
		_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": v})
		return get(ctx, s, "t", "", "a")
	}
}

func init() {
	register(Mutant{
		Name: "whole-floats-as-ints", Rule: "VALUE-8",
		Description: "Whole floats decode as integers, as a store with one JSON number type gives them back (LangGraph.js).",
		New: withSerde(func(v any) any {
			if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 && !math.Signbit(f) {
				return int64(f)
			}
			return v
		}),
		Witness: witnessValue(2.0),
	})
	register(Mutant{
		Name: "int64-as-float64", Rule: "VALUE-8",
		Description: "Integers decode as float64, as a JSON round trip into interface{} does.",
		New: withSerde(func(v any) any {
			if i, ok := v.(int64); ok {
				return float64(i)
			}
			return v
		}),
		Witness: witnessValue(int64(7)),
	})
	register(Mutant{
		Name: "bytes-as-string", Rule: "VALUE-1",
		Description: "Byte slices decode as strings.",
		New: withSerde(func(v any) any {
			if b, ok := v.([]byte); ok {
				return string(b)
			}
			return v
		}),
		Witness: witnessValue([]byte("raw")),
	})
	register(Mutant{
		Name: "negative-zero-lost", Rule: "VALUE-2",
		Description: "-0.0 decodes as +0.0 (the sign is lost).",
		New: withSerde(func(v any) any {
			if f, ok := v.(float64); ok && f == 0 && math.Signbit(f) {
				return 0.0
			}
			return v
		}),
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"c": math.Copysign(0, -1)})
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
			if err != nil {
				return errKind(err)
			}
			f, _ := t.Checkpoint.ChannelValues["c"].(float64)
			return math.Signbit(f)
		},
	})
	register(Mutant{
		Name: "empty-list-as-nil", Rule: "VALUE-1",
		Description: "An empty list decodes as nil.",
		New: withSerde(func(v any) any {
			if l, ok := v.([]any); ok && len(l) == 0 {
				return nil
			}
			return v
		}),
		Witness: witnessValue([]any{}),
	})
	register(Mutant{
		Name: "value-nul-stripped", Rule: "VALUE-2",
		Description: "NUL characters are removed from strings in channel and write values (the metadata rule applied to values).",
		New: withSerde(func(v any) any {
			if s, ok := v.(string); ok {
				return strings.ReplaceAll(s, "\x00", "")
			}
			return v
		}),
		Witness: witnessValue("a\x00b"),
	})
	register(Mutant{
		Name: "deep-nesting-truncated", Rule: "VALUE-2",
		Description: "Values nested deeper than 16 levels lose their innermost levels (replaced by nil).",
		New: func() spec.Saver {
			return wrap(memory.WithSerde(truncSerde{depth: 16}))
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			var v any = "core"
			for range 24 {
				v = []any{v}
			}
			return witnessValue(v)(ctx, s)
		},
	})
}

// truncSerde decodes with the default serde and cuts the value at depth.
type truncSerde struct{ depth int }

func (s truncSerde) Encode(v any) ([]byte, error) { return spec.DefaultSerde().Encode(v) }

func (s truncSerde) Decode(data []byte) (any, error) {
	v, err := spec.DefaultSerde().Decode(data)
	if err != nil {
		return nil, err
	}
	return truncate(v, s.depth), nil
}

func truncate(v any, depth int) any {
	switch x := v.(type) {
	case []any:
		if depth == 0 {
			return nil
		}
		for i := range x {
			x[i] = truncate(x[i], depth-1)
		}
	case map[string]any:
		if depth == 0 {
			return nil
		}
		for k := range x {
			x[k] = truncate(x[k], depth-1)
		}
	}
	return v
}
