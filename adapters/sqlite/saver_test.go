package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

func count(t *testing.T, s *Saver, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestWriteSemantics checks first-wins for regular writes, last-wins for
// special writes (also within one call), task path storage and ordering.
func TestWriteSemantics(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	cfg := spec.Config{ThreadID: "t", CheckpointID: "c1"}
	put := func(task, path string, ws ...spec.Write) {
		t.Helper()
		if err := s.PutWrites(ctx, cfg, ws, task, path); err != nil {
			t.Fatal(err)
		}
	}
	// Writes before the checkpoint exists.
	put("b", "p1", spec.Write{Channel: "x", Value: "first"}, spec.Write{Channel: spec.InterruptChannel, Value: "i1"})
	put("b", "p2", spec.Write{Channel: "x", Value: "second"}, spec.Write{Channel: spec.InterruptChannel, Value: "i2"})
	put("a", "", spec.Write{Channel: spec.ErrorChannel, Value: "e1"}, spec.Write{Channel: "y", Value: nil},
		spec.Write{Channel: spec.ErrorChannel, Value: "e2"})
	cp, vs := checkpoint("c1", map[string]any{})
	mustPut(t, s, spec.Config{ThreadID: "t"}, cp, nil, vs)

	got := mustGet(t, s, spec.Config{ThreadID: "t"}).PendingWrites
	want := []spec.PendingWrite{
		{TaskID: "a", Channel: spec.ErrorChannel, Value: "e2"}, // idx -1, later one in the call wins
		{TaskID: "a", Channel: "y", Value: nil},                // idx 1
		{TaskID: "b", Channel: spec.InterruptChannel, Value: "i2"},
		{TaskID: "b", Channel: "x", Value: "first"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pending writes\n got %#v\nwant %#v", got, want)
	}
	// The special write's task path follows the last write; the regular
	// write keeps the first.
	var path string
	if err := s.db.QueryRow(`SELECT task_path FROM writes WHERE task_id = 'b' AND idx = -3`).Scan(&path); err != nil || path != "p2" {
		t.Errorf("special write task_path = %q, %v; want p2", path, err)
	}
	if err := s.db.QueryRow(`SELECT task_path FROM writes WHERE task_id = 'b' AND idx = 0`).Scan(&path); err != nil || path != "p1" {
		t.Errorf("regular write task_path = %q, %v; want p1", path, err)
	}
	// A child checkpoint starts with no writes; Put again keeps writes.
	child, vs := checkpoint("c2", nil)
	mustPut(t, s, spec.Config{ThreadID: "t", CheckpointID: "c1"}, child, nil, vs)
	if w := mustGet(t, s, spec.Config{ThreadID: "t", CheckpointID: "c2"}).PendingWrites; w == nil || len(w) != 0 {
		t.Errorf("child writes = %#v, want empty non-nil", w)
	}
	mustPut(t, s, spec.Config{ThreadID: "t"}, cp, spec.Metadata{"again": true}, nil)
	if n := len(mustGet(t, s, spec.Config{ThreadID: "t", CheckpointID: "c1"}).PendingWrites); n != 4 {
		t.Errorf("re-put lost writes: %d left", n)
	}
}

// TestValuesStoredOncePerVersion checks the blob model: unchanged channels
// are not stored again, cleared channels are absent, nil is a value.
func TestValuesStoredOncePerVersion(t *testing.T) {
	s := openMemory(t)
	big := strings.Repeat("x", 10_000)
	cp1 := spec.Checkpoint{ID: "1", ChannelValues: map[string]any{"big": big, "n": nil, "gone": int64(1)},
		ChannelVersions: spec.Versions{"big": "1", "n": "1", "gone": "1"}}
	mustPut(t, s, spec.Config{ThreadID: "t"}, cp1, nil, spec.Versions{"big": "1", "n": "1", "gone": "1"})
	cp2 := spec.Checkpoint{ID: "2", ChannelValues: map[string]any{"n": int64(5)},
		ChannelVersions: spec.Versions{"big": "1", "n": "2", "gone": "2"}}
	mustPut(t, s, spec.Config{ThreadID: "t", CheckpointID: "1"}, cp2, nil, spec.Versions{"n": "2", "gone": "2"})

	if n := count(t, s, `SELECT count(*) FROM blobs WHERE channel = 'big'`); n != 1 {
		t.Errorf("big channel stored %d times, want once", n)
	}
	got := mustGet(t, s, spec.Config{ThreadID: "t"}).Checkpoint.ChannelValues
	if want := map[string]any{"big": big, "n": int64(5)}; !reflect.DeepEqual(got, want) {
		t.Errorf("latest values = %v, want %v", got, want)
	}
	got = mustGet(t, s, spec.Config{ThreadID: "t", CheckpointID: "1"}).Checkpoint.ChannelValues
	if v, ok := got["n"]; !ok || v != nil {
		t.Errorf("nil value lost: %#v", got)
	}
}

// TestBadInputStoresNothing checks sentinel errors and that nothing lands.
func TestBadInputStoresNothing(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	cp := spec.Checkpoint{ID: "1", ChannelValues: map[string]any{"ok": int64(1), "bad": make(chan int)},
		ChannelVersions: spec.Versions{"ok": "1", "bad": "1"}}
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, cp.ChannelVersions); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Errorf("Put with bad value: %v", err)
	}
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "2"}, spec.Metadata{"b": []byte("x")}, nil); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Errorf("Put with bad metadata: %v", err)
	}
	if _, err := s.Put(ctx, spec.Config{}, spec.Checkpoint{ID: "3"}, nil, nil); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("Put without thread: %v", err)
	}
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t"}, []spec.Write{{Channel: "a"}}, "x", ""); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Errorf("PutWrites without checkpoint ID: %v", err)
	}
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"},
		[]spec.Write{{Channel: "a", Value: int64(1)}, {Channel: "b", Value: struct{}{}}}, "x", ""); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Errorf("PutWrites with a bad value: %v", err)
	}
	for _, table := range []string{"checkpoints", "blobs", "writes"} {
		if n := count(t, s, "SELECT count(*) FROM "+table); n != 0 {
			t.Errorf("%s has %d rows after failed calls", table, n)
		}
	}
	for _, err := range s.List(ctx, spec.ListOptions{Limit: -1}) {
		if !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("List with negative limit: %v", err)
		}
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); !errors.Is(err, spec.ErrNotFound) {
		t.Errorf("GetTuple on empty thread: %v", err)
	}
	if err := s.Prune(ctx, []string{"t"}, spec.PruneStrategy(7)); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("Prune with bad strategy: %v", err)
	}
}

