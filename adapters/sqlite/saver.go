package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
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
// [spec.ThreadCopier], [spec.RunDeleter], [spec.Pruner] and
// [spec.VersionGenerator]. It is safe for concurrent use.
type Saver struct {
	db       *sql.DB
	ownsDB   bool
	anchor   *sql.DB // keeps a shared-cache in-memory database alive
	serde    spec.Serde
	pageSize int

	busyTimeout time.Duration

	// writeSem serialises this saver's write transactions, so goroutines of
	// one process queue here instead of spinning in SQLite's busy handler.
	writeSem chan struct{}

	closeOnce sync.Once
	closeErr  error
}

var (
	_ spec.Saver            = (*Saver)(nil)
	_ spec.ThreadCopier     = (*Saver)(nil)
	_ spec.RunDeleter       = (*Saver)(nil)
	_ spec.Pruner           = (*Saver)(nil)
	_ spec.VersionGenerator = (*Saver)(nil)
)

// Option configures a [Saver].
type Option func(*Saver)

// WithSerde sets the serde that encodes channel values and write values.
// The default is [spec.DefaultSerde]. A database must be
// read with the serde it was written with.
func WithSerde(s spec.Serde) Option {
	return func(sv *Saver) {
		if s != nil {
			sv.serde = s
		}
	}
}

// WithBusyTimeout sets how long [Open] lets a connection wait for a lock
// held by another process before failing with "database is locked"
// (default 5s). It is ignored by [New] and when the DSN sets _busy_timeout.
func WithBusyTimeout(d time.Duration) Option {
	return func(sv *Saver) {
		if d >= 0 {
			sv.busyTimeout = d
		}
	}
}

// WithListPageSize sets how many checkpoints List reads per query (default
// 64). Smaller pages hold less in memory; larger ones make fewer queries.
func WithListPageSize(n int) Option {
	return func(sv *Saver) {
		if n > 0 {
			sv.pageSize = n
		}
	}
}

func newSaver(db *sql.DB, owns bool, opts []Option) *Saver {
	s := &Saver{
		db:          db,
		ownsDB:      owns,
		serde:       spec.DefaultSerde(),
		pageSize:    64,
		busyTimeout: 5 * time.Second,
		writeSem:    make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Open opens (creating it if needed) the SQLite database named by dsn and
// migrates its schema. dsn is a file path, a "file:" URI, or ":memory:".
// go-sqlite3 query parameters are honoured; unless the DSN sets them, Open
// adds _busy_timeout (see [WithBusyTimeout]), _txlock=immediate,
// _stmt_cache_size=64 and, for files, _journal_mode=WAL.
//
// ":memory:" opens a private in-memory database that lives until Close. An
// in-memory DSN (":memory:", "file::memory:", mode=memory) is used through a
// single connection.
func Open(ctx context.Context, dsn string, opts ...Option) (*Saver, error) {
	if dsn == "" {
		return nil, fmt.Errorf("sqlite: open: empty DSN: %w", spec.ErrInvalidArgument)
	}
	s := newSaver(nil, true, opts)
	full, memory, shared := s.buildDSN(dsn)
	db, err := sql.Open(driverName, full)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	if memory {
		// Every connection to a private in-memory database is a database
		// of its own, and a shared-cache one reports table locks instead of
		// waiting: one connection, used in turn, avoids both.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		if shared {
			// The database lives as long as one connection to it is open;
			// the anchor keeps it alive if the pool ever drops its own.
			anchor, err := sql.Open(driverName, full)
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
	if err := migrate(ctx, db, -1); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// New returns a saver over a database handle owned by the caller, after
// migrating its schema (under context.Background; [NewContext] takes a
// context). Close does not close db. For a file database the caller's DSN
// should set _busy_timeout and _journal_mode=WAL; write transactions start
// with BEGIN IMMEDIATE whatever _txlock says. An in-memory database must be
// limited to one connection (db.SetMaxOpenConns(1)), or every connection
// sees a database of its own.
func New(db *sql.DB, opts ...Option) (*Saver, error) {
	return NewContext(context.Background(), db, opts...)
}

// NewContext is [New] with a context for the schema migration.
func NewContext(ctx context.Context, db *sql.DB, opts ...Option) (*Saver, error) {
	if db == nil {
		return nil, fmt.Errorf("sqlite: new: nil *sql.DB: %w", spec.ErrInvalidArgument)
	}
	s := newSaver(db, false, opts)
	if err := migrate(ctx, db, -1); err != nil {
		return nil, err
	}
	return s, nil
}

// DB returns the database handle the saver uses.
func (s *Saver) DB() *sql.DB { return s.db }

// Close releases the database if Open created it. It is safe to call more
// than once; the saver must not be used afterwards.
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

// buildDSN adds the saver's defaults to dsn and reports whether it names an
// in-memory database, and whether that one uses a shared cache.
func (s *Saver) buildDSN(dsn string) (full string, memory, shared bool) {
	base, rawQuery, _ := strings.Cut(dsn, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		q = url.Values{}
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
	memory = strings.HasPrefix(base, "file::memory:") || base == ":memory:" || q.Get("mode") == "memory"
	shared = memory && q.Get("cache") == "shared"
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
	if !memory && !q.Has("_journal_mode") && !q.Has("_journal") {
		q.Set("_journal_mode", "WAL")
	}
	return base + "?" + q.Encode(), memory, shared
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
	if err := ctx.Err(); err != nil {
		return wrapErr(ctx, op, thread, err)
	}
	select {
	case s.writeSem <- struct{}{}:
	case <-ctx.Done():
		return wrapErr(ctx, op, thread, ctx.Err())
	}
	defer func() { <-s.writeSem }()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return wrapErr(ctx, op, thread, err)
	}
	defer conn.Close()
	return wrapErr(ctx, op, thread, inTx(ctx, conn, "BEGIN IMMEDIATE", func() error { return fn(conn) }))
}

// read runs fn in a read transaction on one connection, so that everything
// fn reads comes from one snapshot of the database.
func (s *Saver) read(ctx context.Context, op, thread string, fn func(q querier) error) error {
	if err := ctx.Err(); err != nil {
		return wrapErr(ctx, op, thread, err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return wrapErr(ctx, op, thread, err)
	}
	defer conn.Close()
	return wrapErr(ctx, op, thread, inTx(ctx, conn, "BEGIN", func() error { return fn(conn) }))
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
