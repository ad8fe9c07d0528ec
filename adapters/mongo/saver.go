package mongo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Collection names, after the prefix set with [WithCollectionPrefix].
const (
	CheckpointsCollection = "checkpoints"
	WritesCollection      = "checkpoint_write_batches"
	ValuesCollection      = "checkpoint_values"
	BlobsCollection       = "checkpoint_blobs"
	// OpsCollection holds the fences of maintenance calls in progress or
	// interrupted; see the package doc.
	OpsCollection = "checkpoint_ops"
)

// Saver is a [spec.Saver] backed by MongoDB or a MongoDB wire-compatible
// server. It also implements [spec.ThreadCopier], [spec.RunDeleter],
// [spec.Pruner] and [spec.VersionGenerator]. It is safe for concurrent use.
// Create it with [Open] or [New].
type Saver struct {
	client     *mongo.Client
	ownsClient bool
	serde      spec.Serde
	txn        bool
	pageSize   int

	// hook, set only by tests, is called at named points of an operation
	// (the hook* constants) so that tests can force interleavings.
	hook func(point string)

	db          *mongo.Database
	checkpoints *mongo.Collection
	writes      *mongo.Collection
	values      *mongo.Collection
	blobs       *mongo.Collection
	ops         *mongo.Collection

	closeOnce sync.Once
	closeErr  error
}

var (
	_ io.Closer             = (*Saver)(nil)
	_ spec.Saver            = (*Saver)(nil)
	_ spec.ThreadCopier     = (*Saver)(nil)
	_ spec.RunDeleter       = (*Saver)(nil)
	_ spec.Pruner           = (*Saver)(nil)
	_ spec.VersionGenerator = (*Saver)(nil)
)

// newSaver returns a saver over client configured by o, without contacting
// the server.
func newSaver(client *mongo.Client, o options) *Saver {
	db := client.Database(o.dbName)
	return &Saver{
		client: client, serde: o.serde, txn: o.txn, pageSize: o.pageSize,
		db:          db,
		checkpoints: db.Collection(o.prefix + CheckpointsCollection),
		writes:      db.Collection(o.prefix + WritesCollection),
		values:      db.Collection(o.prefix + ValuesCollection),
		blobs:       db.Collection(o.prefix + BlobsCollection),
		ops:         db.Collection(o.prefix + OpsCollection),
	}
}

