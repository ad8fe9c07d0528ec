package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// maxLostRetries bounds how many times a statement is run again after the
// connection it ran on was lost (SPEC.md FAULT-3).
const maxLostRetries = 2

// connLost reports whether err means that the connection to the server (or
// pooler) was lost or could not be made: a network error, an end of stream
// in the middle of a message, a refused dial, or a server error of class
// 08 (connection exception) or 57P01-57P03 (the server is shutting down,
// crashed or is starting up). Errors of the caller's context are not.
func connLost(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03":
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08")
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// retryLost runs fn, and runs it again, at most maxLostRetries times, while
// it fails because its connection was lost and ctx is not done. Before each
// retry it resets the pool: a lost connection usually means every other
// idle connection to the same server is gone too (a restart, a network
// cut), and pgx would otherwise hand them out one by one, each failing its
// statement. fn must be safe to run twice: every statement of the saver is
// (a re-run Put, PutWrites, DeleteThread, CopyThread, Prune or
// DeleteForRuns leaves what the first run left), and each is a single
// statement, so a run cut short by the network took effect as a whole or
// not at all.
func (s *Saver) retryLost(ctx context.Context, fn func() error) error {
	err := fn()
	for range maxLostRetries {
		if !connLost(err) || ctx.Err() != nil {
			return err
		}
		s.pool.Reset()
		err = fn()
	}
	return err
}
