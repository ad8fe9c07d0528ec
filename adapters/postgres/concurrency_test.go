package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestConcurrentPuts(t *testing.T) {
	s := newTestSaver(t)
	ctx := context.Background()
	const workers, each = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*2)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				// Half the workers share a thread; the same checkpoint is
				// put by two of them with the same channel versions.
				th := fmt.Sprintf("own-%d", w)
				if w%2 == 0 {
					th = "shared"
				}
				id := fmt.Sprintf("%04d", i)
				cp := spec.Checkpoint{ID: id, ChannelValues: map[string]any{"a": int64(i), "b": int64(w)},
					ChannelVersions: spec.Versions{"a": spec.Version(id), "b": spec.Version(id)}}
				if _, err := s.Put(ctx, spec.Config{ThreadID: th}, cp, nil, spec.Versions{"b": spec.Version(id), "a": spec.Version(id)}); err != nil {
					errs <- err
				}
				if err := s.PutWrites(ctx, spec.Config{ThreadID: th, CheckpointID: id},
					[]spec.Write{{Channel: "x", Value: int64(w)}, {Channel: spec.ErrorChannel, Value: int64(w)}}, "task", ""); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all := listAll(t, s, spec.ListOptions{AllNamespaces: true})
	if want := (workers/2)*each + each; len(all) != want {
		t.Fatalf("%d checkpoints, want %d", len(all), want)
	}
	for _, tup := range all {
		if len(tup.Checkpoint.ChannelValues) != 2 || len(tup.PendingWrites) != 2 {
			t.Errorf("%v: values %v writes %v", tup.Config, tup.Checkpoint.ChannelValues, tup.PendingWrites)
		}
	}
}

func TestContextCancellation(t *testing.T) {
	s := newTestSaver(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1"}, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("put: %v", err)
	}
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, []spec.Write{{Channel: "c"}}, "x", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("put writes: %v", err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); !errors.Is(err, context.Canceled) {
		t.Errorf("get: %v", err)
	}
	for _, err := range s.List(ctx, spec.ListOptions{}) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("list: %v", err)
		}
	}
	for name, f := range map[string]func() error{
		"delete thread":   func() error { return s.DeleteThread(ctx, "t") },
		"copy thread":     func() error { return s.CopyThread(ctx, "t", "u") },
		"delete for runs": func() error { return s.DeleteForRuns(ctx, []string{"r"}) },
		"prune":           func() error { return s.Prune(ctx, []string{"t"}, spec.KeepLatest) },
		"setup":           func() error { return s.Setup(ctx) },
	} {
		if err := f(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := listAll(t, s, spec.ListOptions{AllNamespaces: true}); len(got) != 0 {
		t.Errorf("stored after cancel: %v", ids(got))
	}

	// Cancelled while the server works: pg_sleep holds the statement.
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.pool.Exec(ctx2, "SELECT pg_sleep(30)")
		done <- wrapErr(ctx2, "sleep", "t", err)
	}()
	cancel2()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("in-flight cancel: %v", err)
	}
}

// TestCancelledPutStoresNothing blocks a Put on a row lock held by another
// transaction until its context expires: the server must abort the
// statement (values included), not commit it once the lock is released.
// (pgx's default handler passes this too, usually: it sends the cancel
// request in the background; ConfigurePool makes the Put wait for it.)
func TestCancelledPutStoresNothing(t *testing.T) {
	s := newTestSaver(t)
	ctx := context.Background()
	mustPut(t, s, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1"}, spec.Metadata{"gen": int64(1)}, nil)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+s.q.checkpoints+" WHERE thread_id = 't' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	cp := spec.Checkpoint{ID: "1", ChannelValues: map[string]any{"x": "new"}, ChannelVersions: spec.Versions{"x": "9"}}
	_, err = s.Put(short, spec.Config{ThreadID: "t"}, cp, spec.Metadata{"gen": int64(2)}, spec.Versions{"x": "9"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("blocked put: err = %v, want DeadlineExceeded", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if tup.Metadata["gen"] != int64(1) {
		t.Errorf("the cancelled Put landed: metadata %v", tup.Metadata)
	}
	var blobs int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.q.blobs).Scan(&blobs); err != nil {
		t.Fatal(err)
	}
	if blobs != 0 {
		t.Errorf("%d values stored by the cancelled Put", blobs)
	}
}
