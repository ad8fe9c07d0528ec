// Package mongo is checkpointkit's MongoDB checkpoint saver, built on the
// official driver (go.mongodb.org/mongo-driver/v2). It implements
// [spec.Saver] and every optional capability ([spec.ThreadCopier],
// [spec.RunDeleter], [spec.Pruner], [spec.VersionGenerator]) and works on
// MongoDB 6 and later and on FerretDB v1, the wire-compatible server
// checkpointkit's CI runs (see ci/ferretdb).
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
// Four collections (names after an optional [WithCollectionPrefix]):
//
//   - checkpoints: one document per checkpoint: thread, ns, id, parent, the
//     checkpoint without values (cp) and the metadata (meta, the exact typed
//     copy reads use) both in a fixed MessagePack encoding, the metadata
//     again as a readable BSON sub-document (metadata; null when the metadata is
//     above 1 MiB encoded or nested more than 64 levels, so that no
//     document can exceed BSON's size or depth limits), and one filter token per
//     top-level metadata entry (mdx). Indexes: unique (thread, ns, id) —
//     identity, GetTuple(latest) and List of one namespace; (thread, id -1,
//     ns) — List of a thread across namespaces; (id -1, thread, ns) — List
//     across threads; (mdx) — filters.
//   - checkpoint_values: one document per (thread, ns, channel, version),
//     unique index on those four fields; has=false records a cleared
//     channel.
//   - checkpoint_writes: one document per pending write, unique index on
//     (thread, ns, cid, task, idx).
//   - checkpoint_blobs: chunks of payloads too large to inline (above 4 MiB
//     encoded), unique index on (thread, blob, n).
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
// the plans). List streams from one cursor, reads a page of checkpoints at
// a time, and loads the values, pending writes and large-payload chunks of
// the whole page with one query each. Breaking out of the loop closes the
// cursor.
//
// IDs, threads and namespaces are compared byte-wise: MongoDB compares
// strings without a collation by their UTF-8 bytes, and FerretDB's SQLite
// backend sorts in Go, which does the same (TestByteWiseOrder covers
// non-ASCII, mixed case and control characters). Pending writes are
// ordered in Go.
//
// # Writes without transactions
//
// Put writes the values of the new channel versions first and the
// checkpoint document last, so a checkpoint becomes visible only once every
// value it references is stored; a failed or cancelled Put leaves at most
// unreferenced values, never a torn checkpoint, and a retried Put rewrites
// the same documents: every document has a deterministic _id, and Put
// inserts them in one InsertMany per collection, then replaces those whose
// _id already existed. Large payloads are written before the documents that
// reference them. PutWrites is one
// ordered BulkWrite: $setOnInsert upserts for regular writes (the first
// write of a key wins) and $set upserts for special writes (the last wins);
// an empty list is a no-op. DeleteThread removes checkpoints before the
// values they reference. No operation needs a multi-document transaction;
// [WithTransactions] wraps Put and PutWrites in one anyway, for deployments
// that support them (replica sets, sharded clusters) and want a failed Put
// to leave no stray values either.
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
// checkpoints the same way.
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
//   - No multi-document transactions: the write ordering above replaces
//     them.
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
//     owner and content (a duplicate means identical bytes and is
//     ignored): on FerretDB an upsert scans the collection first, which
//     makes writes slow down as history grows and costs seconds when the
//     collection holds megabytes of chunks; an insert does not scan.
//     PutWrites keeps its upserts, which first-wins and last-wins need.
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
package mongo
