// Package sqlite is a checkpointkit saver backed by SQLite, through
// github.com/mattn/go-sqlite3 (cgo). It implements [spec.Saver] and every
// optional capability: [spec.ThreadCopier], [spec.RunDeleter],
// [spec.Pruner], [spec.VersionGenerator] and [spec.DeltaHistoryReader]
// (four statements per call whatever the length of the ancestor chain).
//
// Use it when a graph runs in one process, or in a few on one machine, and
// its history should survive restarts without running a database server.
//
// # Use
//
//	saver, err := sqlite.Open(ctx, "checkpoints.db") // or ":memory:"
//	if err != nil { ... }
//	defer saver.Close()
//
// The package has the shape of every checkpointkit adapter. [Open] opens a
// target (a file path, a "file:" URI or ":memory:") and [New] wraps a
// *sql.DB the caller owns; both run [Saver.Setup], which creates or
// migrates the schema, so the saver they return is ready. [Saver.Close]
// closes what Open opened and leaves New's handle to its caller; every
// Saver is an [io.Closer]. Options ([WithSerde], [WithListPageSize],
// [WithBusyTimeout]) are validated by Open and New, which reject a bad one
// with an error wrapping [spec.ErrInvalidArgument]. [WithSerde] encodes
// channel values and pending-write values; metadata is stored as JSON text
// whatever the serde, so that SQLite can filter on it.
//
// # Schema
//
// Three tables. checkpoints is WITHOUT ROWID, so that its rows live in
// primary-key order; blobs and writes hold encoded values, often kilobytes,
// and are ordinary rowid tables with their primary key as a unique index
// (migration 3): in a WITHOUT ROWID table the key B-tree carries whole
// rows, few kilobyte rows fit a page, and lookups grew with history.
//
//   - checkpoints (thread_id, checkpoint_ns, checkpoint_id) → parent ID,
//     the checkpoint without its channel values (MessagePack of a fixed
//     struct: versions, versions seen, updated channels),
//     and the metadata as JSON text.
//   - blobs (thread_id, checkpoint_ns, channel, version) → kind ('value' or
//     'empty', the latter for a channel cleared at that version) and the
//     encoded value. A value is stored once per version, not once per
//     checkpoint: a long thread whose big channel rarely changes stores it
//     rarely.
//   - writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) →
//     channel, encoded value, task path. idx is [spec.WriteIndex]. A
//     PutWrites is one INSERT of all its writes (up to 256 a statement)
//     whose ON CONFLICT DO UPDATE applies only to special writes
//     (idx < 0, last wins), so a regular write keeps its first value: the
//     rule lives in SQL, not in a read-then-write that two writers could
//     interleave.
//
// Migration 2 adds the indexes the primary keys do not cover: checkpoint ID
// descending over all threads, and per thread across namespaces, so that
// every List order is an index walk; and json_extract(metadata,
// '$.run_id') for DeleteForRuns, which migration 4 limits to the
// checkpoints that have a run_id (one index fewer to write for the others). Getting the latest checkpoint, or one by
// ID, and listing one thread and namespace with a limit, are primary-key
// range seeks whose cost does not grow with history (see docs/benchmarks.md).
//
// Metadata is JSON so SQLite can filter on it, but written and read with
// this package's own codec rather than encoding/json: integers stay int64
// and floats stay float64 (1.0 is written "1.0"), exactly as
// [spec.NormalizeMetadata] models them.
//
// # Migrations
//
// Numbered files embedded from migrations/ and recorded in the
// checkpointkit_migrations table. [Saver.Setup] (run by [Open] and [New])
// applies the missing ones inside one BEGIN IMMEDIATE transaction, so two
// processes opening the same file at once apply each migration once (the
// second waits for the first's write lock). A database migrated by a newer
// version of this package is refused with an error wrapping
// [spec.ErrInvalidConfig].
//
// # Concurrency
//
// A Saver is safe for concurrent use. Every write (Put, PutWrites, the
// deletes, copy and prune) is one transaction, started with BEGIN IMMEDIATE
// when it takes more than one statement (a PutWrites of up to 256 writes is
// one statement, SQLite's implicit transaction, which takes the write lock
// as it starts):
// it takes SQLite's write lock up front, so it waits (busy timeout) instead
// of failing with "database is locked" when it would otherwise have to
// upgrade a read lock. Writers of one Saver also queue on an in-process
// semaphore (honouring their context) so they do not spin in SQLite's busy
// handler. Readers never block writers in WAL mode: GetTuple, and each List
// page, run in one read transaction, so a checkpoint, its values and its
// writes come from a single snapshot.
//
// List pages through the results with a keyset cursor (ID, thread,
// namespace). Each page's rows are read and closed, and its values and
// pending writes fetched, before the first tuple is yielded: on a page of
// one thread and namespace, one statement returns them all as one column
// (a key search per value and per checkpoint); a single checkpoint, or a
// page spanning threads or namespaces, uses a values query and a writes
// query. Nothing stays open while the caller's loop body runs, so
// breaking out early leaks nothing and the loop body may itself use the
// saver.
//
// Prune with [spec.KeepLatest] deletes old checkpoints, their writes and the
// values no survivor reads in a fixed number of set-based statements
// (the survivors' value keys travel as one JSON parameter), so its time in
// the write lock does not grow with a statement per value.
//
// A cancelled context interrupts the running statement and rolls the
// transaction back; errors then satisfy errors.Is(err, ctx.Err()). Every
// error names the operation and thread and wraps the driver's error.
//
// # Read path
//
// Reads go below database/sql: through [database/sql.Conn.Raw] to the
// go-sqlite3 connection, whose statement cache keeps every statement
// prepared, with rows handed over as the driver's values (no Rows, no
// Scan). Blobs arrive as buffers the read owns, so decoded strings share
// them instead of copying, and checkpoint bodies and metadata are decoded
// by small readers of exactly the forms this package writes. Statements
// compare columns with "+?" rather than "?": SQLite peeks at a value bound
// to "column = ?" to plan, and a statement whose bindings are cleared (as
// go-sqlite3 does to every cached statement) is then compiled again on its
// next use. docs/benchmarks.md has the figures.
//
// # DSN advice
//
// A query string that does not parse, or a parameter value go-sqlite3
// rejects, makes Open fail with an error wrapping [spec.ErrInvalidArgument]
// (parameters are never dropped). Open adds, unless the target sets them:
// _busy_timeout=5000 (see
// [WithBusyTimeout]), _txlock=immediate, _stmt_cache_size=64 (go-sqlite3
// otherwise prepares every statement again on every call), _mutex=no (no
// mutex around each call into a connection, which database/sql already
// gives to one goroutine at a time) and, for files,
// _journal_mode=WAL.
// WAL lets readers run alongside the writer and is what you want for a
// file. synchronous stays at SQLite's default (FULL); add
// "_synchronous=NORMAL" for much faster commits that stay consistent but may
// lose the last transactions on power loss. Keep the database on a local
// disk: WAL needs shared memory, which network filesystems do not provide.
//
// In-memory databases are used through a single connection: ":memory:"
// becomes a private shared-cache database held open until Close. With
// [New], pass a handle opened with the same parameters, and call
// SetMaxOpenConns(1) for an in-memory one.
//
// A file that only this process uses may be opened with
// "_locking_mode=EXCLUSIVE": the saver then uses one connection, which
// takes the file's locks once and keeps them, so a put makes no locking
// system calls (about a sixth less time per put, docs/benchmarks.md).
// Other processes, the sqlite3 shell included, get
// "database is locked" until Close. With [New], call SetMaxOpenConns(1)
// for such a handle.
package sqlite
