package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/adapters/postgres"
	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/spec"
)

// store is one adapter over fresh, isolated storage, with a way to measure
// the bytes it holds.
type store struct {
	saver spec.Saver
	// bytes returns the bytes stored now.
	bytes func(context.Context) (int64, error)
	close func()
}

// countingSaver is the memory adapter, counting the bytes the default serde
// encodes for each value it stores (the channel values of new versions, the
// pending writes) while counting is on: the serialised data the saver holds,
// without Go's map and struct overhead. It encodes them itself because the
// adapter keeps values with the default serde as Go trees, not as bytes.
type countingSaver struct {
	*memory.Saver
	on    atomic.Bool
	total atomic.Int64
}

func (c *countingSaver) count(v any) {
	if !c.on.Load() {
		return
	}
	if b, err := spec.DefaultSerde().Encode(v); err == nil {
		c.total.Add(int64(len(b)))
	}
}

// Put stores the checkpoint and counts the values of its new versions.
func (c *countingSaver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	out, err := c.Saver.Put(ctx, cfg, cp, md, nv)
	if err == nil {
		for ch := range nv {
			if v, ok := cp.ChannelValues[ch]; ok {
				c.count(v)
			}
		}
	}
	return out, err
}

// PutWrites stores the writes and counts their values.
func (c *countingSaver) PutWrites(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
	err := c.Saver.PutWrites(ctx, cfg, ws, task, path)
	if err == nil {
		for _, w := range ws {
			c.count(w.Value)
		}
	}
	return err
}

// openStore opens a saver of kind name over storage named storage.
func openStore(ctx context.Context, name, tmp, storage string) (*store, *countingSaver, error) {
	switch name {
	case "memory":
		cs := &countingSaver{Saver: memory.New()}
		cs.on.Store(true)
		return &store{
			saver: cs,
			bytes: func(context.Context) (int64, error) { return cs.total.Load(), nil },
			close: func() {},
		}, cs, nil
	case "sqlite":
		path := filepath.Join(tmp, storage+".db")
		s, err := sqlite.Open(ctx, path+"?_synchronous=NORMAL")
		if err != nil {
			return nil, nil, err
		}
		return &store{saver: s, bytes: func(ctx context.Context) (int64, error) { return sqliteBytes(ctx, s.DB()) }, close: func() { s.Close() }}, nil, nil
	case "postgres":
		dsn := os.Getenv("CHECKPOINTKIT_POSTGRES_DSN")
		if dsn == "" {
			return nil, nil, errors.New("CHECKPOINTKIT_POSTGRES_DSN is not set")
		}
		s, err := postgres.Open(ctx, dsn, postgres.WithSchema(storage))
		if err != nil {
			return nil, nil, err
		}
		db, err := pgx.Connect(ctx, dsn)
		if err != nil {
			s.Close()
			return nil, nil, err
		}
		return &store{
			saver: s,
			bytes: func(ctx context.Context) (int64, error) { return postgresBytes(ctx, db, s.Schema()) },
			close: func() {
				db.Close(context.Background())
				s.DropSchema(context.Background())
				s.Close()
			},
		}, nil, nil
	case "mongo":
		uri := os.Getenv("CHECKPOINTKIT_MONGO_URI")
		if uri == "" {
			return nil, nil, errors.New("CHECKPOINTKIT_MONGO_URI is not set")
		}
		s, err := mongo.Open(ctx, uri, mongo.WithDatabase(storage))
		if err != nil {
			return nil, nil, err
		}
		return &store{
			saver: s,
			bytes: func(ctx context.Context) (int64, error) { return mongoBytes(ctx, s) },
			close: func() {
				s.Database().Drop(context.Background())
				s.Close()
			},
		}, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown saver %q", name)
}

// sqliteBytes is the size of the database's pages in use, as its
// connection sees it (WAL frames included): (page_count - freelist_count)
// * page_size.
func sqliteBytes(ctx context.Context, db *sql.DB) (int64, error) {
	var pages, free, size int64
	for _, q := range []struct {
		sql string
		dst *int64
	}{{"PRAGMA page_count", &pages}, {"PRAGMA freelist_count", &free}, {"PRAGMA page_size", &size}} {
		if err := db.QueryRowContext(ctx, q.sql).Scan(q.dst); err != nil {
			return 0, fmt.Errorf("%s: %w", q.sql, err)
		}
	}
	return (pages - free) * size, nil
}

// postgresBytes sums pg_total_relation_size (heap, indexes, TOAST) over
// the tables of schema.
const postgresBytesSQL = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = $1 AND c.relkind = 'r'`

func postgresBytes(ctx context.Context, db *pgx.Conn, schema string) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, postgresBytesSQL, schema).Scan(&n)
	return n, err
}

// mongoBytes sums the BSON size of every document of the saver's
// database, read back (FerretDB's collStats sizes are estimates of its own
// storage, not comparable across servers).
func mongoBytes(ctx context.Context, s *mongo.Saver) (int64, error) {
	db := s.Database()
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, name := range names {
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			return 0, err
		}
		for cur.Next(ctx) {
			n += int64(len(cur.Current))
		}
		if err := cur.Err(); err != nil {
			cur.Close(ctx)
			return 0, err
		}
		cur.Close(ctx)
	}
	return n, nil
}
