package refengine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// twoQuestions has one node asking twice; it reports both answers and the
// value of q it saw.
func twoQuestions(t *testing.T, s spec.Saver, runs *counter) *refengine.Graph {
	return compile(t, refengine.NewStateGraph().
		AddKey("q", refengine.LastValue()).
		AddKey("out", refengine.LastValue()).
		AddNode("ask", func(ctx context.Context, st refengine.State) (refengine.Update, error) {
			runs.n["ask"].Add(1)
			a, err := refengine.Interrupt(ctx, "one?")
			if err != nil {
				return nil, err
			}
			b, err := refengine.Interrupt(ctx, "two?")
			if err != nil {
				return nil, err
			}
			return refengine.Update{"out": fmt.Sprint(a, ",", b, ",", st["q"])}, nil
		}).
		AddEdge(refengine.Start, "ask"), refengine.WithSaver(s))
}

// A Command's update is saved as a null write and applied again on every
// later resume from the same checkpoint; plain Invoke(nil) re-runs the
// interrupted node, which interrupts again.
func TestResumeWithUpdateAndPlainResume(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("ask")
	g := twoQuestions(t, s, runs)
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true, Durability: refengine.DurabilitySync}
	if _, err := g.Invoke(ctx, refengine.State{"q": "orig"}, cfg); err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, nil, cfg)
	if err != nil || len(res.Interrupts) != 1 || res.Interrupts[0].Value != "one?" {
		t.Fatalf("plain resume: %+v %v", res, err)
	}
	res, err = g.Invoke(ctx, refengine.Command{Resume: "A", Update: map[string]any{"q": "changed"}}, cfg)
	if err != nil || len(res.Interrupts) != 1 || res.Interrupts[0].Value != "two?" {
		t.Fatalf("resume 1: %+v %v", res, err)
	}
	res, err = g.Invoke(ctx, refengine.Command{Resume: "B"}, cfg)
	if err != nil || res.Interrupted {
		t.Fatalf("resume 2: %+v %v", res, err)
	}
	if res.Values["out"] != "A,B,changed" || res.Values["q"] != "changed" {
		t.Errorf("values = %v", res.Values)
	}
	if runs.get("ask") != 4 {
		t.Errorf("ask ran %d times, want 4", runs.get("ask"))
	}
	hs := history(t, s, "t", "")
	var null []string
	for _, w := range hs[1].PendingWrites {
		if w.TaskID == spec.NullTaskID {
			null = append(null, fmt.Sprint(w.Channel, "=", w.Value))
		}
	}
	// The update row was written once (first write wins on re-sends), the
	// null resume row holds the latest answer.
	if fmt.Sprint(null) != "[__resume__=B q=changed]" {
		t.Errorf("null writes on C(0) = %v", null)
	}
}

// Two interrupts in one node answered through resume maps: both carry the
// task's interrupt ID; no null resume row is ever stored.
func TestResumeMapTwiceInOneNode(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	runs := newCounter("ask")
	g := twoQuestions(t, s, runs)
	cfg := refengine.RunConfig{ThreadID: "t", Deterministic: true}
	res, err := g.Invoke(ctx, refengine.State{"q": "x"}, cfg)
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	id := res.Interrupts[0].ID
	res, err = g.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{id: "A"}}, cfg)
	if err != nil || len(res.Interrupts) != 1 || res.Interrupts[0].ID != id || res.Interrupts[0].Value != "two?" {
		t.Fatalf("first map resume: %+v %v", res, err)
	}
	res, err = g.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{id: "B"}}, cfg)
	if err != nil || res.Interrupted || res.Values["out"] != "A,B,x" {
		t.Fatalf("second map resume: %+v %v", res, err)
	}
	for _, h := range history(t, s, "t", "") {
		for _, w := range h.PendingWrites {
			if w.TaskID == spec.NullTaskID {
				t.Errorf("null-task write %v stored for a resume map", w)
			}
		}
	}
}
