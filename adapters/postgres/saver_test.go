package postgres

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/checkpointkit/checkpointkit/spec"
)

func mustPut(tb testing.TB, s *Saver, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) {
	tb.Helper()
	if _, err := s.Put(context.Background(), cfg, cp, md, nv); err != nil {
		tb.Fatalf("put %s/%q/%s: %v", cfg.ThreadID, cfg.Namespace, cp.ID, err)
	}
}

func listAll(tb testing.TB, s *Saver, opts spec.ListOptions) []*spec.Tuple {
	tb.Helper()
	var out []*spec.Tuple
	for t, err := range s.List(context.Background(), opts) {
		if err != nil {
			tb.Fatalf("list %+v: %v", opts, err)
		}
		out = append(out, t)
	}
	return out
}

func ids(ts []*spec.Tuple) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Config.ThreadID + "/" + t.Config.Namespace + "/" + t.Config.CheckpointID
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	s := newTestSaver(t)
	ctx := context.Background()
	cp := spec.Checkpoint{
		V: 4, ID: "0002", TS: "2026-01-01T00:00:00Z",
		ChannelValues: map[string]any{
			"a": int64(1), "b": []byte{0, 1}, "n": nil, "l": []any{}, "m": map[string]any{"x": 1.5},
		},
		ChannelVersions: spec.Versions{"a": "1", "b": "1", "n": "1", "l": "1", "m": "1", "gone": "1"},
		VersionsSeen:    map[string]spec.Versions{"node": {"a": "1"}, "empty": {}},
		UpdatedChannels: []string{},
	}
	md := spec.Metadata{
		"step": int64(1), "f": 1.0, "top": "a\x00b",
		"nested": map[string]any{"s": "x\x00y\x01z", "k\x00": []any{int64(1), 2.5, nil, true}},
	}
	nv := spec.Versions{"a": "1", "b": "1", "n": "1", "l": "1", "m": "1", "gone": "1"}
	got, err := s.Put(ctx, spec.Config{ThreadID: "th", CheckpointID: "0001"}, cp, md, nv)
	if err != nil {
		t.Fatal(err)
	}
	if want := (spec.Config{ThreadID: "th", CheckpointID: "0002"}); got != want {
		t.Fatalf("put returned %+v, want %+v", got, want)
	}
	tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "th"})
	if err != nil {
		t.Fatal(err)
	}
	wantCP := cp
	wantCP.ChannelValues = map[string]any{
		"a": int64(1), "b": []byte{0, 1}, "n": nil, "l": []any{}, "m": map[string]any{"x": 1.5},
	}
	if !reflect.DeepEqual(tup.Checkpoint, wantCP) {
		t.Errorf("checkpoint:\n got %#v\nwant %#v", tup.Checkpoint, wantCP)
	}
	wantMD := spec.Metadata{
		"step": int64(1), "f": 1.0, "top": "ab",
		"nested": map[string]any{"s": "x\x00y\x01z", "k\x00": []any{int64(1), 2.5, nil, true}},
	}
	if !reflect.DeepEqual(tup.Metadata, wantMD) {
		t.Errorf("metadata:\n got %#v\nwant %#v", tup.Metadata, wantMD)
	}
	if tup.Parent == nil || *tup.Parent != (spec.Config{ThreadID: "th", CheckpointID: "0001"}) {
		t.Errorf("parent = %+v", tup.Parent)
	}
	if tup.PendingWrites == nil || len(tup.PendingWrites) != 0 {
		t.Errorf("pending writes = %#v, want empty non-nil", tup.PendingWrites)
	}

	// nil maps come back empty, a nil UpdatedChannels stays nil.
	mustPut(t, s, spec.Config{ThreadID: "th"}, spec.Checkpoint{ID: "0003"}, nil, nil)
	tup, err = s.GetTuple(ctx, spec.Config{ThreadID: "th"})
	if err != nil {
		t.Fatal(err)
	}
	if tup.Checkpoint.ChannelVersions == nil || tup.Checkpoint.VersionsSeen == nil || tup.Checkpoint.ChannelValues == nil ||
		tup.Checkpoint.UpdatedChannels != nil {
		t.Errorf("nil handling: %#v", tup.Checkpoint)
	}
	if tup.Parent != nil {
		t.Errorf("parent = %+v, want nil", tup.Parent)
	}
}

