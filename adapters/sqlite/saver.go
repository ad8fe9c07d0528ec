package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/checkpointkit/checkpointkit/spec"
)

// driverName is the database/sql driver registered by go-sqlite3.
const driverName = "sqlite3"

// Saver is a [spec.Saver] backed by SQLite. It also implements
// [spec.ThreadCopier], [spec.RunDeleter], [spec.Pruner],
// [spec.VersionGenerator] and [spec.DeltaHistoryReader]. It is safe for concurrent use. Create it with
// [Open] or [New].
type Saver struct {
	db       *sql.DB
	ownsDB   bool
	anchor   *sql.DB // keeps a shared-cache in-memory database alive
	serde    spec.Serde
	pageSize int

	busyTimeout time.Duration

	// writeSem serialises this saver's write transactions (and Setup), so
	// goroutines of one process queue here instead of spinning in SQLite's
	// busy handler.
	writeSem chan struct{}

	closeOnce sync.Once
	closeErr  error
}

var (
	_ io.Closer             = (*Saver)(nil)
	_ spec.Saver            = (*Saver)(nil)
	_ spec.ThreadCopier     = (*Saver)(nil)
	_ spec.RunDeleter       = (*Saver)(nil)
	_ spec.Pruner           = (*Saver)(nil)
	_ spec.VersionGenerator = (*Saver)(nil)
)

// newSaver returns a saver over db configured by o, without touching the
// database.
func newSaver(db *sql.DB, owns bool, o options) *Saver {
	return &Saver{
		db:          db,
		ownsDB:      owns,
		serde:       o.serde,
		pageSize:    o.pageSize,
		busyTimeout: o.busyTimeout,
		writeSem:    make(chan struct{}, 1),
	}
}

