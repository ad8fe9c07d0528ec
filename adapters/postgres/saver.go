package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Saver is a [spec.Saver] backed by PostgreSQL. It also implements
// [spec.ThreadCopier], [spec.RunDeleter], [spec.Pruner] and
// [spec.VersionGenerator]. It is safe for concurrent use. Create it with
// [Open] or [New].
type Saver struct {
	pool     *pgxpool.Pool
	ownsPool bool
	schema   string
	serde    spec.Serde
	execMode pgx.QueryExecMode
	setMode  bool
	pageSize int
	q        queries
	pageSQLs pageSQLCache

	closeOnce sync.Once
}

var (
	_ io.Closer             = (*Saver)(nil)
	_ spec.Saver            = (*Saver)(nil)
	_ spec.ThreadCopier     = (*Saver)(nil)
	_ spec.RunDeleter       = (*Saver)(nil)
	_ spec.Pruner           = (*Saver)(nil)
	_ spec.VersionGenerator = (*Saver)(nil)
)

// newSaver returns a saver over pool configured by o, without touching
// the database.
func newSaver(pool *pgxpool.Pool, o options) *Saver {
	return &Saver{
		pool: pool, schema: o.schema, serde: o.serde, execMode: o.execMode, setMode: o.setMode,
		pageSize: o.pageSize, q: buildQueries(pgx.Identifier{o.schema}.Sanitize()),
	}
}

// Open connects a new pool to target, a DSN (a URL or keyword/value
// connection string accepted by pgxpool.ParseConfig), configured by
// [ConfigurePool], and runs [Saver.Setup], so the saver it returns is
// ready to use. The saver owns the pool: [Saver.Close] closes it. An empty
// or malformed target, or an invalid option, is an error wrapping
// [spec.ErrInvalidArgument].
func Open(ctx context.Context, target string, opts ...Option) (*Saver, error) {
	o, err := newOptions("open", opts)
	if err != nil {
		return nil, err
	}
	if target == "" {
		return nil, fmt.Errorf("postgres: open: empty target: %w", spec.ErrInvalidArgument)
	}
	cfg, err := pgxpool.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w: %w", spec.ErrInvalidArgument, err)
	}
	ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrapErr(ctx, "open", "", err)
	}
	s := newSaver(pool, o)
	s.ownsPool = true
	if err := s.Setup(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// New returns a saver over pool, after running [Saver.Setup] through it,
// so the saver is ready to use. pool stays owned by the caller:
// [Saver.Close] leaves it open. Configure it with [ConfigurePool]. A nil
// pool or an invalid option is an error wrapping [spec.ErrInvalidArgument].
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Saver, error) {
	o, err := newOptions("new", opts)
	if err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, fmt.Errorf("postgres: new: nil pool: %w", spec.ErrInvalidArgument)
	}
	s := newSaver(pool, o)
	if err := s.Setup(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// ConfigurePool adjusts a pool configuration the way [Open] does: when a
// context is cancelled mid-statement, pgx sends the server a cancel request
// and waits (up to a second) for the server to abort the statement before
// returning. pgx's default closes the connection at once and sends the
// cancel request in the background, so a statement blocked on a lock could
// still commit after its caller has been told it failed. Call it on the
// configuration of pools you pass to [New].
//
// Unlike pgx's CancelRequestContextWatcherHandler, the cancel request is
// never abandoned half-way when the statement ends first: its connection is
// closed only after the server (or pooler) has closed its side. PgBouncer
// 1.18 exits with "FATAL ... disconnect_client(): bad client state: 0"
// when a client closes a cancel connection it is still forwarding
// (pgbouncer/pgbouncer#801), which pgx's handler does whenever the
// statement finishes before the cancel request does.
func ConfigurePool(cfg *pgxpool.Config) {
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &cancelHandler{conn: c, deadlineDelay: time.Second}
	}
}

// cancelHandler is pgconn.CancelRequestContextWatcherHandler without the
// early close of the cancel connection; see [ConfigurePool].
type cancelHandler struct {
	conn          *pgconn.PgConn
	deadlineDelay time.Duration
	done          chan struct{}
}

// HandleCancel sets a deadline on the connection as a fallback and sends a
// cancel request in the background.
func (h *cancelHandler) HandleCancel(context.Context) {
	deadline := time.Now().Add(h.deadlineDelay)
	_ = h.conn.Conn().SetDeadline(deadline)
	done := make(chan struct{})
	h.done = done
	go func() {
		defer close(done)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		_ = h.conn.CancelRequest(ctx)
		// The server has the request, but may not have delivered it to
		// the backend yet; pgx waits as long so that the cancel cannot
		// hit the connection's next statement.
		time.Sleep(100 * time.Millisecond)
	}()
}

// HandleUnwatchAfterCancel waits for the cancel request to complete and
// clears the fallback deadline.
func (h *cancelHandler) HandleUnwatchAfterCancel() {
	<-h.done
	_ = h.conn.Conn().SetDeadline(time.Time{})
}

// Close closes the pool if [Open] created it; a pool passed to [New]
// stays open, owned by the caller. Close is idempotent and returns nil.
// The saver must not be used afterwards.
func (s *Saver) Close() error {
	s.closeOnce.Do(func() {
		if s.ownsPool {
			s.pool.Close()
		}
	})
	return nil
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
// driver gave the cancellation, so errors.Is(err, ctx.Err()) holds;
// otherwise a lost connection also wraps [spec.ErrUnavailable] (FAULT-2).
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
	if ctx.Err() == nil && connLost(err) {
		return fmt.Errorf("%s: %w: %w", where, spec.ErrUnavailable, err)
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
// conflicts and, through retryLost, on a lost connection. Each statement
// is atomic and idempotent, so a retry never doubles anything.
func (s *Saver) execRetry(ctx context.Context, sql string, args ...any) error {
	return s.retryLost(ctx, func() error {
		var err error
		for range 3 {
			_, err = s.pool.Exec(ctx, sql, s.args(args...)...)
			if err == nil || !retryable(err) || ctx.Err() != nil {
				return err
			}
		}
		return err
	})
}
