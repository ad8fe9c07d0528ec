package refengine_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// counter counts node executions.
type counter struct{ n map[string]*atomic.Int64 }

func newCounter(names ...string) *counter {
	c := &counter{n: map[string]*atomic.Int64{}}
	for _, n := range names {
		c.n[n] = new(atomic.Int64)
	}
	return c
}

func (c *counter) get(name string) int64 { return c.n[name].Load() }

// logNode appends its name to "log".
func (c *counter) logNode(name string) refengine.NodeFunc {
	return func(ctx context.Context, s refengine.State) (refengine.Update, error) {
		c.n[name].Add(1)
		return refengine.Update{"log": []any{name}}, nil
	}
}

// history lists every checkpoint of a namespace, oldest first.
func history(t testing.TB, s spec.Saver, thread, ns string) []*spec.Tuple {
	t.Helper()
	var out []*spec.Tuple
	for tup, err := range s.List(context.Background(), spec.ListOptions{ThreadID: thread, Namespace: ns}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tup)
	}
	slices.Reverse(out)
	return out
}

func newSaver() spec.Saver { return memory.New() }
