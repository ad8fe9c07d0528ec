package repro

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// noLimit is a broken saver: its List ignores Limit.
type noLimit struct{ *memory.Saver }

func (s noLimit) List(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	o.Limit = 0
	return s.Saver.List(ctx, o)
}

func openNoLimit(context.Context) (spec.Saver, func(), error) {
	return noLimit{memory.New()}, nil, nil
}

// cpID is the i-th checkpoint ID: increasing, in spec's layout.
func cpID(i int) string { return fmt.Sprintf("1ef00000-0000-6000-8000-%012d", i) }

// busySequence records, on the broken saver, a sequence of 14 calls in
// which a List with a limit of 1 shows the fault among unrelated calls.
func busySequence(t *testing.T) []trace.Call {
	ctx := context.Background()
	rec := trace.Record(noLimit{memory.New()})
	parent := ""
	for i := 1; i <= 5; i++ {
		cp := spec.Checkpoint{V: 4, ID: cpID(i), TS: "2026-01-01T00:00:00Z", ChannelValues: map[string]any{"n": int64(i)},
			ChannelVersions: spec.Versions{"n": spec.Version(fmt.Sprint(i))}}
		cfg := spec.Config{ThreadID: "t", CheckpointID: parent}
		out, err := rec.Put(ctx, cfg, cp, spec.Metadata{"step": int64(i)}, spec.Versions{"n": cp.ChannelVersions["n"]})
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.PutWrites(ctx, out, []spec.Write{{Channel: "n", Value: int64(i)}}, fmt.Sprintf("task-%d", i), "p"); err != nil {
			t.Fatal(err)
		}
		parent = out.CheckpointID
	}
	if _, err := rec.GetTuple(ctx, spec.Config{ThreadID: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := rec.DeleteThread(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	for range rec.List(ctx, spec.ListOptions{ThreadID: "t", Limit: 1}) {
	}
	for range rec.List(ctx, spec.ListOptions{ThreadID: "t"}) {
	}
	return rec.Calls()
}

func TestMinimizeShrinksToTheFault(t *testing.T) {
	ctx := context.Background()
	calls := busySequence(t)
	r, err := Minimize(ctx, openNoLimit, Reference, calls, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Two checkpoints and the List: one checkpoint cannot show a limit of 1
	// being ignored.
	got := make([]string, len(r.Calls))
	for i, c := range r.Calls {
		got[i] = c.Method
	}
	if want := []string{trace.MethodPut, trace.MethodPut, trace.MethodList}; !slices.Equal(got, want) {
		t.Fatalf("shrunk %d calls to %v, want %v", len(calls), got, want)
	}
	d := r.Divergence
	if d.Index != 2 || d.Kind() != "List result" || len(d.Want.Tuples) != 1 || len(d.Got.Tuples) != 2 {
		t.Fatalf("divergence %+v: want the List at 2 listing 2 checkpoints where the reference lists 1", d)
	}
	if r.Recorded != len(calls) || r.Runs < 2 {
		t.Errorf("Recorded %d, Runs %d", r.Recorded, r.Runs)
	}
	// The emitted trace replays the difference on a fresh broken saver
	// and passes on the reference.
	data, err := r.Trace()
	if err != nil {
		t.Fatal(err)
	}
	re, err := CheckTrace(ctx, openNoLimit, data)
	if err != nil || re.Index != 2 || re.Method != trace.MethodList {
		t.Fatalf("CheckTrace on the broken saver: %v, %v", re, err)
	}
	if _, err := CheckTrace(ctx, Reference, data); err != ErrNotReproduced {
		t.Fatalf("CheckTrace on the reference: %v, want ErrNotReproduced", err)
	}
}

func TestMinimizeNotReproduced(t *testing.T) {
	calls := busySequence(t)
	if _, err := Minimize(context.Background(), Reference, Reference, calls, 0); err != ErrNotReproduced {
		t.Fatalf("Minimize on the reference itself: %v, want ErrNotReproduced", err)
	}
}

func TestShrinkReachesAFixpoint(t *testing.T) {
	// keep holds while the sequence contains 3 and 7 in order.
	seq := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	runs := 0
	got := Shrink(seq, 0, func(c []int) ([]int, bool) {
		runs++
		i := slices.Index(c, 3)
		return c, i >= 0 && slices.Contains(c[i:], 7)
	})
	if !slices.Equal(got, []int{3, 7}) {
		t.Fatalf("Shrink = %v, want [3 7]", got)
	}
	budget := 0
	Shrink(seq, 3, func(c []int) ([]int, bool) { budget++; return c, false })
	if budget != 3 {
		t.Fatalf("Shrink made %d calls with a budget of 3", budget)
	}
}
