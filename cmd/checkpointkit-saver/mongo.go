package main

import (
	"context"
	"errors"
	"fmt"

	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// mongoSaver is a MongoDB saver whose Close also drops its database.
type mongoSaver struct {
	*mongo.Saver
	release func() error
}

// Close disconnects the saver and drops its database.
func (s *mongoSaver) Close() error { return s.release() }

// newMongo serves savers in fresh databases of one server; a client of its
// own drops them.
func newMongo(ctx context.Context, uri string) (*backend, error) {
	admin, err := mongodrv.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return nil, fmt.Errorf("mongo: %w", err)
	}
	if err := admin.Ping(ctx, nil); err != nil {
		_ = admin.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("mongo: %w", err)
	}
	var live storages
	open := func(ctx context.Context) (spec.Saver, error) {
		db := randomName("ckbridge_")
		drop := func(ctx context.Context) error {
			if err := admin.Database(db).Drop(ctx); err != nil {
				return fmt.Errorf("mongo: drop database %s: %w", db, err)
			}
			return nil
		}
		s, err := mongo.Open(ctx, uri, mongo.WithDatabase(db)) // creates the collections and indexes
		if err != nil {
			return nil, errors.Join(err, drop(context.WithoutCancel(ctx)))
		}
		live.add(db, func(ctx context.Context) error {
			return errors.Join(s.Close(), drop(ctx))
		})
		return &mongoSaver{Saver: s, release: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
			defer cancel()
			return live.release(ctx, db)
		}}, nil
	}
	return &backend{
		open: open,
		close: func(ctx context.Context) error {
			err := live.releaseAll(ctx)
			return errors.Join(err, admin.Disconnect(ctx))
		},
	}, nil
}
