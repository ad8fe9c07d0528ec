package refengine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// fanoutDelta is START -> a, b, then a -> c: messages is a delta channel
// snapshotted every `every` updates, written by every node.
func fanoutDelta(t *testing.T, s spec.Saver, every int) *refengine.Graph {
	t.Helper()
	write := func(v string) refengine.NodeFunc {
		return func(context.Context, refengine.State) (refengine.Update, error) {
			return refengine.Update{"messages": []any{v}}, nil
		}
	}
	g, err := refengine.NewStateGraph().AddKey("messages", refengine.Delta(refengine.AppendDelta, nil, every)).
		AddNode("a", write("a")).AddNode("b", write("b")).AddNode("c", write("c")).
		AddEdge(refengine.Start, "a").AddEdge(refengine.Start, "b").AddEdge("a", "c").
		Compile(refengine.CompileOptions{Saver: s})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func messagesOf(t *testing.T, g *refengine.Graph, cfg refengine.RunConfig) string {
	t.Helper()
	snap, err := g.GetState(context.Background(), cfg, refengine.StateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(snap.Values["messages"])
}

// TestDeltaExitDurability checks that a delta channel reads back the same
// under exit durability as under sync durability, turn after turn, at
// every snapshot frequency: the writes of the supersteps a final
// checkpoint does not snapshot are stored on its parent.
func TestDeltaExitDurability(t *testing.T) {
	ctx := context.Background()
	for _, every := range []int{1, 2, 3, 4, 7, 100} {
		for _, deterministic := range []bool{true, false} {
			t.Run(fmt.Sprintf("every %d deterministic %v", every, deterministic), func(t *testing.T) {
				sync, exit := fanoutDelta(t, memory.New(), every), fanoutDelta(t, memory.New(), every)
				syncCfg := refengine.RunConfig{ThreadID: "t", Durability: refengine.DurabilitySync, Deterministic: deterministic}
				exitCfg := refengine.RunConfig{ThreadID: "t", Durability: refengine.DurabilityExit, Deterministic: deterministic}
				for i := range 5 {
					in := refengine.State{"messages": []any{fmt.Sprintf("u%d", i)}}
					if _, err := sync.Invoke(ctx, in, syncCfg); err != nil {
						t.Fatal(err)
					}
					if _, err := exit.Invoke(ctx, in, exitCfg); err != nil {
						t.Fatal(err)
					}
					want, got := messagesOf(t, sync, syncCfg), messagesOf(t, exit, exitCfg)
					if got != want {
						t.Fatalf("turn %d: exit durability reads %s, sync %s", i, got, want)
					}
				}
			})
		}
	}
}

// TestDeltaExitFromAddressedCheckpoint runs a turn under exit durability
// from a checkpoint the thread has moved past: its children may read writes
// stored on it, so the channel snapshots instead, and the old branch reads
// back unchanged.
func TestDeltaExitFromAddressedCheckpoint(t *testing.T) {
	ctx := context.Background()
	g := fanoutDelta(t, memory.New(), 100)
	cfg := refengine.RunConfig{ThreadID: "t", Durability: refengine.DurabilityExit, Deterministic: true}
	for i := range 3 {
		if _, err := g.Invoke(ctx, refengine.State{"messages": []any{fmt.Sprintf("u%d", i)}}, cfg); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := g.History(ctx, cfg, refengine.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second := hist[1].Config
	want := messagesOf(t, g, refengine.RunConfig{ThreadID: "t", CheckpointID: second.CheckpointID})
	at := cfg
	at.CheckpointID = second.CheckpointID
	if _, err := g.Invoke(ctx, refengine.State{"messages": []any{"fork"}}, at); err != nil {
		t.Fatal(err)
	}
	if got := messagesOf(t, g, cfg); got != "[u0 a b c u1 a b c fork a b c]" {
		t.Errorf("fork reads %s", got)
	}
	if got := messagesOf(t, g, refengine.RunConfig{ThreadID: "t", CheckpointID: hist[0].Config.CheckpointID}); got != "[u0 a b c u1 a b c u2 a b c]" {
		t.Errorf("the old branch reads %s", got)
	}
	if got := messagesOf(t, g, refengine.RunConfig{ThreadID: "t", CheckpointID: second.CheckpointID}); got != want {
		t.Errorf("the forked checkpoint reads %s, before the fork %s", got, want)
	}
}
