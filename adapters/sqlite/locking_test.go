package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestExclusiveLockingMode checks that a target asking for SQLite's
// exclusive locking mode gets a pool of one connection, and that readers
// and a writer sharing the saver all succeed. With the usual pool, the
// connection that wrote first keeps its locks and every other connection
// fails with "database is locked" once its busy timeout runs out.
func TestExclusiveLockingMode(t *testing.T) {
	for _, tc := range []struct {
		query  string
		single bool // a pool of one connection
	}{
		{query: "_locking_mode=EXCLUSIVE", single: true},
		{query: "_locking=exclusive", single: true},
		// go-sqlite3 reads _locking when both are given.
		{query: "_locking_mode=NORMAL&_locking=Exclusive", single: true},
		{query: "_locking_mode=EXCLUSIVE&_locking=NORMAL"},
		{query: "_locking_mode=NORMAL"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			ctx := context.Background()
			target := filepath.Join(t.TempDir(), "exclusive.db") + "?" + tc.query
			s, err := Open(ctx, target, WithBusyTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := s.db.Stats().MaxOpenConnections
			if tc.single != (got == 1) {
				t.Fatalf("pool of %d connections, want one only for exclusive locking", got)
			}

			p := benchmarks.NewPeer(s, "t")
			if err := p.Put(ctx); err != nil {
				t.Fatal(err)
			}
			const puts = 40
			var wg sync.WaitGroup
			errs := make(chan error, 5)
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range puts {
						if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err != nil {
							errs <- fmt.Errorf("GetTuple: %w", err)
							return
						}
						for _, err := range s.List(ctx, spec.ListOptions{ThreadID: "t", Limit: 3}) {
							if err != nil {
								errs <- fmt.Errorf("List: %w", err)
								return
							}
						}
					}
				}()
			}
			for range puts {
				if err := p.Put(ctx); err != nil {
					errs <- fmt.Errorf("Put: %w", err)
					break
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if t.Failed() {
				return
			}
			tup, err := p.Get(ctx) // the last Put's checkpoint, or an error
			if err != nil {
				t.Fatal(err)
			}
			if len(tup.PendingWrites) != 2 {
				t.Fatalf("latest has %d writes, want the 2 of its PutWrites", len(tup.PendingWrites))
			}
		})
	}
}

// TestBadLockingMode checks that a locking mode SQLite does not know is
// refused as an invalid argument.
func TestBadLockingMode(t *testing.T) {
	_, err := Open(context.Background(), filepath.Join(t.TempDir(), "bad.db")+"?_locking_mode=sometimes")
	if !errors.Is(err, spec.ErrInvalidArgument) {
		t.Fatalf("Open: %v, want an error wrapping spec.ErrInvalidArgument", err)
	}
}
