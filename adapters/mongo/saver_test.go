package mongo_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

func put(t *testing.T, s spec.Saver, thread, ns, parent, id string, values map[string]any, md spec.Metadata) spec.Config {
	t.Helper()
	nv := spec.Versions{}
	for ch := range values {
		nv[ch] = spec.NextVersion("")
	}
	cp := spec.Checkpoint{V: 4, ID: id, TS: "2026-01-01T00:00:00Z", ChannelValues: values, ChannelVersions: nv}
	cfg, err := s.Put(context.Background(), spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: parent}, cp, md, nv)
	if err != nil {
		t.Fatalf("put %s/%s/%s: %v", thread, ns, id, err)
	}
	return cfg
}

func listIDs(t *testing.T, s spec.Saver, opts spec.ListOptions) []string {
	t.Helper()
	var ids []string
	for tup, err := range s.List(context.Background(), opts) {
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		ids = append(ids, tup.Config.ThreadID+"/"+tup.Config.Namespace+"/"+tup.Config.CheckpointID)
	}
	return ids
}

func TestRoundTrip(t *testing.T) {
	s := saverT(t)
	ctx := context.Background()
	values := map[string]any{
		"int":    int64(1) << 60,
		"float":  1.5,
		"nil":    nil,
		"bytes":  []byte{0, 1, 2},
		"list":   []any{},
		"nested": map[string]any{"a\x00b": []any{int64(1), 1.0, "x", true}},
	}
	md := spec.Metadata{"source": "loop", "step": int64(3), "f": 2.0, "nul": "a\x00b",
		"deep": map[string]any{"k": "v\x00w", "$x": int64(1)}, "a.b": []any{nil}}
	cp := spec.Checkpoint{
		V: 4, ID: "0002", TS: "2026-01-01T00:00:00Z", ChannelValues: values,
		ChannelVersions: spec.Versions{"int": "1", "float": "1", "nil": "1", "bytes": "1", "list": "1", "nested": "1", "cleared": "1"},
		VersionsSeen:    map[string]spec.Versions{"node": {"int": "1"}},
		UpdatedChannels: []string{},
	}
	nv := spec.Versions{}
	maps := cp.ChannelVersions
	for k, v := range maps {
		nv[k] = v
	}
	cfg, err := s.Put(ctx, spec.Config{ThreadID: "t", Namespace: "ns", CheckpointID: "0001"}, cp, md, nv)
	if err != nil {
		t.Fatal(err)
	}
	if want := (spec.Config{ThreadID: "t", Namespace: "ns", CheckpointID: "0002"}); cfg != want {
		t.Fatalf("config %+v, want %+v", cfg, want)
	}
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "a", Value: int64(1)}, {Channel: spec.InterruptChannel, Value: "i1"}}, "task-b", "p"); err != nil {
		t.Fatal(err)
	}
	// Regular writes are first-wins, special writes last-wins.
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "a", Value: int64(2)}, {Channel: spec.InterruptChannel, Value: "i2"}}, "task-b", "p"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "z", Value: nil}}, "task-a", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, nil, "task-c", ""); err != nil {
		t.Fatalf("empty writes: %v", err)
	}

	for _, get := range []spec.Config{{ThreadID: "t", Namespace: "ns"}, cfg} {
		tup, err := s.GetTuple(ctx, get)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tup.Checkpoint.ChannelValues, values) {
			t.Errorf("values %#v, want %#v", tup.Checkpoint.ChannelValues, values)
		}
		wantMD, _ := spec.NormalizeMetadata(md)
		if !reflect.DeepEqual(tup.Metadata, wantMD) {
			t.Errorf("metadata %#v, want %#v", tup.Metadata, wantMD)
		}
		if tup.Parent == nil || *tup.Parent != (spec.Config{ThreadID: "t", Namespace: "ns", CheckpointID: "0001"}) {
			t.Errorf("parent %+v", tup.Parent)
		}
		if !reflect.DeepEqual(tup.Checkpoint.VersionsSeen, cp.VersionsSeen) || tup.Checkpoint.UpdatedChannels == nil ||
			!reflect.DeepEqual(tup.Checkpoint.ChannelVersions, cp.ChannelVersions) || tup.Checkpoint.TS != cp.TS || tup.Checkpoint.V != 4 {
			t.Errorf("checkpoint %#v", tup.Checkpoint)
		}
		want := []spec.PendingWrite{{TaskID: "task-a", Channel: "z"}, {TaskID: "task-b", Channel: spec.InterruptChannel, Value: "i2"}, {TaskID: "task-b", Channel: "a", Value: int64(1)}}
		if !reflect.DeepEqual(tup.PendingWrites, want) {
			t.Errorf("writes %#v, want %#v", tup.PendingWrites, want)
		}
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", Namespace: "ns", CheckpointID: "0001"}); !errors.Is(err, spec.ErrNotFound) {
		t.Errorf("missing checkpoint: %v", err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); !errors.Is(err, spec.ErrNotFound) {
		t.Errorf("other namespace: %v", err)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s, spec.ListOptions{AllNamespaces: true}); len(got) != 0 {
		t.Errorf("after delete: %v", got)
	}
}

