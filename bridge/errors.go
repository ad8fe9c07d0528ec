package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

var (
	// ErrBadRequest reports a message the other side could not understand:
	// malformed JSON, an unknown method or tag, a missing field or a field
	// of the wrong type. It is the protocol's bad_request code.
	ErrBadRequest = errors.New("bridge: bad request")
	// ErrClosed reports a call on a Process or saver that was closed.
	ErrClosed = errors.New("bridge: closed")
)

// Error codes of the protocol (PROTOCOL.md, "Error codes").
const (
	codeNotFound         = "not_found"
	codeInvalidConfig    = "invalid_config"
	codeInvalidArgument  = "invalid_argument"
	codeUnsupportedValue = "unsupported_value"
	codeCanceled         = "canceled"
	codeDeadlineExceeded = "deadline_exceeded"
	codeUnavailable      = "unavailable"
	codeUnsupported      = "unsupported"
	codeBadRequest       = "bad_request"
	codeInternal         = "internal"
)

// codeSentinels maps every code but internal to the error it stands for.
var codeSentinels = map[string]error{
	codeNotFound:         spec.ErrNotFound,
	codeInvalidConfig:    spec.ErrInvalidConfig,
	codeInvalidArgument:  spec.ErrInvalidArgument,
	codeUnsupportedValue: spec.ErrUnsupportedValue,
	codeCanceled:         context.Canceled,
	codeDeadlineExceeded: context.DeadlineExceeded,
	codeUnavailable:      spec.ErrUnavailable,
	codeUnsupported:      errors.ErrUnsupported,
	codeBadRequest:       ErrBadRequest,
}

// codeOf returns the protocol code of err: context errors first, then
// spec.ErrUnavailable and the other spec sentinels (ErrNotCarried, a value
// the encoding cannot carry, as unsupported_value), ErrBadRequest and
// errors.ErrUnsupported; internal for anything else.
func codeOf(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codeDeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codeCanceled
	case errors.Is(err, spec.ErrUnavailable):
		return codeUnavailable
	case errors.Is(err, spec.ErrNotFound):
		return codeNotFound
	case errors.Is(err, spec.ErrInvalidConfig):
		return codeInvalidConfig
	case errors.Is(err, spec.ErrInvalidArgument):
		return codeInvalidArgument
	case errors.Is(err, spec.ErrUnsupportedValue), errors.Is(err, ErrNotCarried):
		return codeUnsupportedValue // a value a saver returned that the encoding cannot carry
	case errors.Is(err, ErrBadRequest):
		return codeBadRequest
	case errors.Is(err, errors.ErrUnsupported):
		return codeUnsupported
	}
	return codeInternal
}

// Error is an error the server reported for a request. It unwraps to the
// sentinel of its code (spec.ErrNotFound for not_found, context.Canceled
// for canceled, errors.ErrUnsupported for unsupported, ErrBadRequest for
// bad_request, ...), so callers test it with errors.Is; internal errors
// unwrap to nothing.
type Error struct {
	// Code is the protocol's error code, such as "not_found".
	Code string
	// Message is the server's description, naming the operation and thread.
	Message string
}

// Error returns the server's message, or the code when it sent none.
func (e *Error) Error() string {
	if e.Message == "" {
		return "bridge: " + e.Code
	}
	return e.Message
}

// Unwrap returns the sentinel error of the code, or nil for internal and
// unknown codes.
func (e *Error) Unwrap() error { return codeSentinels[e.Code] }

// ExitError reports that the server's process ended, or its connection
// broke, while the client still needed it. Every call pending at that
// moment, and every later one, fails with it.
type ExitError struct {
	// Command is the server's command line ("" for an attached server).
	Command string
	// Err is why: the process's exit status (*exec.ExitError), or the read
	// error that ended the connection; nil when the process exited with
	// status 0.
	Err error
	// Stderr is the last few kilobytes the server wrote to standard error.
	Stderr string
}

// Error names the server and quotes the tail of its standard error.
func (e *ExitError) Error() string {
	var b strings.Builder
	if e.Command != "" {
		fmt.Fprintf(&b, "bridge: server process %q ended", e.Command)
	} else {
		b.WriteString("bridge: server connection ended")
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	} else {
		b.WriteString(" (exit status 0)")
	}
	if tail := strings.TrimRight(e.Stderr, "\n"); tail != "" {
		b.WriteString("; its stderr ends with:\n")
		b.WriteString(tail)
	} else if e.Command != "" {
		b.WriteString("; it wrote nothing to stderr")
	}
	return b.String()
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// ErrNotCarried reports an input that the bridge protocol cannot carry to
// the saver on the other side: a value containing itself or nested deeper
// than the protocol allows, a string or map key that is not valid UTF-8
// (JSON holds nothing else), a Go type outside the plain-value model. The
// client returns it without sending anything, so the remote saver never
// judged that input: a conformance check must report it as not judged over
// this transport, neither a pass nor a failure. It unwraps to
// errors.ErrUnsupported and to none of spec's sentinels, so that it is never
// mistaken for the saver's own refusal (spec.ErrUnsupportedValue,
// spec.ErrInvalidConfig).
var ErrNotCarried error = notCarriedError{}

// notCarriedError is ErrNotCarried. Its NotCarried method lets a package
// that does not import bridge (a conformance report) recognise it with
// errors.As on interface{ NotCarried() bool }.
type notCarriedError struct{}

func (notCarriedError) Error() string    { return "not carried by the bridge protocol" }
func (notCarriedError) Unwrap() error    { return errors.ErrUnsupported }
func (notCarriedError) NotCarried() bool { return true }

// notCarried returns an error wrapping ErrNotCarried.
func notCarried(format string, a ...any) error {
	return fmt.Errorf("bridge: %s: %w", fmt.Sprintf(format, a...), ErrNotCarried)
}
