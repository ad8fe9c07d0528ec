package savertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// together runs fns at the same time, released by one closed channel, and
// returns their errors.
func together(fns ...func() error) []error {
	start := make(chan struct{})
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			<-start
			errs[i] = fn()
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// PruneRacesPut races Prune(KeepLatest) against the Put (and then the
// writes) of a checkpoint newer than every other of the thread, rounds
// times: the new checkpoint always survives whole, with its writes, and
// nothing older than the latest checkpoint Prune could have kept remains.
func PruneRacesPut(t *testing.T, s spec.Saver, rounds int) {
	p, ok := s.(spec.Pruner)
	if !ok {
		t.Skip("not a spec.Pruner")
	}
	ctx := context.Background()
	for r := range rounds {
		th := fmt.Sprintf("prune-race-%d", r)
		for _, id := range []string{"1", "2", "3"} {
			MustPut(t, s, th, "", id, "", true)
		}
		errs := together(
			func() error { return Put(ctx, s, th, "", "9", "", true) },
			func() error { return p.Prune(ctx, []string{th}, spec.KeepLatest) },
		)
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		snap, err := Snapshot(ctx, s, th)
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		got := keys(snap)
		if !slices.Equal(got, []string{"/9:4"}) && !slices.Equal(got, []string{"/3:4", "/9:4"}) {
			t.Fatalf("round %d: after Prune raced a newer Put the thread holds %v, want [/9:4] or [/3:4 /9:4]", r, got)
		}
	}
}

// DeleteThreadRacesPut races DeleteThread against the Put and then the
// writes of a new checkpoint, rounds times, on a thread holding a
// checkpoint put before DeleteThread began: that one is always gone, and
// the new one is either gone or whole with all its writes.
func DeleteThreadRacesPut(t *testing.T, s spec.Saver, rounds int) {
	ctx := context.Background()
	for r := range rounds {
		th := fmt.Sprintf("delete-race-%d", r)
		MustPut(t, s, th, "", "1", "", true)
		errs := together(
			func() error { return Put(ctx, s, th, "", "2", "", true) },
			func() error { return s.DeleteThread(ctx, th) },
		)
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		snap, err := Snapshot(ctx, s, th)
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if got := keys(snap); len(got) != 0 && !slices.Equal(got, []string{"/2:4"}) {
			t.Fatalf("round %d: after DeleteThread raced a Put the thread holds %v, want [] or [/2:4]", r, got)
		}
	}
}

// ReadersDuringMaintenance runs a writer putting checkpoints (and their
// writes) on one thread while maintenance runs on it in a loop (Prune,
// CopyThread to a second thread, DeleteForRuns, DeleteThread of the copy)
// and readers list and get both threads: every checkpoint any reader sees
// is whole, with none or all of its writes, and the writer's last
// checkpoint survives.
func ReadersDuringMaintenance(t *testing.T, s spec.Saver, writes int) {
	ctx := context.Background()
	const th, cp = "rdm", "rdm-copy"
	done := make(chan struct{})
	var (
		mu     sync.Mutex
		errs   []error
		nReads int
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range writes {
			run := ""
			if i%3 == 0 && i < writes-1 {
				run = fmt.Sprintf("run-%d", i)
			}
			if err := Put(ctx, s, th, "", fmt.Sprintf("w%04d", i), run, true); err != nil {
				fail(fmt.Errorf("writer: %w", err))
				return
			}
		}
	})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			var err error
			switch i % 4 {
			case 0:
				if p, ok := s.(spec.Pruner); ok {
					err = p.Prune(ctx, []string{th}, spec.KeepLatest)
				}
			case 1:
				if c, ok := s.(spec.ThreadCopier); ok {
					err = c.CopyThread(ctx, th, cp)
				}
			case 2:
				if r, ok := s.(spec.RunDeleter); ok {
					err = r.DeleteForRuns(ctx, []string{fmt.Sprintf("run-%d", i-2), fmt.Sprintf("run-%d", i+1)})
				}
			case 3:
				err = s.DeleteThread(ctx, cp)
			}
			if err != nil {
				fail(fmt.Errorf("maintenance step %d: %w", i, err))
				return
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, thread := range []string{th, cp} {
					if _, err := Snapshot(ctx, s, thread); err != nil {
						fail(fmt.Errorf("reader: %w", err))
						return
					}
					tup, err := s.GetTuple(ctx, spec.Config{ThreadID: thread})
					if err == nil {
						err = Whole(tup)
					} else if errors.Is(err, spec.ErrNotFound) {
						err = nil
					}
					if err != nil {
						fail(fmt.Errorf("reader: get latest of %s: %w", thread, err))
						return
					}
				}
				mu.Lock()
				nReads++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("w%04d", writes-1)
	tup, err := s.GetTuple(ctx, spec.Config{ThreadID: th})
	if err != nil || tup.Config.CheckpointID != last || Whole(tup) != nil || len(tup.PendingWrites) != 4 {
		t.Fatalf("the writer's last checkpoint %s did not survive whole: %+v, %v", last, tup, err)
	}
	t.Logf("%d read rounds alongside %d writes", nReads, writes)
}
