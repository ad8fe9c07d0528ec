package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DefaultDatabase is the database used when [WithDatabase] is not given.
const DefaultDatabase = "checkpointkit"

// Collection names, after the prefix set with [WithCollectionPrefix].
const (
	CheckpointsCollection = "checkpoints"
	WritesCollection      = "checkpoint_writes"
	ValuesCollection      = "checkpoint_values"
	BlobsCollection       = "checkpoint_blobs"
)

// Saver is a [spec.Saver] backed by MongoDB or a MongoDB wire-compatible
// server. It is safe for concurrent use. Create it with [New] or [Open] and
// call [Saver.Setup] once before use.
type Saver struct {
	client *mongo.Client
	owned  bool
	serde  spec.Serde
	dbName string
	prefix string
	txn    bool

	db          *mongo.Database
	checkpoints *mongo.Collection
	writes      *mongo.Collection
	values      *mongo.Collection
	blobs       *mongo.Collection
}

var (
	_ spec.Saver            = (*Saver)(nil)
	_ spec.ThreadCopier     = (*Saver)(nil)
	_ spec.RunDeleter       = (*Saver)(nil)
	_ spec.Pruner           = (*Saver)(nil)
	_ spec.VersionGenerator = (*Saver)(nil)
)

// Option configures a [Saver].
type Option func(*Saver)

// WithDatabase sets the database name; the default is [DefaultDatabase].
func WithDatabase(name string) Option {
	return func(s *Saver) { s.dbName = name }
}

// WithCollectionPrefix prepends prefix to every collection name, so that
// several independent savers can share one database.
func WithCollectionPrefix(prefix string) Option {
	return func(s *Saver) { s.prefix = prefix }
}

// WithSerde sets the serde that encodes channel values, write values,
// checkpoints and the stored copy of metadata. The default is
// [spec.DefaultSerde].
func WithSerde(sd spec.Serde) Option {
	return func(s *Saver) {
		if sd != nil {
			s.serde = sd
		}
	}
}

// New returns a saver that uses client, which stays owned by the caller:
// [Saver.Close] does not disconnect it. New does not contact the server;
// call [Saver.Setup] before first use.
func New(ctx context.Context, client *mongo.Client, opts ...Option) (*Saver, error) {
	if client == nil {
		return nil, fmt.Errorf("mongo: new: nil client: %w", spec.ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Saver{client: client, serde: spec.DefaultSerde(), dbName: DefaultDatabase}
	for _, o := range opts {
		o(s)
	}
	if s.dbName == "" {
		return nil, fmt.Errorf("mongo: new: empty database name: %w", spec.ErrInvalidArgument)
	}
	s.db = client.Database(s.dbName)
	s.checkpoints = s.db.Collection(s.prefix + CheckpointsCollection)
	s.writes = s.db.Collection(s.prefix + WritesCollection)
	s.values = s.db.Collection(s.prefix + ValuesCollection)
	s.blobs = s.db.Collection(s.prefix + BlobsCollection)
	return s, nil
}

// Open connects to uri, checks the server answers ping, and returns a saver
// that owns the connection: [Saver.Close] disconnects it. Call
// [Saver.Setup] before first use.
func Open(ctx context.Context, uri string, opts ...Option) (*Saver, error) {
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return nil, fmt.Errorf("mongo: open: %w", err)
	}
	if err := client.Ping(ctx, nil); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, wrapErr(ctx, "open: ping", err)
	}
	s, err := New(ctx, client, opts...)
	if err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Close disconnects the client if the saver opened it ([Open]); a client
// passed to [New] is left alone.
func (s *Saver) Close(ctx context.Context) error {
	if !s.owned {
		return nil
	}
	if err := s.client.Disconnect(ctx); err != nil {
		return fmt.Errorf("mongo: close: %w", err)
	}
	return nil
}

// Database returns the database the saver stores its collections in.
func (s *Saver) Database() *mongo.Database { return s.db }

// indexSpecs lists every index the saver needs, by collection.
func (s *Saver) indexSpecs() map[*mongo.Collection][]mongo.IndexModel {
	unique := func(name string) *options.IndexOptionsBuilder {
		return options.Index().SetName(name).SetUnique(true)
	}
	named := func(name string) *options.IndexOptionsBuilder { return options.Index().SetName(name) }
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
			{Keys: bson.D{{Key: "thread", Value: 1}, {Key: "ns", Value: 1}, {Key: "cid", Value: 1}, {Key: "task", Value: 1}, {Key: "idx", Value: 1}}, Options: unique("thread_ns_cid_task_idx")},
		},
		s.values: {
			{Keys: bson.D{{Key: "thread", Value: 1}, {Key: "ns", Value: 1}, {Key: "channel", Value: 1}, {Key: "version", Value: 1}}, Options: unique("thread_ns_channel_version")},
		},
		s.blobs: {
			{Keys: bson.D{{Key: "thread", Value: 1}, {Key: "blob", Value: 1}, {Key: "n", Value: 1}}, Options: unique("thread_blob_n")},
		},
	}
}

// Setup creates the saver's indexes. It is idempotent and may run on
// collections that already exist and hold data: createIndexes with an
// existing name and identical keys is a no-op on MongoDB and FerretDB, so
// every index is requested every time, by name (never by counting the
// indexes a collection has). Indexes are created one per command: FerretDB
// v1.24 panics on a createIndexes command that lists two or more indexes
// which already exist.
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

// NextVersion returns [spec.NextVersion] of current.
func (s *Saver) NextVersion(current spec.Version) spec.Version {
	return spec.NextVersion(current)
}

// wrapErr adds the operation to a backend error. When the context is done,
// the result also wraps ctx.Err(), so that errors.Is(err, ctx.Err()) holds
// whatever error the driver chose to report.
func wrapErr(ctx context.Context, op string, err error) error {
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