// TestByteWiseOrder checks that latest, List order and Before compare IDs,
// threads and namespaces byte-wise, on the server in use (FerretDB's SQLite
// backend sorts in Go, MongoDB without collation compares BSON strings with
// memcmp). Control characters, non-ASCII and mixed case included; NUL is
// not a valid identifier (spec.ValidateIdentifier).
func TestByteWiseOrder(t *testing.T) {
	s := saverT(t)
	ids := []string{"a", "B", "b", "Z", "é", "z", "ä", "ÿ", "😀", "\uffff", "a\x01b", "a\x02", "A", "~", "ab", "a b", "10", "9"}
	for i, id := range ids {
		put(t, s, "t", "", "", id, map[string]any{"c": int64(i)}, nil)
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted) // Go compares strings byte-wise
	slices.Reverse(sorted)

	tup, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if tup.Checkpoint.ID != sorted[0] {
		t.Errorf("latest = %q, want %q", tup.Checkpoint.ID, sorted[0])
	}
	var want []string
	for _, id := range sorted {
		want = append(want, "t//"+id)
	}
	if got := listIDs(t, s, spec.ListOptions{ThreadID: "t"}); !slices.Equal(got, want) {
		t.Errorf("list order\n got %q\nwant %q", got, want)
	}
	var before []string
	for _, id := range sorted {
		if id < "b" {
			before = append(before, "t//"+id)
		}
	}
	if got := listIDs(t, s, spec.ListOptions{ThreadID: "t", Before: "b", Limit: 3}); !slices.Equal(got, before[:3]) {
		t.Errorf("before b limit 3: got %q, want %q", got, before[:3])
	}

	// Ties on the ID are ordered by thread, then namespace, byte-wise.
	for _, tn := range [][2]string{{"é", ""}, {"Z", "x"}, {"Z", "X"}, {"z", ""}, {"Z", ""}} {
		put(t, s, tn[0], tn[1], "", "same", nil, nil)
	}
	got := listIDs(t, s, spec.ListOptions{AllNamespaces: true, CheckpointID: "same"})
	wantTies := []string{"Z//same", "Z/X/same", "Z/x/same", "z//same", "é//same"}
	if !slices.Equal(got, wantTies) {
		t.Errorf("ties: got %q, want %q", got, wantTies)
	}
}

// TestConcurrentUpserts runs the same writes from many goroutines: FerretDB
// reports some racing upserts as E11000, which the saver retries.
func TestConcurrentUpserts(t *testing.T) {
	s := saverT(t)
	ctx := context.Background()
	cfg := put(t, s, "t", "", "", "1", nil, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 8 {
				w := []spec.Write{{Channel: "c", Value: int64(g)}, {Channel: spec.ErrorChannel, Value: int64(g)}}
				if err := s.PutWrites(ctx, cfg, w, "task", ""); err != nil {
					errs <- err
				}
				nv := spec.Versions{"v": "1"}
				cp := spec.Checkpoint{V: 4, ID: "2", ChannelValues: map[string]any{"v": int64(i)}, ChannelVersions: nv}
				if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, nv); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tup.PendingWrites) != 2 {
		t.Errorf("writes: %#v", tup.PendingWrites)
	}
}