// Open opens the SQLite database named by target, creating the file if
// needed, and runs [Saver.Setup] on it, so the saver it returns is ready to
// use. target is a file path, a "file:" URI, or ":memory:"; go-sqlite3
// query parameters are honoured, and unless target sets them Open adds
// _busy_timeout (see [WithBusyTimeout]), _txlock=immediate,
// _stmt_cache_size=64, _mutex=no (SQLite's multi-thread mode: database/sql
// uses a connection from one goroutine at a time) and, for files,
// _journal_mode=WAL.
//
// ":memory:" opens a private in-memory database that lives until Close. An
// in-memory target (":memory:", "file::memory:", mode=memory) is used
// through a single connection, and so is a file opened in SQLite's
// exclusive locking mode (_locking_mode=EXCLUSIVE), whose connection keeps
// its file locks: other processes cannot use the file while the saver is
// open, and puts skip taking and releasing locks (see the package doc).
//
// The saver owns the database handle: [Saver.Close] closes it. An empty
// target, a malformed query string or parameter value in target, or an
// invalid option is an error wrapping [spec.ErrInvalidArgument]; no
// parameter is ever dropped silently.
func Open(ctx context.Context, target string, opts ...Option) (*Saver, error) {
	o, err := newOptions("open", opts)
	if err != nil {
		return nil, err
	}
	if target == "" {
		return nil, fmt.Errorf("sqlite: open: empty target: %w", spec.ErrInvalidArgument)
	}
	s := newSaver(nil, true, o)
	t, err := s.buildDSN(target)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w: %w", spec.ErrInvalidArgument, err)
	}
	db, err := sql.Open(driverName, t.dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	if t.memory || t.exclusive {
		// Every connection to a private in-memory database is a database
		// of its own, a shared-cache one reports table locks instead of
		// waiting, and in exclusive locking mode a connection never gives
		// its locks back: one connection, used in turn, avoids all three.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		if t.shared {
			// The database lives as long as one connection to it is open;
			// the anchor keeps it alive if the pool ever drops its own.
			anchor, err := sql.Open(driverName, t.dsn)
			if err == nil {
				anchor.SetMaxOpenConns(1)
				err = anchor.PingContext(ctx)
			}
			if err != nil {
				db.Close()
				if anchor != nil {
					anchor.Close()
				}
				return nil, wrapErr(ctx, "open", "", err)
			}
			s.anchor = anchor
		}
	} else {
		n := max(4, runtime.GOMAXPROCS(0))
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
	}
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	s.db = db
	if err := s.connect(ctx); err != nil {
		s.Close()
		var se sqlite3.Error
		if !errors.As(err, &se) && ctx.Err() == nil {
			// go-sqlite3 rejects a bad parameter value ("Invalid
			// _busy_timeout: ...") before it opens the file; everything
			// the database itself reports is a sqlite3.Error.
			return nil, fmt.Errorf("sqlite: open: %w: %w", spec.ErrInvalidArgument, err)
		}
		return nil, wrapErr(ctx, "open", "", err)
	}
	if err := s.Setup(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// connect opens the first connection of a new handle. Opening one runs
// the DSN's pragmas, and when several connections switch a new file to WAL
// at once SQLite refuses the losers' lock upgrade with SQLITE_BUSY at once,
// without consulting the busy handler (waiting could deadlock). connect
// retries that, with a short backoff, for up to the busy timeout.
func (s *Saver) connect(ctx context.Context) error {
	deadline := time.Now().Add(s.busyTimeout)
	delay := time.Millisecond
	for {
		err := s.db.PingContext(ctx)
		var se sqlite3.Error
		if err == nil || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// New returns a saver over db, after running [Saver.Setup] on it, so the
// saver is ready to use. db stays owned by the caller: [Saver.Close] does
// not close it. For a file database the caller's DSN should set
// _busy_timeout and _journal_mode=WAL; write transactions start with
// BEGIN IMMEDIATE whatever _txlock says. An in-memory database must be
// limited to one connection (db.SetMaxOpenConns(1)), or every connection
// sees a database of its own. A nil db or an invalid option is an error
// wrapping [spec.ErrInvalidArgument].
func New(ctx context.Context, db *sql.DB, opts ...Option) (*Saver, error) {
	o, err := newOptions("new", opts)
	if err != nil {
		return nil, err
	}
	if db == nil {
		return nil, fmt.Errorf("sqlite: new: nil *sql.DB: %w", spec.ErrInvalidArgument)
	}
	s := newSaver(db, false, o)
	if err := s.Setup(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Setup creates the saver's tables and indexes, or migrates them to
// [SchemaVersion]; [Open] and [New] have already run it, so call it again
// only if something else may have dropped the schema. It is idempotent
// and safe to call concurrently, from one process or several: it applies
// the missing migrations in one BEGIN IMMEDIATE transaction, which
// serialises it with every other writer. A database migrated by a newer
// version of this package is refused with an error wrapping
// [spec.ErrInvalidConfig].
func (s *Saver) Setup(ctx context.Context) error {
	if err := s.writeTurn(ctx, "setup", ""); err != nil {
		return err
	}
	defer s.endTurn()
	return migrate(ctx, s.db, -1)
}

// DB returns the database handle the saver uses.
func (s *Saver) DB() *sql.DB { return s.db }

// Close closes the database handle if [Open] opened it; a handle passed to
// [New] stays open, owned by the caller. Close is idempotent: later calls
// return the first call's result. The saver must not be used afterwards.
func (s *Saver) Close() error {
	s.closeOnce.Do(func() {
		if s.ownsDB && s.db != nil {
			s.closeErr = s.db.Close()
		}
		if s.anchor != nil {
			s.closeErr = errors.Join(s.closeErr, s.anchor.Close())
		}
	})
	return s.closeErr
}

// openTarget is an Open target with the saver's defaults added, and what
// it asks of the connection pool.
type openTarget struct {
	dsn    string
	memory bool // an in-memory database
	shared bool // in memory, with a shared cache
	// exclusive is SQLite's exclusive locking mode (_locking_mode or
	// _locking=EXCLUSIVE): a connection keeps the file locks it takes, so
	// a second connection of the pool would wait for them until its busy
	// timeout and fail with "database is locked".
	exclusive bool
}

// buildDSN adds the saver's defaults to dsn. A query string that does not
// parse is an error: go-sqlite3 would refuse it too, and dropping it would
// drop every parameter the caller set.
func (s *Saver) buildDSN(dsn string) (openTarget, error) {
	base, rawQuery, _ := strings.Cut(dsn, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return openTarget{}, fmt.Errorf("query string of %q: %w", dsn, err)
	}
	// go-sqlite3 reads _locking when both are set.
	locking := q.Get("_locking_mode")
	if q.Has("_locking") {
		locking = q.Get("_locking")
	}
	if base == ":memory:" {
		// A unique shared-cache name: private to this saver, yet reachable
		// by the anchor connection.
		var b [8]byte
		_, _ = rand.Read(b[:])
		base = "file:checkpointkit-" + hex.EncodeToString(b[:])
		q.Set("mode", "memory")
		q.Set("cache", "shared")
	}
	t := openTarget{exclusive: strings.EqualFold(locking, "exclusive")}
	t.memory = strings.HasPrefix(base, "file::memory:") || base == ":memory:" || q.Get("mode") == "memory"
	t.shared = t.memory && q.Get("cache") == "shared"
	if !q.Has("_busy_timeout") && !q.Has("_timeout") {
		q.Set("_busy_timeout", fmt.Sprint(s.busyTimeout.Milliseconds()))
	}
	if !q.Has("_stmt_cache_size") {
		// go-sqlite3 prepares every statement afresh unless asked to cache;
		// the saver runs a small fixed set of statements.
		q.Set("_stmt_cache_size", "64")
	}
	if !q.Has("_txlock") {
		q.Set("_txlock", "immediate")
	}
	if !q.Has("_mutex") {
		// SQLite's multi-thread mode: no mutex around every call into a
		// connection (a tenth of a GetTuple's instructions). database/sql
		// gives a connection to one goroutine at a time, which is all
		// that mode asks.
		q.Set("_mutex", "no")
	}
	if !t.memory && !q.Has("_journal_mode") && !q.Has("_journal") {
		q.Set("_journal_mode", "WAL")
	}
	t.dsn = base + "?" + q.Encode()
	return t, nil
}

// NextVersion returns [spec.NextVersion] of current.
func (s *Saver) NextVersion(current spec.Version) spec.Version {
	return spec.NextVersion(current)
}

// querier is what the statements of one transaction run on.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// write runs fn in a write transaction (BEGIN IMMEDIATE) on one connection,
// after waiting for this saver's other writers.
func (s *Saver) write(ctx context.Context, op, thread string, fn func(q querier) error) error {
	return s.withConn(ctx, op, thread, true, func(conn *sql.Conn) error {
		return inTx(ctx, conn, "BEGIN IMMEDIATE", func() error { return fn(conn) })
	})
}

// writeTurn waits until this saver's other writers are done (see
// writeSem) and takes the turn, which the caller gives back with endTurn;
// it fails, without the turn, when ctx is done first.
func (s *Saver) writeTurn(ctx context.Context, op, thread string) error {
	if err := ctx.Err(); err != nil {
		return wrapErr(ctx, op, thread, err)
	}
	select {
	case s.writeSem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return wrapErr(ctx, op, thread, ctx.Err())
	}
}

// endTurn gives back the turn writeTurn took.
func (s *Saver) endTurn() { <-s.writeSem }

// withConn runs fn on one connection of the pool, as a writer (after
// writeTurn) when writer is set, and adds op and thread to its error.
func (s *Saver) withConn(ctx context.Context, op, thread string, writer bool, fn func(conn *sql.Conn) error) error {
	if writer {
		if err := s.writeTurn(ctx, op, thread); err != nil {
			return err
		}
		defer s.endTurn()
	} else if err := ctx.Err(); err != nil {
		return wrapErr(ctx, op, thread, err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return wrapErr(ctx, op, thread, err)
	}
	defer conn.Close()
	return wrapErr(ctx, op, thread, fn(conn))
}

// inTx runs fn between begin and COMMIT on conn, rolling back when fn fails
// or ctx is done. The commit itself is not interrupted by ctx: once every
// statement has run, the transaction lands whole. If the connection cannot
// be brought back out of the transaction it is discarded rather than
// returned to the pool.
func inTx(ctx context.Context, conn *sql.Conn, begin string, fn func() error) error {
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return err
	}
	err := fn()
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		if _, err = conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err == nil {
			return nil
		}
	}
	if _, rbErr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil {
		_ = conn.Raw(func(dc any) error {
			if c, ok := dc.(*sqlite3.SQLiteConn); ok && !c.AutoCommit() {
				return driver.ErrBadConn // still inside a transaction: drop it
			}
			return nil
		})
	}
	return err
}

// wrapErr adds the operation and thread to err. When ctx is done the result
// also matches ctx.Err() under errors.Is, whatever the driver returned.
func wrapErr(ctx context.Context, op, thread string, err error) error {
	if err == nil {
		return nil
	}
	prefix := "sqlite: " + op
	if thread != "" {
		prefix += fmt.Sprintf(" thread %q", thread)
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%s: %w (%w)", prefix, ctxErr, err)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}
