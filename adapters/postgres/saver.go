package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DefaultSchema is the schema the saver's tables live in unless
// [WithSchema] names another.
const DefaultSchema = "checkpointkit"

// defaultPageSize is how many checkpoints one List round trip fetches.
const defaultPageSize = 100

// Saver is a [spec.Saver] backed by PostgreSQL. It also implements
// [spec.ThreadCopier], [spec.RunDeleter], [spec.Pruner] and
// [spec.VersionGenerator]. It is safe for concurrent use.
type Saver struct {
	pool     *pgxpool.Pool
	ownsPool bool
	schema   string
	serde    spec.Serde
	execMode pgx.QueryExecMode
	setMode  bool
	pageSize int
	q        queries
}

var (
	_ spec.Saver            = (*Saver)(nil)
	_ spec.ThreadCopier     = (*Saver)(nil)
	_ spec.RunDeleter       = (*Saver)(nil)
	_ spec.Pruner           = (*Saver)(nil)
	_ spec.VersionGenerator = (*Saver)(nil)
)

// Option configures a [Saver].
type Option func(*Saver) error

// WithSchema puts the saver's tables in the named schema instead of
// [DefaultSchema]. Every statement names its tables fully qualified and
// quoted, so the saver never depends on search_path, and two savers with
// different schemas share a database without seeing each other's data.
// [Saver.Setup] creates the schema if needed.
func WithSchema(name string) Option {
	return func(s *Saver) error {
		if name == "" {
			return fmt.Errorf("postgres: empty schema name: %w", spec.ErrInvalidArgument)
		}
		if err := checkText("schema name", name); err != nil {
			return err
		}
		// PostgreSQL truncates longer identifiers, so two long names could
		// silently share a schema.
		if len(name) > 63 {
			return fmt.Errorf("postgres: schema name %q is longer than 63 bytes: %w", name, spec.ErrInvalidArgument)
		}
		s.schema = name
		return nil
	}
}

// WithQueryExecMode runs every statement of the saver in the given pgx
// query mode, overriding the pool's default. See [WithoutPreparedStatements]
// for the usual reason to change it.
func WithQueryExecMode(mode pgx.QueryExecMode) Option {
	return func(s *Saver) error {
		s.execMode = mode
		s.setMode = true
		return nil
	}
}

// WithoutPreparedStatements makes the saver use no server-side prepared
// statements (pgx.QueryExecModeExec: one unnamed statement per query, in a
// single round trip). Use it behind a PgBouncer-style pooler in transaction
// mode, where consecutive statements may land on different server sessions.
// The saver keeps no other session state: every operation is one statement
// or one transaction.
func WithoutPreparedStatements() Option {
	return WithQueryExecMode(pgx.QueryExecModeExec)
}

// WithSerde replaces [spec.DefaultSerde] for channel values, pending writes
// and the exact copy of metadata. The serde must be type-preserving, and
// every saver sharing a schema must use the same one.
func WithSerde(serde spec.Serde) Option {
	return func(s *Saver) error {
		if serde == nil {
			return fmt.Errorf("postgres: nil serde: %w", spec.ErrInvalidArgument)
		}
		s.serde = serde
		return nil
	}
}

// WithListPageSize sets the most checkpoints List fetches per round trip
// (default 100; the first pages of an unlimited List are smaller). Larger
// pages mean fewer round trips and more memory held per page.
func WithListPageSize(n int) Option {
	return func(s *Saver) error {
		if n <= 0 {
			return fmt.Errorf("postgres: list page size %d: %w", n, spec.ErrInvalidArgument)
		}
		s.pageSize = n
		return nil
	}
}

// New returns a saver that uses a caller-owned pool; [Saver.Close] leaves
// that pool open. New does not touch the database: call [Saver.Setup] once
// (at deploy or start-up) to create or migrate the tables.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Saver, error) {
	if pool == nil {
		return nil, fmt.Errorf("postgres: nil pool: %w", spec.ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Saver{pool: pool, schema: DefaultSchema, serde: spec.DefaultSerde(), pageSize: defaultPageSize}
	for _, opt := range opts {
		if err := opt(s); err != nil {
			return nil, err
		}
	}
	s.q = buildQueries(pgx.Identifier{s.schema}.Sanitize())
	return s, nil
}

// Open connects a new pool to dsn (a URL or keyword/value connection string
// accepted by pgxpool.ParseConfig), configured by [ConfigurePool], and
// returns a saver that owns it: [Saver.Close] closes the pool. Like [New],
// it does not run migrations.
func Open(ctx context.Context, dsn string, opts ...Option) (*Saver, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse dsn: %w", err)
	}
	ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, wrapErr(ctx, "open", "", err)
	}
	s, err := New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownsPool = true
	return s, nil
}

// ConfigurePool adjusts a pool configuration the way [Open] does: when a
// context is cancelled mid-statement, pgx sends the server a cancel request
// and waits (up to a second) for the server to abort the statement before
// returning. pgx's default closes the connection at once and sends the
// cancel request in the background, so a statement blocked on a lock could
// still commit after its caller has been told it failed. Call it on the
// configuration of pools you pass to [New].
func ConfigurePool(cfg *pgxpool.Config) {
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
	}
}

// Close releases the pool if [Open] created it; a pool passed to [New] stays
// open. Close is idempotent.
func (s *Saver) Close() {
	if s.ownsPool {
		s.pool.Close()
	}
}

// Schema returns the schema the saver's tables live in.
func (s *Saver) Schema() string { return s.schema }

// NextVersion implements [spec.VersionGenerator] with [spec.NextVersion]:
// a zero-padded counter and a random fraction, so forks never collide.
func (s *Saver) NextVersion(current spec.Version) spec.Version {
	return spec.NextVersion(current)
}

// args prepends the configured query mode, if any, to a statement's
// arguments (pgx reads a leading QueryExecMode as an option).
func (s *Saver) args(args ...any) []any {
	if !s.setMode {
		return args
	}
	return append([]any{s.execMode}, args...)
}

// wrapErr adds the operation and thread to a backend error. When the
// context is done, the result also wraps ctx.Err(), whatever form the
// driver gave the cancellation, so errors.Is(err, ctx.Err()) holds.
func wrapErr(ctx context.Context, op, thread string, err error) error {
	if err == nil {
		return nil
	}
	where := "postgres: " + op
	if thread != "" {
		where += fmt.Sprintf(" (thread %q)", thread)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
		where += " (tables missing: has Setup been run for this schema?)"
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%s: %w: %w", where, ctxErr, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// retryable reports whether a statement failed on a transient conflict
// (serialization failure or deadlock) and may simply be run again.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// execRetry runs one statement, retrying a few times on transient
// conflicts. Each statement is atomic, so a retry never doubles anything.
func (s *Saver) execRetry(ctx context.Context, sql string, args ...any) error {
	var err error
	for range 3 {
		_, err = s.pool.Exec(ctx, sql, s.args(args...)...)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}