func TestPendingWrites(t *testing.T) {
	s := newTestSaver(t)
	ctx := context.Background()
	cfg := spec.Config{ThreadID: "th", Namespace: "ns", CheckpointID: "c1"}
	// Writes before the checkpoint exists.
	err := s.PutWrites(ctx, cfg, []spec.Write{
		{Channel: "x", Value: "first"}, {Channel: spec.ErrorChannel, Value: "e1"},
		{Channel: "y", Value: int64(2)}, {Channel: spec.ErrorChannel, Value: "e2"},
	}, "task-b", "path")
	if err != nil {
		t.Fatal(err)
	}
	err = s.PutWrites(ctx, cfg, []spec.Write{
		{Channel: "x", Value: "second"}, {Channel: spec.ErrorChannel, Value: "e3"},
	}, "task-b", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "z", Value: nil}}, "task-a", ""); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, spec.Config{ThreadID: "th", Namespace: "ns"}, spec.Checkpoint{ID: "c1"}, nil, nil)
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []spec.PendingWrite{
		{TaskID: "task-a", Channel: "z", Value: nil},
		{TaskID: "task-b", Channel: spec.ErrorChannel, Value: "e3"},
		{TaskID: "task-b", Channel: "x", Value: "first"},
		{TaskID: "task-b", Channel: "y", Value: int64(2)},
	}
	if !reflect.DeepEqual(tup.PendingWrites, want) {
		t.Errorf("pending writes:\n got %#v\nwant %#v", tup.PendingWrites, want)
	}
	// Re-putting the checkpoint keeps its writes.
	mustPut(t, s, spec.Config{ThreadID: "th", Namespace: "ns"}, spec.Checkpoint{ID: "c1", V: 2}, nil, nil)
	tup, err = s.GetTuple(ctx, cfg)
	if err != nil || len(tup.PendingWrites) != 4 || tup.Checkpoint.V != 2 {
		t.Fatalf("after re-put: %v %+v", err, tup)
	}
	// Other namespace sees nothing.
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "th", CheckpointID: "c1"}); !errors.Is(err, spec.ErrNotFound) {
		t.Errorf("root namespace: err = %v, want ErrNotFound", err)
	}
}

func TestListOrderScopeAndPaging(t *testing.T) {
	// A page size of 2 makes every list below cross page boundaries,
	// including ties on the ID across threads and namespaces.
	s := newTestSaver(t, WithListPageSize(2))
	for _, th := range []string{"t2", "t1"} {
		for _, ns := range []string{"", "sub"} {
			for _, id := range []string{"b", "a", "c", "ab"} {
				mustPut(t, s, spec.Config{ThreadID: th, Namespace: ns}, spec.Checkpoint{ID: id}, nil, nil)
			}
		}
	}
	all := ids(listAll(t, s, spec.ListOptions{AllNamespaces: true}))
	want := []string{
		"t1//c", "t1/sub/c", "t2//c", "t2/sub/c",
		"t1//b", "t1/sub/b", "t2//b", "t2/sub/b",
		"t1//ab", "t1/sub/ab", "t2//ab", "t2/sub/ab",
		"t1//a", "t1/sub/a", "t2//a", "t2/sub/a",
	}
	if !slices.Equal(all, want) {
		t.Errorf("all:\n got %v\nwant %v", all, want)
	}
	cases := []struct {
		opts spec.ListOptions
		want []string
	}{
		{spec.ListOptions{ThreadID: "t1"}, []string{"t1//c", "t1//b", "t1//ab", "t1//a"}},
		{spec.ListOptions{ThreadID: "t1", Limit: 3}, []string{"t1//c", "t1//b", "t1//ab"}},
		{spec.ListOptions{ThreadID: "t1", Before: "b"}, []string{"t1//ab", "t1//a"}},
		{spec.ListOptions{ThreadID: "t1", Before: "bz", Namespace: "sub"}, []string{"t1/sub/b", "t1/sub/ab", "t1/sub/a"}},
		{spec.ListOptions{Before: "ab", Limit: 3}, []string{"t1//a", "t2//a"}},
		{spec.ListOptions{ThreadID: "t2", AllNamespaces: true, Limit: 3}, []string{"t2//c", "t2/sub/c", "t2//b"}},
		{spec.ListOptions{CheckpointID: "b", AllNamespaces: true}, []string{"t1//b", "t1/sub/b", "t2//b", "t2/sub/b"}},
		{spec.ListOptions{ThreadID: "nope"}, nil},
	}
	for _, c := range cases {
		if got := ids(listAll(t, s, c.opts)); !slices.Equal(got, c.want) {
			t.Errorf("list %+v:\n got %v\nwant %v", c.opts, got, c.want)
		}
	}
	// Early break.
	n := 0
	for _, err := range s.List(context.Background(), spec.ListOptions{AllNamespaces: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	if st := s.pool.Stat(); st.AcquiredConns() != 0 {
		t.Errorf("connections still acquired after early break: %d", st.AcquiredConns())
	}
}

func TestInvalidInput(t *testing.T) {
	s := newTestSaver(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, spec.Config{}, spec.Checkpoint{ID: "x"}, nil, nil); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("empty thread: %v", err)
	}
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{}, nil, nil); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("empty id: %v", err)
	}
	_, err := s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "x", ChannelValues: map[string]any{"c": struct{}{}}},
		nil, spec.Versions{"c": "1"})
	if !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Errorf("bad value: %v", err)
	}
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t\x00"}, spec.Checkpoint{ID: "x"}, nil, nil); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("NUL in thread: %v", err)
	}
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t"}, nil, "task", ""); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("writes without checkpoint: %v", err)
	}
	for _, err := range s.List(ctx, spec.ListOptions{Limit: -1}) {
		if !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("negative limit: %v", err)
		}
	}
	if err := s.Prune(ctx, []string{"t"}, spec.PruneStrategy(9)); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("bad strategy: %v", err)
	}
	if got := listAll(t, s, spec.ListOptions{AllNamespaces: true}); len(got) != 0 {
		t.Errorf("something was stored: %v", ids(got))
	}
}

