package refengine_test

import (
	"context"
	"errors"
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
		AddEdge(refengine.Start, "ask"), refengine.CompileOptions{Saver: s})
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

// Two interrupts in one node answered through resume maps: the second has
// an ID of its own (the task namespace's digest with "|1", as LangGraph
// Python's _interrupt_id gives it); no null resume row is ever stored.
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
	if err != nil || len(res.Interrupts) != 1 || res.Interrupts[0].ID == id || res.Interrupts[0].Value != "two?" {
		t.Fatalf("first map resume: %+v %v", res, err)
	}
	res, err = g.Invoke(ctx, refengine.Command{ResumeMap: map[string]any{res.Interrupts[0].ID: "B"}}, cfg)
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

// A node that calls Interrupt and drops its error fails its task with
// ErrInterruptSwallowed instead of losing the interrupt; one that returns
// the error, wrapped or not, is interrupted.
func TestSwallowedInterruptFailsTheTask(t *testing.T) {
	errOther := errors.New("other failure")
	cases := []struct {
		name string
		// after gets Interrupt's error and returns the node's result.
		after func(err error) (refengine.Update, error)
		// wantErr is nil when the run must stop on the interrupt.
		wantErr []error
	}{
		{"returns nil", func(error) (refengine.Update, error) { return nil, nil }, []error{refengine.ErrInterruptSwallowed}},
		{"returns an update", func(error) (refengine.Update, error) { return refengine.Update{"out": "ignored"}, nil }, []error{refengine.ErrInterruptSwallowed}},
		{"returns another error", func(error) (refengine.Update, error) { return nil, errOther }, []error{refengine.ErrInterruptSwallowed, errOther}},
		{"flattens the error", func(err error) (refengine.Update, error) { return nil, fmt.Errorf("ask: %v", err) }, []error{refengine.ErrInterruptSwallowed}},
		{"wraps the error", func(err error) (refengine.Update, error) { return nil, fmt.Errorf("ask: %w", err) }, nil},
		{"returns the error", func(err error) (refengine.Update, error) { return nil, err }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := memory.New()
			var sawSentinel bool
			g := compile(t, refengine.NewStateGraph().
				AddKey("out", refengine.LastValue()).
				AddNode("ask", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
					_, err := refengine.Interrupt(ctx, "ok?")
					sawSentinel = errors.Is(err, refengine.ErrGraphInterrupt)
					return tc.after(err)
				}).
				AddEdge(refengine.Start, "ask"), refengine.CompileOptions{Saver: s})
			res, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t", Deterministic: true})
			if !sawSentinel {
				t.Error("the error of Interrupt does not match ErrGraphInterrupt")
			}
			hs := history(t, s, "t", "")
			stored := hs[len(hs)-1].PendingWrites
			if tc.wantErr == nil {
				if err != nil || !res.Interrupted || len(res.Interrupts) != 1 || res.Interrupts[0].Value != "ok?" {
					t.Fatalf("res=%+v err=%v, want the interrupt", res, err)
				}
				if len(stored) != 1 || stored[0].Channel != spec.InterruptChannel {
					t.Errorf("stored writes %v, want the interrupt", stored)
				}
				return
			}
			var te *refengine.TaskError
			if !errors.As(err, &te) || te.Node != "ask" {
				t.Fatalf("err = %v, want a *TaskError of node ask", err)
			}
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want it to match %v", err, want)
				}
			}
			if errors.Is(err, refengine.ErrGraphInterrupt) {
				t.Errorf("err = %v still matches ErrGraphInterrupt", err)
			}
			if len(stored) != 1 || stored[0].Channel != spec.ErrorChannel {
				t.Errorf("stored writes %v, want one __error__ write and no interrupt or update", stored)
			}
		})
	}
}

// A node of a subgraph that swallows an interrupt fails the parent run with
// the inner node's TaskError.
func TestSwallowedInterruptInSubgraph(t *testing.T) {
	ctx := context.Background()
	child := compile(t, refengine.NewStateGraph().
		AddKey("out", refengine.LastValue()).
		AddNode("inner", func(ctx context.Context, _ refengine.State) (refengine.Update, error) {
			_, _ = refengine.Interrupt(ctx, "lost?")
			return refengine.Update{"out": "done"}, nil
		}).
		AddEdge(refengine.Start, "inner"), refengine.CompileOptions{})
	g := compile(t, refengine.NewStateGraph().
		AddKey("out", refengine.LastValue()).
		AddSubgraph("sub", child).AddEdge(refengine.Start, "sub"), refengine.CompileOptions{Saver: memory.New()})
	res, err := g.Invoke(ctx, refengine.State{}, refengine.RunConfig{ThreadID: "t"})
	var te *refengine.TaskError
	if !errors.Is(err, refengine.ErrInterruptSwallowed) || !errors.As(err, &te) || te.Node != "inner" {
		t.Fatalf("res=%+v err=%v, want inner's task to fail with ErrInterruptSwallowed", res, err)
	}
}
