package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/adapters/postgres"
	"github.com/checkpointkit/checkpointkit/spec"
)

// dropTimeout bounds the release of one saver's schema or database.
const dropTimeout = 30 * time.Second

// postgresSaver is a PostgreSQL saver whose Close also drops its schema.
type postgresSaver struct {
	*postgres.Saver
	release func() error
}

// Close closes the saver's pool and drops its schema.
func (s *postgresSaver) Close() error { return s.release() }

// newPostgres serves savers in fresh schemas of one database; a pool of
// its own drops them.
func newPostgres(ctx context.Context, dsn string) (*backend, error) {
	admin, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := admin.Ping(ctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	var live storages
	open := func(ctx context.Context) (spec.Saver, error) {
		schema := randomName("ckbridge_")
		drop := func(ctx context.Context) error {
			_, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			if err != nil {
				return fmt.Errorf("postgres: drop schema %s: %w", schema, err)
			}
			return nil
		}
		s, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema)) // creates and migrates the schema
		if err != nil {
			return nil, errors.Join(err, drop(context.WithoutCancel(ctx)))
		}
		live.add(schema, func(ctx context.Context) error {
			return errors.Join(s.Close(), drop(ctx))
		})
		return &postgresSaver{Saver: s, release: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
			defer cancel()
			return live.release(ctx, schema)
		}}, nil
	}
	return &backend{
		open: open,
		close: func(ctx context.Context) error {
			defer admin.Close()
			return live.releaseAll(ctx)
		},
	}, nil
}