func TestErrorsWrapBackend(t *testing.T) {
	pool := testPool(t)
	s := unsetSaver(t, pool, WithSchema(uniqueSchema("never-set-up")))
	_, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "thread-x"})
	if err == nil || errors.Is(err, spec.ErrNotFound) {
		t.Fatalf("want a backend error, got %v", err)
	}
	var pgErr interface{ SQLState() string }
	if !errors.As(err, &pgErr) || pgErr.SQLState() != "42P01" {
		t.Errorf("error does not wrap the pg error: %v", err)
	}
	for _, part := range []string{"get tuple", `"thread-x"`, "Setup"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q lacks %q", err, part)
		}
	}
}

func newPool(tb testing.TB, cfg *pgxpool.Config) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

func TestPageSizesGrow(t *testing.T) {
	s := &Saver{pageSize: defaultPageSize}
	for _, c := range []struct{ page, remaining, want int }{
		{0, 0, 10}, {1, 0, 20}, {2, 0, 40}, {3, 0, 80}, {4, 0, 100}, {60, 0, 100},
		{0, 5, 5}, {3, 50, 50}, {5, 1000, 100},
	} {
		if got := s.pageLen(c.page, c.remaining); got != c.want {
			t.Errorf("pageLen(%d, %d) = %d, want %d", c.page, c.remaining, got, c.want)
		}
	}
}

func TestUnlimitedListCrossesGrowingPages(t *testing.T) {
	s := newTestSaver(t)
	want := seedHistory(t, s, "t", "", 333)
	slices.Reverse(want)
	got := listAll(t, s, spec.ListOptions{ThreadID: "t"})
	if len(got) != len(want) {
		t.Fatalf("%d tuples, want %d", len(got), len(want))
	}
	for i, tup := range got {
		if tup.Checkpoint.ID != want[i] || len(tup.PendingWrites) != 1 {
			t.Fatalf("tuple %d: %s with %d writes, want %s with 1", i, tup.Checkpoint.ID, len(tup.PendingWrites), want[i])
		}
	}
	got = listAll(t, s, spec.ListOptions{ThreadID: "t", Limit: 150, Filter: spec.Metadata{"parity": "odd"}})
	if len(got) != 150 || got[0].Checkpoint.ID != want[1] || got[149].Checkpoint.ID != want[299] {
		t.Errorf("filtered: %d tuples, first %s, last %s", len(got), got[0].Checkpoint.ID, got[len(got)-1].Checkpoint.ID)
	}
}
