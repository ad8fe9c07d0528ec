package mongo

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/checkpointkit/checkpointkit/spec"
)

// shutdownCodes are server error codes that mean the server is going away
// or cannot be reached from where the command ran: HostUnreachable,
// HostNotFound, NetworkTimeout, ShutdownInProgress, SocketException,
// InterruptedAtShutdown, InterruptedDueToReplStateChange.
var shutdownCodes = []int{6, 7, 89, 91, 9001, 11600, 11602}

// lostConnection reports whether err means that the server could not be
// reached or the connection to it was lost: a driver error labelled
// NetworkError, a failed server selection or connection, a server that
// is shutting down, or a network error of the standard library.
func lostConnection(err error) bool {
	if err == nil {
		return false
	}
	var sel topology.ServerSelectionError
	var conn topology.ConnectionError
	var cleared driver.RetryablePoolError // the pool was cleared after a network error
	if errors.As(err, &sel) || errors.As(err, &conn) || errors.As(err, &cleared) || mongo.IsNetworkError(err) || errors.Is(err, mongo.ErrClientDisconnected) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var srv mongo.ServerError
	if errors.As(err, &srv) {
		for _, c := range shutdownCodes {
			if srv.HasErrorCode(c) {
				return true
			}
		}
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// unavailableError marks a driver error as [spec.ErrUnavailable] and keeps
// it: errors.As still finds the driver's types.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string        { return e.err.Error() }
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == spec.ErrUnavailable }

// classify is deferred by every method of the saver that talks to the
// server: when the call failed because the server was unreachable or the
// connection was lost, the error it returns also matches
// [spec.ErrUnavailable] (SPEC.md FAULT-2).
func classify(err *error) {
	if *err != nil && !errors.Is(*err, spec.ErrUnavailable) && lostConnection(*err) {
		*err = &unavailableError{*err}
	}
}

// maxLostRetries bounds how many times a call is made again after it failed
// because the connection was lost (SPEC.md FAULT-3).
const maxLostRetries = 2

// retryLost runs fn, and runs it again, at most maxLostRetries times, while
// it fails because the connection to the server was lost and ctx is not
// done, unless the driver already waited for the server in vain (a failed
// server selection). The driver keeps idle connections without checking them, so after
// a server restart or a network cut the first command on each of them
// fails; and it retries writes only on replica sets. Every method of the
// saver is idempotent and all or nothing by design (write-then-mark Puts,
// single-document PutWrites batches, fenced maintenance, which the next
// call finishes when a cut interrupted it), so running it again is safe.
func retryLost(ctx context.Context, fn func() error) error {
	err := fn()
	for range maxLostRetries {
		var sel topology.ServerSelectionError
		if ctx.Err() != nil || !lostConnection(err) || errors.As(err, &sel) {
			return err // done, or the driver already waited for the server
		}
		err = fn()
	}
	return err
}
