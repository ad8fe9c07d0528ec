package postgres

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestTwoSchemasSideBySide(t *testing.T) {
	a := newTestSaver(t)
	b := newTestSaver(t)
	mustPut(t, a, spec.Config{ThreadID: "same"}, spec.Checkpoint{ID: "1"}, spec.Metadata{"who": "a"}, nil)
	mustPut(t, b, spec.Config{ThreadID: "same"}, spec.Checkpoint{ID: "2"}, spec.Metadata{"who": "b"}, nil)
	for _, c := range []struct {
		s    *Saver
		want string
	}{{a, "same//1"}, {b, "same//2"}} {
		if got := ids(listAll(t, c.s, spec.ListOptions{AllNamespaces: true})); !slices.Equal(got, []string{c.want}) {
			t.Errorf("schema %s sees %v, want [%s]", c.s.Schema(), got, c.want)
		}
	}
	if err := a.DeleteThread(context.Background(), "same"); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, b, spec.ListOptions{}); len(got) != 1 {
		t.Errorf("delete in one schema touched the other: %v", ids(got))
	}
}

// TestSearchPathIndependent sets a hostile search_path on every connection
// of a pool: the saver must not care.
func TestSearchPathIndependent(t *testing.T) {
	base := testPool(t)
	cfg := base.Config().Copy()
	cfg.ConnConfig.RuntimeParams["search_path"] = "pg_catalog"
	pool := newPool(t, cfg)
	s := newTestSaver(t)
	other, err := New(context.Background(), pool, WithSchema(s.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, other, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1"}, nil, nil)
	if got := listAll(t, s, spec.ListOptions{}); len(got) != 1 {
		t.Errorf("got %v", ids(got))
	}
}

// TestPoolerModes runs a small workload in every query mode a pooler
// setup may need; the simple protocol and exec modes use no prepared
// statements.
func TestPoolerModes(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{
		pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol,
	} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newTestSaver(t, WithQueryExecMode(mode))
			runWorkload(t, s)
		})
	}
	t.Run("WithoutPreparedStatements/no-statements-prepared", func(t *testing.T) {
		// A pool whose connections fail on any prepared statement would
		// be the real test; instead check that the exec mode leaves no
		// prepared statement behind in the session.
		cfg := testPool(t).Config().Copy()
		cfg.MaxConns = 1
		pool := newPool(t, cfg)
		s0 := newTestSaver(t)
		s, err := New(context.Background(), pool, WithSchema(s0.Schema()), WithoutPreparedStatements())
		if err != nil {
			t.Fatal(err)
		}
		runWorkload(t, s)
		var n int
		if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM pg_prepared_statements",
			pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d prepared statements in the session, want 0", n)
		}
	})
}

func runWorkload(t *testing.T, s *Saver) {
	t.Helper()
	ctx := context.Background()
	cp := spec.Checkpoint{ID: "1", ChannelValues: map[string]any{"c": []byte("v"), "d": "x"}, ChannelVersions: spec.Versions{"c": "1", "d": "1"}}
	mustPut(t, s, spec.Config{ThreadID: "t"}, cp, spec.Metadata{"k": "v", "n": 1.5}, spec.Versions{"c": "1", "d": "1"})
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"},
		[]spec.Write{{Channel: "c", Value: []byte{0}}, {Channel: spec.InterruptChannel, Value: "i"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	got := listAll(t, s, spec.ListOptions{ThreadID: "t", Filter: spec.Metadata{"k": "v", "n": 1.5}, Before: "2", Limit: 5})
	if len(got) != 1 || len(got[0].PendingWrites) != 2 || !reflect.DeepEqual(got[0].Checkpoint.ChannelValues["c"], []byte("v")) {
		t.Fatalf("list: %+v", got)
	}
	if err := s.CopyThread(ctx, "t", "u"); err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, []string{"t", "u"}, spec.KeepLatest); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteForRuns(ctx, []string{"r"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, "u"); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, s, spec.ListOptions{AllNamespaces: true}); len(got) != 1 {
		t.Fatalf("after delete: %v", ids(got))
	}
}
