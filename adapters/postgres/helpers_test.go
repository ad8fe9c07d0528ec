package postgres

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// dsnEnv names the environment variable the tests read the database from.
const dsnEnv = "CHECKPOINTKIT_POSTGRES_DSN"

// testDSN returns the DSN of the test database. Without one, the test
// fails when running in CI or when the caller asked for backends, and is
// skipped otherwise.
func testDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn != "" {
		return dsn
	}
	msg := dsnEnv + " is not set; point it at a PostgreSQL database the tests may create schemas in, e.g. " +
		dsnEnv + "='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' (ci/ scripts start a throwaway server)"
	if os.Getenv("CI") != "" || os.Getenv("CHECKPOINTKIT_REQUIRE_BACKENDS") != "" {
		tb.Fatal("PostgreSQL is required here (CI or CHECKPOINTKIT_REQUIRE_BACKENDS is set): " + msg)
	}
	tb.Skip(msg)
	return ""
}

var shared struct {
	once sync.Once
	pool *pgxpool.Pool
	err  error
}

// testPool returns a pool shared by every test of the package.
func testPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	dsn := testDSN(tb)
	shared.once.Do(func() {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			shared.err = err
			return
		}
		ConfigurePool(cfg)
		if cfg.MaxConns < 8 {
			cfg.MaxConns = 8
		}
		shared.pool, shared.err = pgxpool.NewWithConfig(context.Background(), cfg)
		if shared.err == nil {
			shared.err = shared.pool.Ping(context.Background())
		}
	})
	if shared.err != nil {
		tb.Fatalf("connect to %s: %v", dsnEnv, shared.err)
	}
	return shared.pool
}

var schemaSeq atomic.Int64

// uniqueSchema returns a schema name no other test process uses; the
// quote, dollar, dot, space, percent and braces check that identifiers are
// quoted and never treated as a format or template.
func uniqueSchema(prefix string) string {
	return fmt.Sprintf(`ck "%s$%d.%d%%s{c}`, prefix, os.Getpid(), schemaSeq.Add(1))
}

// unsetSaver returns a saver over the shared pool whose schema (named by
// opts, or [DefaultSchema]) Setup has not touched.
func unsetSaver(tb testing.TB, pool *pgxpool.Pool, opts ...Option) *Saver {
	tb.Helper()
	o, err := newOptions("test", opts)
	if err != nil {
		tb.Fatal(err)
	}
	return newSaver(pool, o)
}

// newTestSaver returns a set-up saver in a fresh schema, dropped when the
// test ends.
func newTestSaver(tb testing.TB, opts ...Option) *Saver {
	tb.Helper()
	pool := testPool(tb)
	ctx := context.Background()
	s, err := New(ctx, pool, append([]Option{WithSchema(uniqueSchema("t"))}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.DropSchema(context.Background()); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	return s
}

// Isolation strategies for conformance specs; see schemaPool.
const (
	isolateTruncate = "truncate" // reuse schemas, emptied with TRUNCATE
	isolateDelete   = "delete"   // reuse schemas, emptied with DELETE
	isolateSchema   = "schema"   // a new schema per spec, dropped after it
)

// schemaPool hands out empty, set-up schemas. With isolateTruncate or
// isolateDelete it takes them back after a spec, emptied, for the next one;
// with isolateSchema every spec creates, migrates and drops its own.
// docs/benchmarks.md has the measured cost of each.
type schemaPool struct {
	pool     *pgxpool.Pool
	prefix   string
	strategy string
	mu       sync.Mutex
	free     []*Saver
	all      []*Saver
}

func (p *schemaPool) acquire(ctx context.Context, opts ...Option) (*Saver, func(), error) {
	p.mu.Lock()
	var s *Saver
	if n := len(p.free); n > 0 && len(opts) == 0 {
		s = p.free[n-1]
		p.free = p.free[:n-1]
	}
	p.mu.Unlock()
	if s == nil {
		var err error
		s, err = New(ctx, p.pool, append([]Option{WithSchema(uniqueSchema(p.prefix))}, opts...)...)
		if err != nil {
			return nil, nil, err
		}
		if p.strategy == isolateSchema {
			return s, func() { _ = s.DropSchema(context.Background()) }, nil
		}
		p.mu.Lock()
		p.all = append(p.all, s)
		p.mu.Unlock()
	}
	release := func() {
		var err error
		if p.strategy == isolateDelete {
			_, err = p.pool.Exec(context.Background(), "WITH a AS (DELETE FROM "+s.q.writes+"), b AS (DELETE FROM "+s.q.blobs+") DELETE FROM "+s.q.checkpoints)
		} else {
			_, err = p.pool.Exec(context.Background(), "TRUNCATE "+s.q.checkpoints+", "+s.q.blobs+", "+s.q.writes)
		}
		if err != nil {
			return // not reused; dropped at the end
		}
		p.mu.Lock()
		p.free = append(p.free, s)
		p.mu.Unlock()
	}
	return s, release, nil
}

// dropAll drops every schema the pool created.
func (p *schemaPool) dropAll(tb testing.TB) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.all {
		if err := s.DropSchema(context.Background()); err != nil {
			tb.Errorf("drop schema %s: %v", s.schema, err)
		}
	}
	p.all, p.free = nil, nil
}
