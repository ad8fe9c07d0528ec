package sqlite

import (
	"fmt"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Option configures a [Saver]; pass options to [Open] or [New], which
// reject an invalid one with an error wrapping [spec.ErrInvalidArgument].
type Option func(*options)

// options is what the Options of [Open] and [New] set.
type options struct {
	serde       spec.Serde
	pageSize    int
	busyTimeout time.Duration
}

// defaultOptions returns the options used when none are given.
func defaultOptions() options {
	return options{serde: spec.DefaultSerde(), pageSize: 64, busyTimeout: 5 * time.Second}
}

// WithSerde sets the serde that encodes channel values and pending-write
// values (default [spec.DefaultSerde]). A database must be read with the
// serde it was written with. Metadata does not go through it: it is
// stored as JSON text, which SQLite filters on (see the package doc). A
// nil serde is invalid.
func WithSerde(serde spec.Serde) Option {
	return func(o *options) { o.serde = serde }
}

// WithListPageSize sets how many checkpoints List reads per query (default
// 64). Smaller pages hold less in memory; larger ones make fewer queries.
// It must be at least 1.
func WithListPageSize(n int) Option {
	return func(o *options) { o.pageSize = n }
}

// WithBusyTimeout sets how long a connection [Open] makes waits for a lock
// held by another process before failing with "database is locked"
// (default 5s). It must not be negative. It is ignored by [New], whose
// handle is configured by its caller, and when the target sets
// _busy_timeout.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busyTimeout = d }
}

// newOptions applies opts over the defaults and validates the result; op
// names the constructor in errors.
func newOptions(op string, opts []Option) (options, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			return o, fmt.Errorf("sqlite: %s: nil Option: %w", op, spec.ErrInvalidArgument)
		}
		opt(&o)
	}
	switch {
	case o.serde == nil:
		return o, fmt.Errorf("sqlite: %s: WithSerde(nil): %w", op, spec.ErrInvalidArgument)
	case o.pageSize < 1:
		return o, fmt.Errorf("sqlite: %s: WithListPageSize(%d): page size must be at least 1: %w", op, o.pageSize, spec.ErrInvalidArgument)
	case o.busyTimeout < 0:
		return o, fmt.Errorf("sqlite: %s: WithBusyTimeout(%v): negative timeout: %w", op, o.busyTimeout, spec.ErrInvalidArgument)
	}
	return o, nil
}
