package refengine_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
)

// benchmarkInvoke runs one fresh-thread invocation of g per iteration on the
// in-memory adapter, for each durability mode.
func benchmarkInvoke(b *testing.B, build func(*memory.Saver) *refengine.Graph, input refengine.State) {
	for _, d := range []refengine.Durability{refengine.DurabilityAsync, refengine.DurabilitySync, refengine.DurabilityExit} {
		b.Run(string(d), func(b *testing.B) {
			s := memory.New()
			g := build(s)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := g.Invoke(ctx, input, refengine.RunConfig{ThreadID: "bench-" + strconv.Itoa(i), Durability: d}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInvokeLinear3 is START -> n1 -> n2 -> n3: five checkpoints and
// four PutWrites per invocation.
func BenchmarkInvokeLinear3(b *testing.B) {
	benchmarkInvoke(b, func(s *memory.Saver) *refengine.Graph {
		node := func(name string) refengine.NodeFunc {
			return func(context.Context, refengine.State) (refengine.Update, error) {
				return refengine.Update{"log": []any{name}}, nil
			}
		}
		g, err := refengine.NewStateGraph().
			AddKey("log", refengine.Reducer(refengine.AppendList, []any{})).
			AddNode("n1", node("n1")).AddNode("n2", node("n2")).AddNode("n3", node("n3")).
			AddEdge(refengine.Start, "n1").AddEdge("n1", "n2").AddEdge("n2", "n3").
			Compile(refengine.CompileOptions{Saver: s})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}, refengine.State{"log": []any{}})
}

// BenchmarkInvokeFanout10 is START -> plan, then ten Send tasks run
// concurrently and reduced into one list.
func BenchmarkInvokeFanout10(b *testing.B) {
	benchmarkInvoke(b, func(s *memory.Saver) *refengine.Graph {
		g, err := refengine.NewStateGraph().
			AddKey("results", refengine.Reducer(refengine.AppendList, []any{})).
			AddNode("plan", func(context.Context, refengine.State) (refengine.Update, error) { return nil, nil }).
			AddNode("work", func(_ context.Context, st refengine.State) (refengine.Update, error) {
				return refengine.Update{"results": []any{st["i"]}}, nil
			}).
			AddEdge(refengine.Start, "plan").
			AddConditionalEdges("plan", func(context.Context, refengine.State) (refengine.Route, error) {
				var r refengine.Route
				for i := range 10 {
					r.Sends = append(r.Sends, refengine.Send{Node: "work", Arg: refengine.State{"i": i}})
				}
				return r, nil
			}).
			Compile(refengine.CompileOptions{Saver: s})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}, refengine.State{"results": []any{}})
}