func TestOpenClose(t *testing.T) {
	uri := testURI(t)
	ctx := context.Background()
	if _, err := mongo.Open(ctx, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200"); err == nil {
		t.Error("Open of a closed port succeeded")
	}
	name := uniqueName("ckk_open_")
	s, err := mongo.Open(ctx, uri, mongo.WithDatabase(name), mongo.WithCollectionPrefix("p_"))
	if err != nil {
		t.Fatal(err)
	}
	// Dropped through the shared client: s's own is closed below.
	t.Cleanup(func() { _ = client(t).Database(name).Drop(context.Background()) })
	put(t, s, "t", "", "", "1", nil, nil)
	names, err := s.Database().ListCollectionNames(ctx, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"p_checkpoint_blobs", "p_checkpoint_values", "p_checkpoint_write_batches", "p_checkpoints"}; !slices.Equal(names, want) {
		t.Errorf("collections %q, want %q", names, want)
	}
	var closer io.Closer = s
	for range 2 { // idempotent
		if err := closer.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err == nil {
		t.Error("GetTuple after Close succeeded; Open's client should be disconnected")
	}

	// A saver from New leaves the caller's client connected.
	c := client(t)
	name2 := uniqueName("ckk_new_")
	t.Cleanup(func() { _ = c.Database(name2).Drop(context.Background()) })
	s2, err := mongo.New(ctx, c, mongo.WithDatabase(name2))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Ping(ctx, nil); err != nil {
		t.Errorf("client disconnected by Close of a New saver: %v", err)
	}
	if _, err := mongo.New(ctx, nil); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("New(nil client): %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	s := saverT(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	nv := spec.Versions{"c": "1"}
	_, err := s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{ID: "1", ChannelValues: map[string]any{"c": 1}, ChannelVersions: nv}, nil, nv)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Put: %v", err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); !errors.Is(err, context.Canceled) {
		t.Errorf("GetTuple: %v", err)
	}
	for _, err := range s.List(ctx, spec.ListOptions{}) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("List: %v", err)
		}
	}
	if got := listIDs(t, s, spec.ListOptions{AllNamespaces: true}); len(got) != 0 {
		t.Errorf("stored after cancel: %v", got)
	}
}

// TestTransactionsOption checks WithTransactions: on a server with
// transactions (a replica set) Put and PutWrites work as usual; on one
// without (FerretDB v1, a standalone mongod) they fail with the server's
// error and store nothing.
func TestTransactionsOption(t *testing.T) {
	s := saverT(t, mongo.WithTransactions())
	ctx := context.Background()
	nv := spec.Versions{"c": "1"}
	cp := spec.Checkpoint{V: 4, ID: "1", ChannelValues: map[string]any{"c": "v"}, ChannelVersions: nv}
	cfg, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, nv)
	if err != nil {
		if !isFerretDB(t, s.Database()) {
			t.Logf("server without transactions: %v", err)
		}
		if got := listIDs(t, s, spec.ListOptions{AllNamespaces: true}); len(got) != 0 {
			t.Errorf("failed transactional Put stored %v", got)
		}
		if n := countDocs(t, s, mongo.ValuesCollection, bson.D{}); n != 0 {
			t.Errorf("failed transactional Put stored %d values", n)
		}
		return
	}
	if isFerretDB(t, s.Database()) {
		t.Fatal("transactional Put succeeded on FerretDB, which has no transactions: revisit the package doc")
	}
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "w", Value: int64(1)}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tup.Checkpoint.ChannelValues["c"] != "v" || len(tup.PendingWrites) != 1 {
		t.Errorf("tuple %#v", tup)
	}
}
