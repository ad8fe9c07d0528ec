package savertest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// PutWritesAllOrNothing checks that a PutWrites call whose value at the
// end of the batch is unsupported, or whose context is cancelled before it
// starts, stores none of its writes, also on a key that already holds a
// special write (which the failed call would have replaced).
func PutWritesAllOrNothing(t *testing.T, s spec.Saver) {
	ctx := context.Background()
	MustPut(t, s, "t", "", "1", "", true)
	cfg := spec.Config{ThreadID: "t", CheckpointID: "1"}
	before, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(last any) []spec.Write {
		ws := []spec.Write{{Channel: spec.InterruptChannel, Value: "new"}, {Channel: spec.ErrorChannel, Value: "e"}}
		for i := range 40 {
			ws = append(ws, spec.Write{Channel: fmt.Sprintf("c%d", i), Value: int64(i)})
		}
		return append(ws, spec.Write{Channel: "last", Value: last})
	}
	for name, last := range map[string]any{
		"struct":         struct{}{},
		"uint64":         uint64(math.MaxUint64),
		"self-contained": selfContaining(),
		"too deep":       tooDeep(),
	} {
		for _, task := range []string{"task-1", "other"} {
			err := s.PutWrites(ctx, cfg, batch(last), task, "")
			if !errors.Is(err, spec.ErrUnsupportedValue) {
				t.Errorf("%s as the last value: error = %v, want ErrUnsupportedValue", name, err)
			}
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.PutWrites(cctx, cfg, batch("fine"), "other", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error = %v, want context.Canceled", err)
	}
	after, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after.PendingWrites) != fmt.Sprint(before.PendingWrites) {
		t.Errorf("failed PutWrites changed the pending writes:\n got %v\nwant %v", after.PendingWrites, before.PendingWrites)
	}
}

func selfContaining() any {
	m := map[string]any{}
	m["m"] = []any{m}
	return m
}

func tooDeep() any {
	var v any = 1
	for range spec.MaxValueDepth + 1 {
		v = map[string]any{"k": v}
	}
	return v
}

// call is one operation of the cancellation sweep: prepare sets up its
// thread (run once, with a plain context), run makes the call, and check
// verifies that the state afterwards is one of the two allowed ones.
type call struct {
	name    string
	prepare func(ctx context.Context, s spec.Saver, thread string) error
	run     func(ctx context.Context, s spec.Saver, thread string) error
	// states lists, for the snapshot of the threads the call concerns,
	// the outcome where nothing happened and the one where all did.
	states func(thread string) (threads []string, none, all []string)
}

// CancelDuring checks that a call whose context is cancelled while it runs
// leaves all or nothing, at every point where the saver looks at its
// context: for k = 1, 2, ... a [Countdown] cancels the call at its k-th
// look, until a call completes before the countdown fires. Every call that
// fails must report the cancellation (errors.Is context.Canceled), and
// every checkpoint visible afterwards must be whole. maxK bounds the sweep.
func CancelDuring(t *testing.T, s spec.Saver, maxK int) {
	calls := []call{
		{
			name:    "put",
			prepare: func(ctx context.Context, s spec.Saver, th string) error { return Put(ctx, s, th, "", "1", "", true) },
			run:     func(ctx context.Context, s spec.Saver, th string) error { return Put(ctx, s, th, "", "2", "", false) },
			states: func(th string) ([]string, []string, []string) {
				return []string{th}, []string{th + "|/1:4"}, []string{th + "|/1:4", th + "|/2:0"}
			},
		},
		{
			name:    "put writes",
			prepare: func(ctx context.Context, s spec.Saver, th string) error { return Put(ctx, s, th, "", "1", "", false) },
			run: func(ctx context.Context, s spec.Saver, th string) error {
				_, _, _, ws := Fixture("1", "")
				return s.PutWrites(ctx, spec.Config{ThreadID: th, CheckpointID: "1"}, ws, "task-1", "p")
			},
			states: func(th string) ([]string, []string, []string) {
				return []string{th}, []string{th + "|/1:0"}, []string{th + "|/1:4"}
			},
		},
		{
			name:    "delete thread",
			prepare: putThree,
			run:     func(ctx context.Context, s spec.Saver, th string) error { return s.DeleteThread(ctx, th) },
			states: func(th string) ([]string, []string, []string) {
				return []string{th}, threeOf(th), nil
			},
		},
	}
	if _, ok := s.(spec.Pruner); ok {
		calls = append(calls, call{
			name:    "prune",
			prepare: putThree,
			run: func(ctx context.Context, s spec.Saver, th string) error {
				return s.(spec.Pruner).Prune(ctx, []string{th}, spec.KeepLatest)
			},
			states: func(th string) ([]string, []string, []string) {
				return []string{th}, threeOf(th), []string{th + "|/3:4", th + "|sub:1/3:4"}
			},
		})
	}
	if _, ok := s.(spec.ThreadCopier); ok {
		calls = append(calls, call{
			name:    "copy thread",
			prepare: putThree,
			run: func(ctx context.Context, s spec.Saver, th string) error {
				return s.(spec.ThreadCopier).CopyThread(ctx, th, th+"-copy")
			},
			states: func(th string) ([]string, []string, []string) {
				var all []string
				for _, k := range threeOf(th) {
					all = append(all, strings.Replace(k, th+"|", th+"-copy|", 1))
				}
				return []string{th + "-copy"}, nil, all
			},
		})
	}
	if _, ok := s.(spec.RunDeleter); ok {
		calls = append(calls, call{
			name:    "delete for runs",
			prepare: putThree,
			run: func(ctx context.Context, s spec.Saver, th string) error {
				return s.(spec.RunDeleter).DeleteForRuns(ctx, []string{th + "-run"})
			},
			states: func(th string) ([]string, []string, []string) {
				return []string{th}, threeOf(th), []string{th + "|/2:4", th + "|sub:1/3:4"}
			},
		})
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			completed := false
			for k := 1; k <= maxK && !completed; k++ {
				th := fmt.Sprintf("cancel-%s-%d", strings.ReplaceAll(c.name, " ", "-"), k)
				if err := c.prepare(context.Background(), s, th); err != nil {
					t.Fatalf("prepare: %v", err)
				}
				ctx := NewCountdown(k)
				err := c.run(ctx, s, th)
				fired := ctx.Fired()
				ctx.Stop()
				completed = !fired
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("k=%d: error = %v, want nil or one wrapping context.Canceled", k, err)
				}
				if err != nil && !fired {
					t.Errorf("k=%d: error %v without a cancellation", k, err)
				}
				threads, none, all := c.states(th)
				var got []string
				for _, thread := range threads {
					snap, serr := Snapshot(context.Background(), s, thread)
					if serr != nil {
						t.Fatalf("k=%d: %v", k, serr)
					}
					for _, key := range keys(snap) {
						got = append(got, thread+"|"+key)
					}
				}
				slices.Sort(got)
				switch {
				case slices.Equal(got, none) || len(got) == 0 && len(none) == 0:
					if err == nil {
						t.Errorf("k=%d: the call returned nil but did nothing: %v", k, got)
					}
				case slices.Equal(got, all) || len(got) == 0 && len(all) == 0:
				default:
					t.Errorf("k=%d (error %v): partial outcome\n got %v\nwant %v or %v", k, err, got, none, all)
				}
				// Keep the store small: on some backends every query
				// costs time proportional to it.
				for _, thread := range []string{th, th + "-copy"} {
					if err := s.DeleteThread(context.Background(), thread); err != nil {
						t.Fatalf("k=%d: clean up: %v", k, err)
					}
				}
			}
			if !completed {
				t.Logf("the call was still being cancelled at k=%d", maxK)
			}
		})
	}
}

// putThree stores checkpoints 1, 2 and 3 with their writes in the root
// namespace and 2 and 3 in namespace "sub:1"; 1 and 3 of the root belong to
// run thread+"-run", and so does 2 of "sub:1".
func putThree(ctx context.Context, s spec.Saver, th string) error {
	for _, p := range []struct{ ns, id, run string }{
		{"", "1", th + "-run"}, {"", "2", ""}, {"", "3", th + "-run"},
		{"sub:1", "2", th + "-run"}, {"sub:1", "3", ""},
	} {
		if err := Put(ctx, s, th, p.ns, p.id, p.run, true); err != nil {
			return err
		}
	}
	return nil
}

func threeOf(th string) []string {
	return []string{th + "|/1:4", th + "|/2:4", th + "|/3:4", th + "|sub:1/2:4", th + "|sub:1/3:4"}
}
