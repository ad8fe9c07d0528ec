// Package postgres is a checkpointkit saver backed by PostgreSQL through
// pgx/v5 and pgxpool.
//
// # Use
//
//	saver, err := postgres.Open(ctx, "postgres://app@db/app", postgres.WithSchema("checkpoints"))
//	if err != nil { ... }
//	defer saver.Close()
//
// The package has the shape of every checkpointkit adapter. [Open] connects
// a pool of its own to a DSN and [New] wraps a *pgxpool.Pool the caller
// owns; both run [Saver.Setup], which creates or migrates the schema, so
// the saver they return is ready. Setup is safe to run from several
// processes at once (it serialises on an advisory lock), applies only the
// embedded migrations the schema has not recorded yet, and runs no DDL on
// an up-to-date schema. [Saver.Close] closes what Open opened and leaves
// New's pool to its caller; every Saver is an [io.Closer]. Options are
// validated by Open and New, which reject a bad one with an error wrapping
// [spec.ErrInvalidArgument]. [WithSerde] encodes channel values and
// pending-write values; metadata is stored as jsonb whatever the serde
// (see below).
//
// # Schema
//
// Everything lives in one schema ([DefaultSchema] unless [WithSchema] says
// otherwise); statements name tables fully qualified and quoted, so the
// saver never depends on search_path and two savers with different schemas
// share a database without seeing each other. Three tables:
//
//   - checkpoints, primary key (thread_id, checkpoint_ns, checkpoint_id):
//     the checkpoint record (msgpack), its parent ID, its channel versions
//     as two parallel text arrays, and its metadata twice — as jsonb for
//     filtering, and exactly, in a fixed MessagePack encoding, for reading
//     back.
//   - blobs, primary key (thread_id, checkpoint_ns, channel, version): each
//     channel value once per version, however many checkpoints reference
//     it; a NULL value marks a channel cleared at that version.
//   - writes, primary key (thread_id, checkpoint_ns, checkpoint_id, task_id,
//     idx), idx being [spec.WriteIndex]; with the task path.
//
// Every text key is declared COLLATE "C", so ordering, the Before cut and
// the "latest" checkpoint are byte-wise whatever the database locale. With
// that key order, GetTuple for the latest checkpoint reads one row of a
// backward index range scan, and List with a thread and a limit (with or
// without Before) reads only the rows it returns: cost does not grow with
// history depth. A second index on (checkpoint_id DESC, thread_id,
// checkpoint_ns) serves List across all threads, and an expression index
// on metadata->'run_id' serves DeleteForRuns.
//
// # Why two copies of metadata
//
// jsonb cannot hold U+0000 and stores numbers as numeric, so 1 and 1.0 (and
// int64 versus float64) become indistinguishable. The contract wants both
// preserved on read and wants filters to compare by JSON value. So the exact
// metadata is read from a bytea column (metadata_exact), encoded with
// [spec.MsgpackSerde] whatever [WithSerde] says: metadata is the saver's
// own record, like the checkpoint column, and must read back the same
// under any serde (a schema whose exact copies an earlier version wrote
// with a custom serde stays readable by a saver with that serde). The
// jsonb column, used only by filters, escapes NUL injectively in every key and string and spells
// numbers so that jsonb equality is exactly [spec.Equal]: integral floats as
// their exact decimal expansion, other floats in shortest form. A filter
// compiles, per key k with value v, to
//
//	metadata ? $k AND metadata -> $k = $v::jsonb
//
// with k and v encoded the same way and passed as parameters: no key or
// value is ever spliced into SQL text.
//
// # Transactions and streaming
//
// Put is a single statement (the values are upserted by a data-modifying
// CTE, the checkpoint by the outer INSERT), so a checkpoint, its values and
// its metadata land atomically, in one round trip. PutWrites is one INSERT
// ... ON CONFLICT: regular writes keep the first value (the conflict update
// is filtered out by idx >= 0), special writes the last. List fetches
// checkpoints in pages ([WithListPageSize]) with keyset pagination on the
// sort key. A page is one statement: an inner SELECT reads the checkpoints
// in index order, applies the filter and stops at the page size; lateral
// subqueries then bring each row's values and pending writes along, so
// there is no query per checkpoint. Nothing is sorted on the server: the
// rows and each row's writes arrive in order in practice and the client
// checks, and restores, the order SQL does not promise. The rows are read
// from pgx's raw binary values into one buffer per page, which the
// returned strings share. A page is read completely and its
// connection released before the caller sees a tuple, so stopping early
// leaks nothing and a slow consumer holds no connection. The price is that
// pages are separate snapshots: a checkpoint put or deleted during a long
// iteration may or may not be seen, but none is seen twice.
//
// The statements are shaped so that the planner keeps to those index
// paths even with stale or missing statistics (right after a burst of
// Puts, say): values are fetched by a LIMIT 1 primary-key probe per
// channel rather than a join the planner may reorder, and the metadata
// filter is wrapped in a CASE so that it is estimated as "matches half the
// rows" rather than the 0.5 % per key that made a two-key filter look so
// rare that sorting the whole thread seemed cheaper than reading it in
// order. The EXPLAIN tests check the plans with and without statistics.
//
// # Pooling
//
// Use one pgxpool per process and share the saver; it is safe for
// concurrent use. Each operation holds a connection only for its statement
// (Setup for its transaction). Behind PgBouncer or another pooler in
// transaction mode, pass [WithoutPreparedStatements] (or
// [WithQueryExecMode] with pgx.QueryExecModeSimpleProtocol): the saver keeps
// no session state — no SET, no session advisory locks, no prepared
// statements — beyond one transaction. If your pooler restricts DDL,
// create the schema once through a direct or session-mode connection (an
// Open or New there): on an up-to-date schema the Setup of a later Open
// through the pooler runs no DDL. The package's tests
// run a concurrent workload through PgBouncer in transaction mode when
// CHECKPOINTKIT_PGBOUNCER_DSN is set, for example with
//
//	[databases]
//	* = host=127.0.0.1 port=5432
//	[pgbouncer]
//	pool_mode = transaction
//	default_pool_size = 4
//	listen_port = 6432
//	auth_type = trust        ; test setups only
//
// For pools you create yourself and pass to [New], apply [ConfigurePool] so that a cancelled
// context cancels the statement on the server before the call returns. Its
// cancel requests are never abandoned half-way, which PgBouncer 1.18 does
// not survive (see [ConfigurePool]); the tests sweep cancellation through
// PgBouncer.
//
// # Odd bytes
//
// PostgreSQL text holds neither NUL nor invalid UTF-8. Every string the
// saver stores as text — thread IDs, namespaces, checkpoint, parent and run
// IDs, task IDs and paths, channel names and versions — passes the spec's
// validation helpers first, which reject both with an error wrapping
// [spec.ErrInvalidConfig], as every adapter of the kit does: no SQLSTATE
// (22021, 22P05) reaches the caller for anything a caller passes.
// Metadata is normalised (invalid UTF-8 is [spec.ErrUnsupportedValue]) and
// its jsonb copy escapes NUL; values and the checkpoint record are bytea.
//
// # Lost connections
//
// Every call is one statement, so a connection lost half-way leaves the
// call done whole or not at all. The error then wraps [spec.ErrUnavailable]
// and the driver's error (network errors, refused dials, SQLSTATE class 08,
// 57P01-57P03). Before failing, a statement or List page that lost its
// connection runs again, at most twice, after [pgxpool.Pool.Reset]: after a
// server restart or a network cut, the pool's idle connections are all dead,
// and pgx would hand them out one by one. Every statement is idempotent, so
// a re-run leaves what one run leaves. Reset closes the idle connections of
// a pool passed to [New] too. The conformance suite's faults group checks
// all of this through a fault-injecting proxy, directly and through
// PgBouncer.
package postgres