// Open connects a client of its own to target, a MongoDB connection string
// ("mongodb://..." or "mongodb+srv://..."), and runs [Saver.Setup], so the
// saver it returns is ready to use. The saver owns the client:
// [Saver.Close] disconnects it. An empty or malformed target, or an
// invalid option, is an error wrapping [spec.ErrInvalidArgument].
func Open(ctx context.Context, target string, opts ...Option) (*Saver, error) {
	o, err := newOptions("open", opts)
	if err != nil {
		return nil, err
	}
	if target == "" {
		return nil, fmt.Errorf("mongo: open: empty target: %w", spec.ErrInvalidArgument)
	}
	co := mopts.Client().ApplyURI(target)
	if err := co.Validate(); err != nil {
		return nil, fmt.Errorf("mongo: open: %w: %w", spec.ErrInvalidArgument, err)
	}
	client, err := mongo.Connect(co)
	if err != nil {
		return nil, fmt.Errorf("mongo: open: %w", err)
	}
	s := newSaver(client, o)
	s.ownsClient = true
	if err := s.Setup(ctx); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

// New returns a saver over client, after running [Saver.Setup] through it,
// so the saver is ready to use. client stays owned by the caller:
// [Saver.Close] leaves it connected. A nil client or an invalid option is
// an error wrapping [spec.ErrInvalidArgument].
func New(ctx context.Context, client *mongo.Client, opts ...Option) (*Saver, error) {
	o, err := newOptions("new", opts)
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("mongo: new: nil client: %w", spec.ErrInvalidArgument)
	}
	s := newSaver(client, o)
	if err := s.Setup(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Close disconnects the client if [Open] connected it, waiting for
// operations in flight; a client passed to [New] stays connected, owned by
// the caller. Close is idempotent: later calls return the first call's
// result. The saver must not be used afterwards.
func (s *Saver) Close() error {
	s.closeOnce.Do(func() {
		if s.ownsClient {
			if err := s.client.Disconnect(context.Background()); err != nil {
				s.closeErr = fmt.Errorf("mongo: close: %w", err)
			}
		}
	})
	return s.closeErr
}

// Database returns the database the saver stores its collections in.
func (s *Saver) Database() *mongo.Database { return s.db }

// indexSpecs lists every index the saver needs, by collection.
func (s *Saver) indexSpecs() map[*mongo.Collection][]mongo.IndexModel {
	unique := func(name string) *mopts.IndexOptionsBuilder {
		return mopts.Index().SetName(name).SetUnique(true)
	}
	named := func(name string) *mopts.IndexOptionsBuilder { return mopts.Index().SetName(name) }
	return map[*mongo.Collection][]mongo.IndexModel{
		s.checkpoints: {
			// Identity; also serves GetTuple(latest) and List of one
			// namespace (equality on thread and ns, then id descending).
			{Keys: bson.D{{Key: "thread", Value: 1}, {Key: "ns", Value: 1}, {Key: "id", Value: 1}}, Options: unique("thread_ns_id")},
			// List of one thread across namespaces: id desc, then ns.
			{Keys: bson.D{{Key: "thread", Value: 1}, {Key: "id", Value: -1}, {Key: "ns", Value: 1}}, Options: named("thread_id_ns")},
			// List across threads: id desc, then thread, then ns.
			{Keys: bson.D{{Key: "id", Value: -1}, {Key: "thread", Value: 1}, {Key: "ns", Value: 1}}, Options: named("id_thread_ns")},
			// Metadata filter tokens (multikey).
			{Keys: bson.D{{Key: "mdx", Value: 1}}, Options: named("mdx")},
		},
		s.writes: {
			{Keys: bson.D{{Key: "thread", Value: 1}, {Key: "ns", Value: 1}, {Key: "cid", Value: 1}, {Key: "task", Value: 1}, {Key: "seq", Value: 1}}, Options: unique("thread_ns_cid_task_seq")},
		},
		s.values: {
			{Keys: bson.D{{Key: "thread", Value: 1}, {Key: "ns", Value: 1}, {Key: "channel", Value: 1}, {Key: "version", Value: 1}}, Options: unique("thread_ns_channel_version")},
		},
		s.blobs: {
			{Keys: bson.D{{Key: "thread", Value: 1}, {Key: "blob", Value: 1}, {Key: "n", Value: 1}}, Options: unique("thread_blob_n")},
		},
	}
}

// Setup creates the saver's collections' indexes; [Open] and [New] have
// already run it, so call it again only if something else may have
// dropped them. It is idempotent, safe to call concurrently (from one
// process or several), and may run on collections that already exist and
// hold data: createIndexes with an existing name and identical keys is a
// no-op on MongoDB and FerretDB, so every index is requested every time,
// by name (never by counting the indexes a collection has). Indexes are
// created one per command: FerretDB v1.24 panics on a createIndexes
// command that lists two or more indexes which already exist.
func (s *Saver) Setup(ctx context.Context) error {
	for coll, models := range s.indexSpecs() {
		for _, m := range models {
			if _, err := coll.Indexes().CreateOne(ctx, m); err != nil {
				return wrapErr(ctx, "setup: create indexes on "+coll.Name(), err)
			}
		}
	}
	return nil
}

// Points at which tests may interleave other operations (see hook).
const (
	hookPutCheckpoint     = "put: checkpoint document written"
	hookPutValues         = "put: values written"
	hookWritesBatch       = "put writes: batch document written"
	hookListPage          = "list: page of checkpoint documents read"
	hookDeleteCheckpoints = "delete thread: checkpoints deleted"
	hookPruneLatest       = "prune: latest checkpoints found"
	hookGCCandidates      = "gc: candidates read"
	hookGCRefs            = "gc: live references read"
	hookRunsHeld          = "delete for runs: checkpoints held"
	hookCopyHeld          = "copy thread: checkpoints written, held"
	hookFenced            = "maintenance: fence inserted"
)

// at calls the test hook, if any.
func (s *Saver) at(point string) {
	if s.hook != nil {
		s.hook(point)
	}
}

// Prefixes of checkpointDoc.Hold.
const (
	holdRuns    = "runs:"
	holdRunsEnd = "runs;" // the first string after every "runs:..."
	holdCopy    = "copy:"
)

// newPin returns a random token for the pin of the documents one
// operation writes.
func newPin() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// NextVersion returns [spec.NextVersion] of current.
func (s *Saver) NextVersion(current spec.Version) spec.Version {
	return spec.NextVersion(current)
}

// wrapErr adds the operation to a backend error (nil stays nil). When the
// context is done,
// the result also wraps ctx.Err(), so that errors.Is(err, ctx.Err()) holds
// whatever error the driver chose to report.
func wrapErr(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("mongo: %s: %w (%w)", op, cerr, err)
	}
	return fmt.Errorf("mongo: %s: %w", op, err)
}

// maxDupRetries bounds the retries of an upsert that lost a race on a
// unique key.
const maxDupRetries = 8

// retryDuplicates runs fn, and runs it again while it fails with a
// duplicate-key error. Two concurrent upserts of the same key can both miss
// and both insert; MongoDB retries the loser on the server, FerretDB reports
// E11000 to the client. Every write the saver retries this way is an
// idempotent upsert, so running it again is safe.
func retryDuplicates(ctx context.Context, fn func() error) error {
	var err error
	for attempt := range maxDupRetries {
		if err = fn(); err == nil || !mongo.IsDuplicateKeyError(err) {
			return err
		}
		if ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
	return err
}

// cleanupContext returns a context for releasing resources (closing a
// cursor) that still works when ctx has been cancelled.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}
