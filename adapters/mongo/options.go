package mongo

import (
	"fmt"
	"math"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DefaultDatabase is the database used when [WithDatabase] is not given.
const DefaultDatabase = "checkpointkit"

// defaultPageSize is how many checkpoints List reads from its cursor before
// it loads their values and pending writes, one query each for the page.
const defaultPageSize = 32

// Option configures a [Saver]; pass options to [Open] or [New], which
// reject an invalid one with an error wrapping [spec.ErrInvalidArgument].
type Option func(*options)

// options is what the Options of [Open] and [New] set.
type options struct {
	serde    spec.Serde
	dbName   string
	prefix   string
	txn      bool
	pageSize int
}

// WithDatabase sets the database the saver's collections live in (default
// [DefaultDatabase]). The name must be 1 to 63 bytes without any of
// / \ . " $, a space or a NUL byte, as MongoDB requires.
func WithDatabase(name string) Option {
	return func(o *options) { o.dbName = name }
}

// WithCollectionPrefix prepends prefix to every collection name, so that
// several independent savers can share one database. It must not contain
// '$' or a NUL byte, nor start with "system.".
func WithCollectionPrefix(prefix string) Option {
	return func(o *options) { o.prefix = prefix }
}

// WithSerde sets the serde that encodes channel values and pending-write
// values (default [spec.DefaultSerde]). Every saver sharing a database and
// prefix must use the same one. Metadata does not go through it: it is
// stored as a BSON sub-document and filter tokens, with an exact copy in a
// fixed encoding (see the package doc). A nil serde is invalid.
func WithSerde(serde spec.Serde) Option {
	return func(o *options) { o.serde = serde }
}

// WithListPageSize sets how many checkpoints List reads from its cursor
// before it loads their values and pending writes, one query each for the
// whole page (default 32). It must be at least 1.
func WithListPageSize(n int) Option {
	return func(o *options) { o.pageSize = n }
}

// WithTransactions makes each Put and PutWrites run its writes in one
// multi-document transaction, so that a failed call never leaves even
// invisible documents behind. It needs a replica set or a sharded
// cluster: a standalone mongod and FerretDB v1 reject transactions, and
// every Put and PutWrites then fails with the server's error. Without this
// option (the default) the saver needs no transaction: its write order,
// pins and fences keep every guarantee of the contract (see the package
// doc). Maintenance calls use fences either way.
func WithTransactions() Option {
	return func(o *options) { o.txn = true }
}

// newOptions applies opts over the defaults and validates the result; op
// names the constructor in errors.
func newOptions(op string, opts []Option) (options, error) {
	o := options{serde: spec.DefaultSerde(), dbName: DefaultDatabase, pageSize: defaultPageSize}
	invalid := func(format string, args ...any) (options, error) {
		return o, fmt.Errorf("mongo: %s: %s: %w", op, fmt.Sprintf(format, args...), spec.ErrInvalidArgument)
	}
	for _, opt := range opts {
		if opt == nil {
			return invalid("nil Option")
		}
		opt(&o)
	}
	switch {
	case o.dbName == "":
		return invalid("WithDatabase: empty database name")
	case len(o.dbName) > 63 || strings.ContainsAny(o.dbName, "/\\. \"$\x00"):
		return invalid("WithDatabase(%q): not a valid MongoDB database name", o.dbName)
	case strings.ContainsAny(o.prefix, "$\x00") || strings.HasPrefix(o.prefix, "system."):
		return invalid("WithCollectionPrefix(%q): not a valid collection name prefix", o.prefix)
	case o.serde == nil:
		return invalid("WithSerde(nil)")
	case o.pageSize < 1 || o.pageSize > math.MaxInt32:
		return invalid("WithListPageSize(%d): page size must be between 1 and %d", o.pageSize, math.MaxInt32)
	}
	return o, nil
}
