package bridge

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestErrorCodes maps every sentinel to its code and back: a server's
// error, wrapped as adapters wrap it, crosses the bridge as a code and
// comes back as an *Error for which errors.Is holds with the same sentinel.
func TestErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		sentinel error
		code     string
	}{
		{spec.ErrNotFound, "not_found"},
		{spec.ErrInvalidConfig, "invalid_config"},
		{spec.ErrInvalidArgument, "invalid_argument"},
		{spec.ErrUnsupportedValue, "unsupported_value"},
		{context.Canceled, "canceled"},
		{context.DeadlineExceeded, "deadline_exceeded"},
		{spec.ErrUnavailable, "unavailable"},
		{errors.ErrUnsupported, "unsupported"},
		{ErrBadRequest, "bad_request"},
	} {
		err := fmt.Errorf("get tuple: thread %q: %w", "t", tc.sentinel)
		code := codeOf(err)
		if code != tc.code {
			t.Errorf("codeOf(%v) = %q, want %q", err, code, tc.code)
		}
		back := error(&Error{Code: code, Message: err.Error()})
		if !errors.Is(back, tc.sentinel) || back.Error() != err.Error() {
			t.Errorf("code %s came back as %v, which is not %v or lost the message", code, back, tc.sentinel)
		}
	}
	if code := codeOf(errors.New("disk full")); code != "internal" {
		t.Errorf("an unknown error has code %q, want internal", code)
	}
	if err := (&Error{Code: "internal", Message: "disk full"}); errors.Unwrap(err) != nil {
		t.Errorf("internal unwraps to %v, want nothing", errors.Unwrap(err))
	}
	// A context error wins over a sentinel it wraps alongside.
	if code := codeOf(fmt.Errorf("%w: %w", spec.ErrNotFound, context.DeadlineExceeded)); code != "deadline_exceeded" {
		t.Errorf("a deadline error wrapping not_found has code %q", code)
	}
}