// TestReopenFile checks that everything is on disk: close, reopen, find it.
func TestReopenFile(t *testing.T) {
	s, path := openFile(t)
	ctx := context.Background()
	cp := spec.Checkpoint{V: 4, ID: "1", TS: "ts", ChannelValues: map[string]any{"a": []byte{0, 1}},
		ChannelVersions: spec.Versions{"a": "1"}, VersionsSeen: map[string]spec.Versions{"n": {"a": "1"}},
		UpdatedChannels: []string{"a"}}
	md := spec.Metadata{"step": int64(3), "score": 2.0, "source": "loop"}
	mustPut(t, s, spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "0"}, cp, md, cp.ChannelVersions)
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", Namespace: "sub:1", CheckpointID: "1"},
		[]spec.Write{{Channel: "a", Value: "w"}}, "task", "path"); err != nil {
		t.Fatal(err)
	}
	want := mustGet(t, s, spec.Config{ThreadID: "t", Namespace: "sub:1"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got := mustGet(t, s2, spec.Config{ThreadID: "t", Namespace: "sub:1"})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after reopen\n got %#v\nwant %#v", got, want)
	}
	if got.Metadata["score"] != 2.0 || got.Metadata["step"] != int64(3) {
		t.Errorf("metadata number types changed: %#v", got.Metadata)
	}
	var mode string
	if err := s2.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// TestMemoryDatabasesArePrivate checks that two ":memory:" savers do not
// share data, and that a saver from New over a single-connection handle
// works.
func TestMemoryDatabasesArePrivate(t *testing.T) {
	a, b := openMemory(t), openMemory(t)
	cp, vs := checkpoint("1", map[string]any{"x": int64(1)})
	mustPut(t, a, spec.Config{ThreadID: "t"}, cp, nil, vs)
	if _, err := b.GetTuple(context.Background(), spec.Config{ThreadID: "t"}); !errors.Is(err, spec.ErrNotFound) {
		t.Errorf("second in-memory saver sees the first's data: %v", err)
	}

	db, err := sql.Open(driverName, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	c, err := New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, spec.Config{ThreadID: "t"}, cp, nil, vs)
	if got := mustGet(t, c, spec.Config{ThreadID: "t"}); got.Checkpoint.ChannelValues["x"] != int64(1) {
		t.Errorf("New saver: %#v", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil {
		t.Errorf("Close closed the caller's handle: %v", err)
	}
}

// TestListInsideListLoop checks that nothing is held while List yields: on
// a single-connection in-memory database the loop body can read and write.
func TestListInsideListLoop(t *testing.T) {
	s := openMemory(t, WithListPageSize(2))
	ctx := context.Background()
	for i := range 5 {
		cp, vs := checkpoint(fmt.Sprint(i), map[string]any{"i": int64(i)})
		mustPut(t, s, spec.Config{ThreadID: "t"}, cp, nil, vs)
	}
	n := 0
	for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		mustGet(t, s, tup.Config)
		if err := s.PutWrites(ctx, tup.Config, []spec.Write{{Channel: "seen", Value: true}}, "t", ""); err != nil {
			t.Fatal(err)
		}
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("iterated %d, want 3", n)
	}
	if inUse := s.db.Stats().InUse; inUse != 0 {
		t.Errorf("%d connections still in use after breaking out of List", inUse)
	}
	if c := count(t, s, `SELECT count(*) FROM writes`); c != 3 {
		t.Errorf("writes from loop body = %d, want 3", c)
	}
}

// TestListPaging checks order, ties, Before and Limit across page
// boundaries, with a page size of 1 and 2.
func TestListPaging(t *testing.T) {
	for _, pageSize := range []int{1, 2, 64} {
		s := openMemory(t, WithListPageSize(pageSize))
		for _, th := range []string{"b", "a"} {
			for _, ns := range []string{"", "x"} {
				for _, id := range []string{"3", "1", "2"} {
					cp, vs := checkpoint(id, nil)
					mustPut(t, s, spec.Config{ThreadID: th, Namespace: ns}, cp, spec.Metadata{"th": th}, vs)
				}
			}
		}
		all := listIDs(t, s, spec.ListOptions{AllNamespaces: true})
		want := []string{"a//3", "a/x/3", "b//3", "b/x/3", "a//2", "a/x/2", "b//2", "b/x/2", "a//1", "a/x/1", "b//1", "b/x/1"}
		if !slices.Equal(all, want) {
			t.Errorf("page %d: all = %v\nwant %v", pageSize, all, want)
		}
		if got := listIDs(t, s, spec.ListOptions{AllNamespaces: true, Before: "3", Limit: 3}); !slices.Equal(got, want[4:7]) {
			t.Errorf("page %d: before 3 limit 3 = %v", pageSize, got)
		}
		if got := listIDs(t, s, spec.ListOptions{ThreadID: "b", AllNamespaces: true}); !slices.Equal(got,
			[]string{"b//3", "b/x/3", "b//2", "b/x/2", "b//1", "b/x/1"}) {
			t.Errorf("page %d: thread b = %v", pageSize, got)
		}
		if got := listIDs(t, s, spec.ListOptions{ThreadID: "a", Limit: 2}); !slices.Equal(got, []string{"a//3", "a//2"}) {
			t.Errorf("page %d: thread a root limit 2 = %v", pageSize, got)
		}
		if got := listIDs(t, s, spec.ListOptions{Filter: spec.Metadata{"th": "b"}, AllNamespaces: true, Limit: 3}); !slices.Equal(got,
			[]string{"b//3", "b/x/3", "b//2"}) {
			t.Errorf("page %d: filter th=b limit 3 = %v", pageSize, got)
		}
		if got := listIDs(t, s, spec.ListOptions{CheckpointID: "2"}); !slices.Equal(got, []string{"a//2", "b//2"}) {
			t.Errorf("page %d: id 2 = %v", pageSize, got)
		}
	}
}

// TestFilterSemantics checks the SQL pre-filter plus Go check against
// spec.MatchFilter for the awkward cases.
func TestFilterSemantics(t *testing.T) {
	s := openMemory(t, WithListPageSize(2))
	mds := []spec.Metadata{
		{"v": true},
		{"v": int64(1)},
		{"v": 1.0},
		{"v": "1"},
		{"v": nil},
		{},
		{"v": map[string]any{"a": int64(1), "b": []any{"x", 2.5}}},
		{"v": []any{int64(1), int64(2)}},
		{"v": int64(1<<53 + 1)},
		{"a.b": "dot", `k"'$`: "q", "v": "x\x00y"},
		{"v": false},
		{"k\x00ey": "nul", "v": "é\u2028\x01"},
	}
	for i, md := range mds {
		cp, vs := checkpoint(fmt.Sprintf("%02d", i), nil)
		mustPut(t, s, spec.Config{ThreadID: "t"}, cp, md, vs)
	}
	filters := []spec.Metadata{
		{"v": true}, {"v": false}, {"v": int64(1)}, {"v": 1.0}, {"v": "1"}, {"v": nil},
		{"v": map[string]any{"b": []any{"x", 2.5}, "a": 1.0}}, {"v": []any{int64(1), int64(2)}},
		{"v": []any{int64(2), int64(1)}}, {"v": float64(1 << 53)}, {"v": int64(1<<53 + 1)},
		{"a.b": "dot"}, {"a": map[string]any{"b": "dot"}}, {`k"'$`: "q"}, {"v": "xy"}, {"v": "x\x00y"},
		{}, {"missing": nil}, {"k\x00ey": "nul"}, {"k": "nul"}, {"v": "é\u2028\x01"},
	}
	for _, f := range filters {
		nf, _ := spec.NormalizeFilter(f)
		var want []string
		for i := len(mds) - 1; i >= 0; i-- {
			nmd, _ := spec.NormalizeMetadata(mds[i])
			if spec.MatchFilter(nmd, nf) {
				want = append(want, fmt.Sprintf("t//%02d", i))
			}
		}
		got := listIDs(t, s, spec.ListOptions{ThreadID: "t", Filter: f})
		if !slices.Equal(got, want) {
			t.Errorf("filter %#v: got %v, want %v", f, got, want)
		}
	}
}

// TestCapabilities covers CopyThread, DeleteForRuns, Prune and
// DeleteThread on the tables.
func TestCapabilities(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	for _, ns := range []string{"", "sub"} {
		for i := 1; i <= 3; i++ {
			id := fmt.Sprint(i)
			cp := spec.Checkpoint{ID: id, ChannelValues: map[string]any{"v": int64(i)},
				ChannelVersions: spec.Versions{"v": spec.Version(id), "k": "1"}}
			nv := spec.Versions{"v": spec.Version(id)}
			if i == 1 {
				cp.ChannelValues["k"] = "kept"
				nv["k"] = "1"
			}
			mustPut(t, s, spec.Config{ThreadID: "src", Namespace: ns}, cp, spec.Metadata{"run_id": "r" + id}, nv)
			if err := s.PutWrites(ctx, spec.Config{ThreadID: "src", Namespace: ns, CheckpointID: id},
				[]spec.Write{{Channel: "w", Value: id}}, "task", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustPut(t, s, spec.Config{ThreadID: "other"}, spec.Checkpoint{ID: "9"}, spec.Metadata{"run_id": int64(2)}, nil)

	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []spec.Config{{ThreadID: "src", Namespace: "sub", CheckpointID: "2"}, {ThreadID: "src", CheckpointID: "1"}} {
		a := mustGet(t, s, cfg)
		cfg.ThreadID = "dst"
		b := mustGet(t, s, cfg)
		a.Config.ThreadID, a.Parent = "dst", nil
		b.Parent = nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("copy differs:\n%#v\n%#v", a, b)
		}
	}

	if err := s.DeleteForRuns(ctx, []string{"r2", "nope"}); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s, spec.ListOptions{AllNamespaces: true, ThreadID: "dst"}); !slices.Equal(got,
		[]string{"dst//3", "dst/sub/3", "dst//1", "dst/sub/1"}) {
		t.Errorf("after DeleteForRuns: %v", got)
	}
	if n := count(t, s, `SELECT count(*) FROM writes WHERE checkpoint_id = '2'`); n != 0 {
		t.Errorf("%d writes of deleted runs left", n)
	}
	if got := listIDs(t, s, spec.ListOptions{ThreadID: "other"}); len(got) != 1 {
		t.Errorf("numeric run_id 2 matched the string \"r2\"... or was deleted: %v", got)
	}

	if err := s.Prune(ctx, []string{"src"}, spec.KeepLatest); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s, spec.ListOptions{AllNamespaces: true, ThreadID: "src"}); !slices.Equal(got, []string{"src//3", "src/sub/3"}) {
		t.Errorf("after prune: %v", got)
	}
	latest := mustGet(t, s, spec.Config{ThreadID: "src", Namespace: "sub"})
	if want := map[string]any{"v": int64(3), "k": "kept"}; !reflect.DeepEqual(latest.Checkpoint.ChannelValues, want) {
		t.Errorf("pruned latest values = %v, want %v", latest.Checkpoint.ChannelValues, want)
	}
	if len(latest.PendingWrites) != 1 {
		t.Errorf("pruned latest writes = %v", latest.PendingWrites)
	}
	if n := count(t, s, `SELECT count(*) FROM blobs WHERE thread_id = 'src'`); n != 4 {
		t.Errorf("blobs left after prune = %d, want 4 (v and k per namespace)", n)
	}
	if n := count(t, s, `SELECT count(*) FROM writes WHERE thread_id = 'src'`); n != 2 {
		t.Errorf("writes left after prune = %d, want 2", n)
	}

	if err := s.Prune(ctx, []string{"dst", "missing"}, spec.DeleteAll); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"checkpoints", "blobs", "writes"} {
		if n := count(t, s, `SELECT count(*) FROM `+table+` WHERE thread_id <> 'other'`); n != 0 {
			t.Errorf("%s: %d rows left", table, n)
		}
	}
	if got := listIDs(t, s, spec.ListOptions{ThreadID: "other"}); len(got) != 1 {
		t.Errorf("other thread touched: %v", got)
	}
}

// prefixSerde wraps the default serde and marks what it writes, to show
// that WithSerde is used for values and writes.
type prefixSerde struct{}

func (prefixSerde) Encode(v any) ([]byte, error) {
	data, err := spec.DefaultSerde().Encode(v)
	return append([]byte("P:"), data...), err
}

func (prefixSerde) Decode(data []byte) (any, error) {
	if !strings.HasPrefix(string(data), "P:") {
		return nil, errors.New("not written by prefixSerde")
	}
	return spec.DefaultSerde().Decode(data[2:])
}

func TestWithSerde(t *testing.T) {
	s := openMemory(t, WithSerde(prefixSerde{}))
	cp, vs := checkpoint("1", map[string]any{"a": []any{int64(1), "x"}})
	mustPut(t, s, spec.Config{ThreadID: "t"}, cp, nil, vs)
	if err := s.PutWrites(context.Background(), spec.Config{ThreadID: "t", CheckpointID: "1"},
		[]spec.Write{{Channel: "a", Value: 2.5}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, `SELECT count(*) FROM blobs WHERE substr(value, 1, 2) = CAST('P:' AS BLOB)`); n != 1 {
		t.Errorf("%d blobs written by the custom serde, want 1", n)
	}
	if n := count(t, s, `SELECT count(*) FROM writes WHERE substr(value, 1, 2) = CAST('P:' AS BLOB)`); n != 1 {
		t.Errorf("%d writes written by the custom serde, want 1", n)
	}
	got := mustGet(t, s, spec.Config{ThreadID: "t"})
	if !reflect.DeepEqual(got.Checkpoint.ChannelValues["a"], []any{int64(1), "x"}) || got.PendingWrites[0].Value != 2.5 {
		t.Errorf("values through the custom serde: %#v", got)
	}
}
