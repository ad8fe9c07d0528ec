// Package mongo is checkpointkit's MongoDB checkpoint saver, built on the
// official driver (go.mongodb.org/mongo-driver/v2). It implements
// [spec.Saver] and every optional capability ([spec.ThreadCopier],
// [spec.RunDeleter], [spec.Pruner], [spec.VersionGenerator]) and works on
// MongoDB 6 and later and on FerretDB v1, the wire-compatible server
// checkpointkit's CI runs (see ci/ferretdb). It needs no transactions;
// [WithTransactions] uses them where the deployment has them.
//
// # Use
//
//	s, err := mongo.Open(ctx, "mongodb://localhost:27017/", mongo.WithDatabase("app"))
//	if err != nil { ... }
//	defer s.Close()
//
// The package has the shape of every checkpointkit adapter. [Open]
// connects a client of its own to a connection string and [New] wraps a
// *mongo.Client the caller owns; both run [Saver.Setup], which creates the
// indexes (idempotently), so the saver they return is ready. [Saver.Close]
// disconnects what Open connected and leaves New's client to its caller;
// every Saver is an [io.Closer]. Options are validated by Open and New,
// which reject a bad one with an error wrapping [spec.ErrInvalidArgument].
// [WithSerde] encodes channel values and pending-write values; metadata is
// stored as BSON and filter tokens whatever the serde (see below).
//
// # Layout
//
// Five collections (names after an optional [WithCollectionPrefix]):
//
//   - checkpoints: one document per checkpoint: thread, ns, id, parent, the
//     checkpoint without values (cp) and the metadata (meta, the exact typed
//     copy reads use) both in a fixed MessagePack encoding, the metadata
//     again as a readable BSON sub-document (metadata; null when the metadata is
//     above 1 MiB encoded or nested more than 64 levels, so that no
//     document can exceed BSON's size or depth limits), one filter token per
//     top-level metadata entry (mdx), the (channel, version) pairs it reads
//     (refs) and those its Put stored (own), the blobs of its own data, and
//     a pin renewed by every write. Indexes: unique (thread, ns, id) —
//     identity, GetTuple(latest) and List of one namespace; (thread, id -1,
//     ns) — List of a thread across namespaces; (id -1, thread, ns) — List
//     across threads; (mdx) — filters.
//   - checkpoint_values: one document per (thread, ns, channel, version),
//     unique index on those four fields; has=false records a cleared
//     channel.
//   - checkpoint_write_batches: one document per PutWrites call holding
//     all its writes, numbered per (thread, ns, checkpoint, task) in the
//     order the calls were stored; unique index on (thread, ns, cid, task,
//     seq). Reads replay a task's batches in order: regular writes
//     first-wins, special writes last-wins. (Versions of this package
//     before batches stored one document per write in checkpoint_writes,
//     which is no longer read.)
//   - checkpoint_blobs: chunks of payloads too large to inline (above 4 MiB
//     encoded, or beyond 8 MiB of inline payloads in one document), unique
//     index on (thread, blob, n).
//   - checkpoint_ops: fences of maintenance calls in progress or
//     interrupted (see below); usually empty.
//
// Every document's _id is an injective encoding of its key (each part
// length-prefixed), so a read or write of one known document is an _id
// equality, and the compound unique indexes enforce the same keys on the
// fields the range queries use.
//
// Reads are shaped for the indexes: GetTuple by ID is an _id lookup;
// GetTuple(latest) and List sort on id descending (then thread and ns
// ascending where those are not pinned by equality), which is the order of
// one of the checkpoint indexes, so MongoDB answers with an index scan and a
// limit, never a collection scan or an in-memory sort (TestExplain checks
// the plans). List reads a page of checkpoints per query (keyset paging:
// each page resumes after the last document of the previous one), loads
// the values, write batches and large-payload chunks of the whole page
// with one query each, and keeps no server cursor open while the loop body
// runs: a slow consumer never meets the server's idle-cursor timeout, and
// breaking out of the loop leaves nothing behind.
//
// IDs, threads and namespaces are compared byte-wise: MongoDB compares
// strings without a collation by their UTF-8 bytes, and FerretDB's SQLite
// backend sorts in Go, which does the same (TestByteWiseOrder covers
// non-ASCII, mixed case and control characters). Pending writes are
// ordered in Go.
//
// # What a deployment without transactions gets
//
// Everything the contract asks, by design rather than by transactions
// (FerretDB, a standalone mongod, or a replica set without
// [WithTransactions]):
//
//   - Write-then-mark. Put writes the checkpoint document first, naming
//     the values (own) and blobs its Put is about to store, then the blob
//     chunks, then the values. A checkpoint is visible only once its
//     record, metadata and own values are all there, chunks included, so
//     no reader sees a torn checkpoint and a Put that fails or is
//     cancelled half-way leaves nothing visible. A Put that replaces an
//     existing checkpoint first announces its values on the stored
//     document (next) and replaces it last, so the old version stays
//     visible until the new one is whole. Retrying a Put rewrites the same
//     documents (deterministic _ids).
//   - A PutWrites call is one document, stored whole or not at all; the
//     chunks of its large values are written after it, and reads ignore a
//     batch until they are complete.
//   - Garbage collection (of values and chunks, by Prune and
//     DeleteForRuns) never deletes what a checkpoint or a Put in flight
//     needs: it reads its candidates with their pins, then the references
//     of every checkpoint document (which a Put writes before its data),
//     and deletes a candidate only if it is unreferenced and still has the
//     pin it was read with; a value or chunk written again meanwhile has a
//     new one (see gc.go).
//   - Prune deletes only checkpoints older than the latest visible one it
//     keeps, never a newer one that a Put adds while it runs.
//   - Fences make maintenance all or nothing. DeleteThread, Prune,
//     DeleteForRuns and CopyThread first insert one document stating their
//     whole effect (checkpoint_ops). Readers apply every fence as if its
//     operation were done: the thread deleted, the pruned checkpoints and
//     those of the deleted runs gone, a copy not yet there. The operation
//     then carries out its effect and removes the fence. If it is
//     interrupted (a cancelled context, a cut connection, a crash), the
//     fence stays and keeps the outcome whole; the next Put, PutWrites or
//     maintenance call on the thread (or run) carries the fence out before
//     writing, so nothing written later is hidden. A copy is not carried
//     out: its fence keeps what it copied hidden, and the next copy to the
//     thread replaces those documents.
//   - A Put or PutWrites that returned before DeleteThread began is gone
//     afterwards; one running alongside it is either gone or whole.
//   - Reads check what they found: a checkpoint missing a value it did not
//     store itself is looked at again, and left out if it was deleted
//     meanwhile (re-read if it was replaced).
//
// What it does not get: one List sees each checkpoint whole, but pages are
// separate reads, so a List running alongside writes or maintenance may
// show a mix of before and after across checkpoints (as PostgreSQL's and
// SQLite's pages do). Storage left by interrupted calls is reclaimed later:
// the invisible documents and values of a failed Put by a retry, by Prune
// (older ones) or DeleteThread; an interrupted copy's documents by the next
// copy to the same thread or by DeleteThread. Every read and write also
// reads the fences (one small query, run alongside its first query), and
// PutWrites reads its task's last batch number first (one round trip).
//
// [WithTransactions] runs each Put and PutWrites in one multi-document
// transaction instead, on deployments that have them (replica sets,
// sharded clusters), so even the invisible leftovers of a failed call never
// exist; maintenance uses fences either way. FerretDB cannot run that path
// to success, so TestTransactionsSuccessPath runs it through a proxy that
// strips the transaction fields and acknowledges commits, and checks the
// commands the driver sends: every read and write of a call in one
// transaction, started once, committed last, and rerun whole (idempotently)
// after a transient commit error. It does not prove a real replica set's
// atomicity or isolation.
//
// # Metadata
//
// The readable sub-document cannot be what reads return: it is omitted for
// metadata too large or too deep for BSON's limits, and its keys are
// escaped and inner arrays wrapped for FerretDB. So reads decode the exact
// copy (meta), which, like the checkpoint record (cp), is encoded with
// [spec.MsgpackSerde] whatever [WithSerde] says: both are the saver's own
// records and must read back the same under any serde. (A database whose
// records an earlier version wrote with a custom serde stays readable by a
// saver with that serde.)
//
// Filters run in the server, on the mdx tokens: the token of a (key, value)
// pair is a hash of a canonical encoding under which two pairs coincide
// exactly when the contract's equality ([spec.Equal]) holds: numbers by
// value (1 equals 1.0, 2^53+1 does not equal 2^53 as a float), booleans
// apart from numbers, maps with sorted keys (key order irrelevant), lists
// in order, null distinct from absent. A filter becomes {mdx: {$all:
// [tokens]}}; keys and values are only ever hashed, never placed in a query
// as field names or operators, so "$where", "a.b" or {"$ne": 1} are matched
// literally. Each candidate is then checked with [spec.MatchFilter] on the
// exact metadata, which guards against hash collisions; when a filter is
// present the limit is counted after that check. DeleteForRuns finds its
// checkpoints the same way, a page at a time.
//
// # FerretDB-driven choices
//
// FerretDB v1.24 (SQLite backend) is not MongoDB. Every choice below is a
// form both servers support:
//
//   - No $expr/$getField (FerretDB: "$eq is not implemented" inside $expr),
//     and FerretDB rejects field names that start with '$' or contain '.'.
//     Hence the token array for filters instead of querying the metadata
//     sub-document, and escaped keys in that sub-document ('%' → %25,
//     '$' → %24, '.' → %2E, NUL → %00). The sub-document is for people and
//     ad-hoc queries; the saver never reads it.
//   - FerretDB v1 rejects arrays nested directly in arrays: the readable
//     sub-document wraps such an inner array as {"%array": [...]} (no
//     escaped key starts with '%' and a letter). The exact metadata always
//     comes from the encoded copy.
//   - No multi-document transactions, and an update or delete of many
//     documents stops half-way when its client goes away: hence the
//     write-then-mark order, the pins and the fences above.
//   - distinct rejects the maxTimeMS the driver adds under a context
//     deadline ("distinct: unknown field maxTimeMS"): Prune finds a
//     thread's namespaces with one indexed find per namespace instead.
//   - A find whose batch size equals its limit leaves its cursor open: List
//     asks for one more than a page, so the first reply closes it.
//   - Concurrent upserts of one key can fail with E11000 on FerretDB
//     (MongoDB retries them in the server); every upsert is idempotent, so
//     the saver retries duplicate-key errors a few times.
//   - createIndexes listing two or more indexes that already exist panics
//     FerretDB's handler (a slice index bug in validateIndexesForCreation):
//     Setup creates indexes one per command, which is idempotent on both.
//   - No TTL or partial indexes, no change streams, no $group (FerretDB
//     gives wrong results with two $sum accumulators), no $inc/$max
//     (non-atomic under concurrency on FerretDB): the saver uses none.
//   - Put inserts first and upserts only keys that already exist, and
//     large-payload chunks are plain inserts with _ids derived from their
//     owner and content (a duplicate means identical bytes: only its pin
//     is renewed): on FerretDB an upsert scans the collection first, which
//     makes writes slow down as history grows and costs seconds when the
//     collection holds megabytes of chunks; an insert does not scan.
//   - Explain output differs: MongoDB reports a winning plan of stages;
//     FerretDB reports SQLite's query plan and filterPushdown/sortPushdown/
//     limitPushdown flags. TestExplain asserts index scans without SORT on
//     MongoDB and pins FerretDB's pushdown flags.
//
// # Performance on FerretDB
//
// FerretDB v1's SQLite backend pushes down only a filter that is exactly
// {_id: <string>} (internal/backends/sqlite/collection.go), never a sort, a
// range or a compound filter: every other query reads the whole collection
// and filters and sorts in FerretDB's memory. Even the _id lookup scans,
// because the SQL it generates (_ferretdb_sjson->'$._id') does not match the
// expression of its _id index (_ferretdb_sjson->"_id"). Reads and upserts
// therefore cost time proportional to the collection size on FerretDB,
// whatever the adapter does; the indexes and query shapes above make them
// logarithmic on MongoDB. Benchmarks on FerretDB measure FerretDB.
//
// # Lost connections
//
// A call that could not reach the server, or lost its connection, fails
// with an error that wraps [spec.ErrUnavailable] and keeps the driver's
// error for errors.As. What it left is whole or nothing by the design
// above: a Put is visible only once its checkpoint names values that are
// all stored, a PutWrites call is one document, and maintenance states its
// effect in a fence first, which the next write to the thread finishes.
// Before failing, a call that lost its connection is made again, at most
// twice, unless the driver already waited for the server in vain (a failed
// server selection): the driver keeps dead idle connections after a restart
// or a network cut, and retries writes only on replica sets. Every method is
// idempotent, so a repeated call leaves what one call leaves. The
// conformance suite's faults group checks all of this through a
// fault-injecting proxy, and, on FerretDB, across a real server restart.
package mongo
