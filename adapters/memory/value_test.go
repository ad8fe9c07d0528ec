package memory_test

import (
	"reflect"
	"sync"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

// nested returns a fresh value holding every mutable kind of the
// plain-value model (lists, maps, byte strings, delta snapshots) inside one
// another, next to immutable ones.
func nested() any {
	return map[string]any{
		"l": []any{"s", int64(1), 2.5, true, nil, []byte("ab"),
			map[string]any{"b": []byte("cd"), "l": []any{[]byte("ef")}},
			spec.DeltaSnapshot{Value: []any{[]byte("gh"), map[string]any{"k": "v"}}},
		},
		"b":    []byte("ij"),
		"snap": spec.DeltaSnapshot{Value: map[string]any{"x": []any{"y"}}},
	}
}

// scramble modifies every list, map and byte string reachable from v in
// place, deepest first.
func scramble(v any) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			scramble(e)
			x[i] = "scrambled"
		}
	case map[string]any:
		for k, e := range x {
			scramble(e)
			x[k] = "scrambled"
		}
		x["added"] = int64(0)
	case []byte:
		for i := range x {
			x[i] = 'X'
		}
	case spec.DeltaSnapshot:
		scramble(x.Value)
	}
}

// savers returns a fresh saver with the default serde, which keeps values
// decoded, and one with another serde, which keeps them encoded.
func savers() map[string]*memory.Saver {
	return map[string]*memory.Saver{
		"default serde": memory.New(),
		"custom serde":  memory.New(memory.WithSerde(otherSerde{})),
	}
}

// TestIsolationOfNestedValues checks that no caller can change a stored
// channel value or pending write through what it passed in or what it got
// back, at any depth, from GetTuple, List or DeltaHistory.
func TestIsolationOfNestedValues(t *testing.T) {
	for name, s := range savers() {
		t.Run(name, func(t *testing.T) {
			in, win := nested(), nested()
			mustPut(t, s, "t", "", "", cp("1", map[string]any{"c": in}, spec.Versions{"c": "1"}), nil, spec.Versions{"c": "1"})
			if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, []spec.Write{wr("c", win)}, "task", ""); err != nil {
				t.Fatal(err)
			}
			mustPut(t, s, "t", "", "1", cp("2", nil, spec.Versions{"c": "1"}), nil, nil)
			scramble(in)
			scramble(win)

			check := func(what string) {
				t.Helper()
				tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"})
				if err != nil {
					t.Fatal(err)
				}
				if got := tu.Checkpoint.ChannelValues["c"]; !reflect.DeepEqual(got, nested()) {
					t.Fatalf("after %s: stored value is %#v", what, got)
				}
				if got := tu.PendingWrites[0].Value; !reflect.DeepEqual(got, nested()) {
					t.Fatalf("after %s: stored write is %#v", what, got)
				}
			}
			check("scrambling the values put")

			tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"})
			if err != nil {
				t.Fatal(err)
			}
			scramble(tu.Checkpoint.ChannelValues["c"])
			scramble(tu.PendingWrites[0].Value)
			check("scrambling what GetTuple returned")

			for tu, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
				if err != nil {
					t.Fatal(err)
				}
				scramble(tu.Checkpoint.ChannelValues["c"])
				for _, w := range tu.PendingWrites {
					scramble(w.Value)
				}
			}
			check("scrambling what List returned")

			hs, err := s.DeltaHistory(ctx, spec.Config{ThreadID: "t", CheckpointID: "2"}, []string{"c"})
			if err != nil {
				t.Fatal(err)
			}
			h := hs["c"]
			if !h.HasSeed || len(h.Writes) != 1 {
				t.Fatalf("delta history: %+v", h)
			}
			scramble(h.Seed)
			scramble(h.Writes[0].Value)
			check("scrambling what DeltaHistory returned")
		})
	}
}

// TestIsolationUnderConcurrentMutation has readers modify what they read
// while others read the same values; under -race it fails if any two of
// them share a list, map or byte string.
func TestIsolationUnderConcurrentMutation(t *testing.T) {
	for name, s := range savers() {
		t.Run(name, func(t *testing.T) {
			mustPut(t, s, "t", "", "", cp("1", map[string]any{"c": nested()}, spec.Versions{"c": "1"}), nil, spec.Versions{"c": "1"})
			if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, []spec.Write{wr("c", nested())}, "task", ""); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 50 {
						tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
						if err != nil {
							t.Error(err)
							return
						}
						if !reflect.DeepEqual(tu.Checkpoint.ChannelValues["c"], nested()) {
							t.Error("a reader saw another reader's changes")
							return
						}
						scramble(tu.Checkpoint.ChannelValues["c"])
						scramble(tu.PendingWrites[0].Value)
					}
				})
			}
			wg.Wait()
		})
	}
}
