package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestConcurrentWritersOneFile runs many goroutines writing through two
// savers on one file (two connection pools, as two processes would): no
// "database is locked", nothing lost.
func TestConcurrentWritersOneFile(t *testing.T) {
	a, path := openFile(t)
	b, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const goroutines, perG = 16, 20
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		s := a
		if g%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			thread := fmt.Sprintf("t%d", g%4) // shared threads
			for i := range perG {
				id := fmt.Sprintf("%03d-%02d", i, g)
				cp := spec.Checkpoint{ID: id, ChannelValues: map[string]any{"g": int64(g)},
					ChannelVersions: spec.Versions{"g": spec.Version(id)}}
				if _, err := s.Put(ctx, spec.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions); err != nil {
					errs <- err
					return
				}
				if err := s.PutWrites(ctx, spec.Config{ThreadID: thread, CheckpointID: id},
					[]spec.Write{{Channel: "w", Value: int64(i)}}, "task", ""); err != nil {
					errs <- err
					return
				}
				if _, err := s.GetTuple(ctx, spec.Config{ThreadID: thread}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := 0
	for tup, err := range a.List(ctx, spec.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(tup.PendingWrites) != 1 || tup.Checkpoint.ChannelValues["g"] == nil {
			t.Errorf("incomplete tuple %s: %#v", tup.Config.CheckpointID, tup)
		}
		total++
	}
	if total != goroutines*perG {
		t.Errorf("stored %d checkpoints, want %d", total, goroutines*perG)
	}
}

// TestContextCancellation checks errors.Is(err, ctx.Err()) and that nothing
// partial is stored.
func TestContextCancellation(t *testing.T) {
	s, _ := openFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cp, vs := checkpoint("1", map[string]any{"a": int64(1)})
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, vs); !errors.Is(err, context.Canceled) {
		t.Errorf("Put: %v", err)
	}
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, []spec.Write{{Channel: "a"}}, "x", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("PutWrites: %v", err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); !errors.Is(err, context.Canceled) {
		t.Errorf("GetTuple: %v", err)
	}
	for _, err := range s.List(ctx, spec.ListOptions{}) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("List: %v", err)
		}
	}
	for name, f := range map[string]func() error{
		"DeleteThread":  func() error { return s.DeleteThread(ctx, "t") },
		"CopyThread":    func() error { return s.CopyThread(ctx, "t", "u") },
		"DeleteForRuns": func() error { return s.DeleteForRuns(ctx, []string{"r"}) },
		"Prune":         func() error { return s.Prune(ctx, []string{"t"}, spec.KeepLatest) },
	} {
		if err := f(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, table := range []string{"checkpoints", "blobs", "writes"} {
		if n := count(t, s, "SELECT count(*) FROM "+table); n != 0 {
			t.Errorf("%s has %d rows", table, n)
		}
	}

	// Cancellation while queued behind another writer of the same saver.
	s.writeSem <- struct{}{} // another writer holds the turn
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.Put(ctx2, spec.Config{ThreadID: "t"}, cp, nil, vs)
		done <- err
	}()
	cancel2()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("queued Put: %v", err)
	}
	<-s.writeSem
	if n := count(t, s, "SELECT count(*) FROM checkpoints"); n != 0 {
		t.Errorf("queued Put stored %d checkpoints", n)
	}
}

// TestErrorsWrapDriverErrors checks that a backend failure names the
// operation and thread and keeps the driver's error reachable.
func TestErrorsWrapDriverErrors(t *testing.T) {
	s := openMemory(t)
	if _, err := s.db.Exec(`DROP TABLE blobs`); err != nil {
		t.Fatal(err)
	}
	cp, vs := checkpoint("1", map[string]any{"a": int64(1)})
	_, err := s.Put(context.Background(), spec.Config{ThreadID: "thread-x"}, cp, nil, vs)
	var se sqlite3.Error
	if !errors.As(err, &se) {
		t.Fatalf("Put error %v (%T) does not wrap a go-sqlite3 error", err, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "put") || !strings.Contains(msg, `"thread-x"`) {
		t.Errorf("error %q does not name the operation and thread", msg)
	}
	if n := count(t, s, `SELECT count(*) FROM checkpoints`); n != 0 {
		t.Errorf("failed Put left %d checkpoints", n)
	}
	if _, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "thread-x"}); !errors.Is(err, spec.ErrNotFound) {
		t.Errorf("GetTuple after failed Put: %v", err)
	}
}

// TestReadersNeverSeeHalfACheckpoint puts checkpoints into one thread while
// readers fetch the latest: every tuple a reader sees has all its values and
// its writes (each Put and PutWrites is one transaction, each read one
// snapshot). Runs on a file and in memory.
func TestReadersNeverSeeHalfACheckpoint(t *testing.T) {
	file, _ := openFile(t)
	for name, s := range map[string]*Saver{"file": file, "memory": openMemory(t)} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer cancel() // stop the readers when done
				cfg := spec.Config{ThreadID: "t"}
				for i := range 100 {
					id := fmt.Sprintf("%04d", i)
					v := spec.Version(id)
					cp := spec.Checkpoint{ID: id, ChannelValues: map[string]any{"a": int64(i), "b": id, "c": []any{id}},
						ChannelVersions: spec.Versions{"a": v, "b": v, "c": v}}
					next, err := s.Put(context.Background(), cfg, cp, nil, cp.ChannelVersions)
					if err != nil {
						errs <- err
						return
					}
					cfg = next
				}
			}()
			for range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
						if errors.Is(err, spec.ErrNotFound) || errors.Is(err, context.Canceled) {
							continue
						}
						if err != nil {
							errs <- err
							return
						}
						if len(tup.Checkpoint.ChannelValues) != 3 {
							errs <- fmt.Errorf("checkpoint %s seen with values %v", tup.Config.CheckpointID, tup.Checkpoint.ChannelValues)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
