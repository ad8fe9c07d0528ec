package postgres

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/spec"
)

// wireCounter counts round trips on the connections of a pool: a round trip
// starts when the client writes after having read (or for the first time),
// so a batch or pipeline flushed in several writes before its replies are
// read counts once. It also counts, through pgx's tracer hooks, the
// statements and prepares pgx sends.
type wireCounter struct {
	mu       sync.Mutex
	trips    int
	wrote    bool // a write since the last read
	queries  []string
	prepares int
}

func (c *wireCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips, c.wrote, c.queries, c.prepares = 0, false, nil, 0
}

func (c *wireCounter) snapshot() (trips int, queries []string, prepares int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trips, append([]string(nil), c.queries...), c.prepares
}

func (c *wireCounter) write() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.wrote {
		c.trips++
		c.wrote = true
	}
}

func (c *wireCounter) read() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wrote = false
}

// TraceQueryStart implements pgx.QueryTracer.
func (c *wireCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queries = append(c.queries, strings.Join(strings.Fields(data.SQL), " "))
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (c *wireCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TracePrepareStart implements pgx.PrepareTracer.
func (c *wireCounter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prepares++
	return ctx
}

// TracePrepareEnd implements pgx.PrepareTracer.
func (c *wireCounter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// countingConn reports every read and write of a connection to a counter.
type countingConn struct {
	net.Conn
	c *wireCounter
}

func (cc countingConn) Write(p []byte) (int, error) {
	cc.c.write()
	return cc.Conn.Write(p)
}

func (cc countingConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	if n > 0 {
		cc.c.read()
	}
	return n, err
}

// TestOneRoundTripPerCall checks, on the wire, that Put, PutWrites,
// GetTuple and each List page take exactly one round trip to the server
// once pgx has prepared the statements (the first call of each prepares it:
// pgx's statement cache), and that each sends one statement.
func TestOneRoundTripPerCall(t *testing.T) {
	dsn := testDSN(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ConfigurePool(cfg)
	counter := &wireCounter{}
	cfg.ConnConfig.Tracer = counter
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: conn, c: counter}, nil
	}
	// One connection, never pinged on acquire: the pool's liveness checks
	// are not the adapter's round trips.
	cfg.MinConns, cfg.MaxConns = 1, 1
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := New(ctx, pool, WithSchema(uniqueSchema("rt")))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.DropSchema(context.Background()); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	}()

	thread := "rt"
	var parent string
	version := spec.Version("")
	payload := strings.Repeat("x", 1024)
	put := func(step int) (spec.Config, error) {
		version = s.NextVersion(version)
		nv := spec.Versions{"messages": version}
		cp := spec.Checkpoint{V: 4, ID: spec.NewCheckpointID(step), TS: "2026-01-01T00:00:00Z",
			ChannelValues: map[string]any{"messages": payload}, ChannelVersions: nv}
		cfg, err := s.Put(ctx, spec.Config{ThreadID: thread, CheckpointID: parent}, cp, spec.Metadata{"step": step}, nv)
		if err == nil {
			parent = cfg.CheckpointID
		}
		return cfg, err
	}
	putWrites := func(cfg spec.Config, step int) error {
		return s.PutWrites(ctx, cfg, []spec.Write{{Channel: "messages", Value: payload}, {Channel: "step", Value: step}}, "task", "")
	}
	list := func(opts spec.ListOptions) (int, error) {
		n := 0
		for _, err := range s.List(ctx, opts) {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	// Warm up: the first call of each statement prepares it.
	for step := range 25 {
		cfg, err := put(step)
		if err != nil {
			t.Fatal(err)
		}
		if err := putWrites(cfg, step); err != nil {
			t.Fatal(err)
		}
	}
	for _, cfg := range []spec.Config{{ThreadID: thread}, {ThreadID: thread, CheckpointID: parent}} {
		if _, err := s.GetTuple(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []spec.ListOptions{{ThreadID: thread, Limit: 10}, {ThreadID: thread}} {
		if _, err := list(o); err != nil {
			t.Fatal(err)
		}
	}

	check := func(name string, wantTrips int, op func() error) {
		t.Helper()
		counter.reset()
		if err := op(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		trips, queries, prepares := counter.snapshot()
		t.Logf("%s: %d round trip(s), %d statement(s), %d prepare(s)", name, trips, len(queries), prepares)
		if trips != wantTrips || len(queries) != wantTrips || prepares != 0 {
			t.Errorf("%s: %d round trips, %d statements, %d prepares; want %d, %d, 0\nstatements: %q",
				name, trips, len(queries), prepares, wantTrips, wantTrips, queries)
		}
	}
	var last spec.Config
	check("Put", 1, func() error { var err error; last, err = put(100); return err })
	check("PutWrites", 1, func() error { return putWrites(last, 100) })
	check("GetTuple latest", 1, func() error {
		_, err := s.GetTuple(ctx, spec.Config{ThreadID: thread})
		return err
	})
	check("GetTuple by ID", 1, func() error {
		_, err := s.GetTuple(ctx, spec.Config{ThreadID: thread, CheckpointID: last.CheckpointID})
		return err
	})
	check("List limit 10 (one page)", 1, func() error {
		n, err := list(spec.ListOptions{ThreadID: thread, Limit: 10})
		if err == nil && n != 10 {
			t.Errorf("List limit 10 returned %d", n)
		}
		return err
	})
	// 26 checkpoints without a limit: pages of 10 and 20 (see pageLen).
	check("List all (two pages)", 2, func() error {
		n, err := list(spec.ListOptions{ThreadID: thread})
		if err == nil && n != 26 {
			t.Errorf("List returned %d, want 26", n)
		}
		return err
	})
}
