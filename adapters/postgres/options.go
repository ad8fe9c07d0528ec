package postgres

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DefaultSchema is the schema the saver's tables live in unless
// [WithSchema] names another.
const DefaultSchema = "checkpointkit"

// defaultPageSize is how many checkpoints one List round trip fetches.
const defaultPageSize = 100

// Option configures a [Saver]; pass options to [Open] or [New], which
// reject an invalid one with an error wrapping [spec.ErrInvalidArgument].
type Option func(*options)

// options is what the Options of [Open] and [New] set.
type options struct {
	schema   string
	serde    spec.Serde
	execMode pgx.QueryExecMode
	setMode  bool
	pageSize int
}

// WithSchema puts the saver's tables in the named schema instead of
// [DefaultSchema]. Every statement names its tables fully qualified and
// quoted, so the saver never depends on search_path, and two savers with
// different schemas share a database without seeing each other's data.
// [Saver.Setup] creates the schema if needed. The name must be 1 to 63
// bytes (PostgreSQL truncates longer identifiers, so two long names could
// silently share a schema) without a NUL byte.
func WithSchema(name string) Option {
	return func(o *options) { o.schema = name }
}

// WithQueryExecMode runs every statement of the saver in the given pgx
// query mode, overriding the pool's default. See [WithoutPreparedStatements]
// for the usual reason to change it.
func WithQueryExecMode(mode pgx.QueryExecMode) Option {
	return func(o *options) {
		o.execMode = mode
		o.setMode = true
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

// WithSerde sets the serde that encodes channel values and pending-write
// values (default [spec.DefaultSerde]). It must be type-preserving, and
// every saver sharing a schema must use the same one. Metadata does not go
// through it: it is stored as jsonb, which filters use, with an exact copy
// in a fixed encoding (see the package doc). A nil serde is invalid.
func WithSerde(serde spec.Serde) Option {
	return func(o *options) { o.serde = serde }
}

// WithListPageSize sets the most checkpoints List fetches per round trip
// (default 100; the first pages of an unlimited List are smaller). Larger
// pages mean fewer round trips and more memory held per page. It must be
// at least 1.
func WithListPageSize(n int) Option {
	return func(o *options) { o.pageSize = n }
}

// newOptions applies opts over the defaults and validates the result; op
// names the constructor in errors.
func newOptions(op string, opts []Option) (options, error) {
	o := options{schema: DefaultSchema, serde: spec.DefaultSerde(), pageSize: defaultPageSize}
	invalid := func(format string, args ...any) (options, error) {
		return o, fmt.Errorf("postgres: %s: %s: %w", op, fmt.Sprintf(format, args...), spec.ErrInvalidArgument)
	}
	for _, opt := range opts {
		if opt == nil {
			return invalid("nil Option")
		}
		opt(&o)
	}
	switch {
	case o.schema == "":
		return invalid("WithSchema: empty schema name")
	case strings.IndexByte(o.schema, 0) >= 0:
		return invalid("WithSchema(%q): the name contains a NUL byte", o.schema)
	case len(o.schema) > 63:
		return invalid("WithSchema(%q): the name is longer than 63 bytes", o.schema)
	case o.serde == nil:
		return invalid("WithSerde(nil)")
	case o.pageSize < 1:
		return invalid("WithListPageSize(%d): page size must be at least 1", o.pageSize)
	case o.setMode && o.execMode.String() == "invalid":
		return invalid("WithQueryExecMode(%d): unknown mode", o.execMode)
	}
	return o, nil
}
