package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestInvalidArguments checks that Open and New reject bad options and
// targets with ErrInvalidArgument before touching anything.
func TestInvalidArguments(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "never.db")
	db := rawDB(t, path)
	for name, opt := range map[string]Option{
		"nil serde":        WithSerde(nil),
		"zero page size":   WithListPageSize(0),
		"negative timeout": WithBusyTimeout(-time.Second),
		"nil option":       nil,
	} {
		if s, err := Open(ctx, path, opt); !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("Open with %s: %v, want ErrInvalidArgument", name, err)
			if s != nil {
				s.Close()
			}
		}
		if _, err := New(ctx, db, opt); !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("New with %s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := Open(ctx, ""); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("Open with an empty target: %v", err)
	}
	if _, err := New(ctx, nil); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("New with a nil handle: %v", err)
	}
	if v, err := appliedVersion(ctx, db); err != nil || v != 0 {
		t.Errorf("rejected constructors migrated the database to version %d (%v)", v, err)
	}
}

// TestOpenAndNewAreReady checks that a saver from Open or New works without
// a Setup call, and that New's Setup migrated the caller's handle.
func TestOpenAndNewAreReady(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ready.db")
	db := rawDB(t, path)
	s, err := New(ctx, db, WithListPageSize(1))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := appliedVersion(ctx, db); err != nil || v != SchemaVersion() {
		t.Fatalf("after New: version %d, %v; want %d", v, err, SchemaVersion())
	}
	cp, vs := checkpoint("1", map[string]any{"x": "y"})
	mustPut(t, s, spec.Config{ThreadID: "t"}, cp, nil, vs)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	o, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := mustGet(t, o, spec.Config{ThreadID: "t"}); got.Checkpoint.ChannelValues["x"] != "y" {
		t.Errorf("Open of New's database: %#v", got)
	}
}

// TestSetupConcurrent runs Setup at once from several goroutines over a
// database no migration has run on, first on one saver, then on savers
// with handles of their own: every call succeeds and each migration is
// applied once. The first saver's handle has no busy timeout, so its
// calls succeed only because Setup queues behind the saver's other
// writers; the others wait on SQLite's lock (busy timeout).
func TestSetupConcurrent(t *testing.T) {
	ctx := context.Background()
	noWait := defaultOptions()
	noWait.busyTimeout = 0
	target, _ := newSaver(nil, false, noWait).buildDSN(filepath.Join(t.TempDir(), "one.db"))
	db, err := sql.Open(driverName, target.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	one := newSaver(db, false, noWait) // not set up yet

	path := filepath.Join(t.TempDir(), "many.db")
	var many []*Saver
	for range 4 {
		many = append(many, newSaver(rawDB(t, path), false, defaultOptions()))
	}
	for _, savers := range [][]*Saver{{one, one, one, one, one, one}, many} {
		var wg sync.WaitGroup
		errs := make([]error, len(savers))
		for i, s := range savers {
			wg.Go(func() { errs[i] = s.Setup(ctx) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Setup %d: %v", i, err)
			}
		}
		if n := count(t, savers[0], `SELECT count(*) FROM `+migrationsTable); n != SchemaVersion() {
			t.Errorf("%d migration rows, want %d", n, SchemaVersion())
		}
	}

	// Idempotent, also alongside writes.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			if errs[i] = one.Setup(ctx); errs[i] == nil {
				cp, vs := checkpoint(fmt.Sprint(i), nil)
				_, errs[i] = one.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, vs)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Errorf("Setup alongside Put: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := one.Setup(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Setup with a cancelled context: %v", err)
	}
}

// TestCloseOwnership checks that Close is idempotent, closes what Open
// opened and leaves New's handle to its caller.
func TestCloseOwnership(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "close.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var c io.Closer = s
	for range 2 {
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if err := s.DB().PingContext(ctx); err == nil {
		t.Error("Close left the handle Open opened open")
	}
	db := rawDB(t, path)
	n, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := n.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("Close closed the caller's handle: %v", err)
	}
}
