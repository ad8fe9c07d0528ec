package mongo_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

func countDocs(t *testing.T, s *mongo.Saver, coll string, filter bson.D) int64 {
	t.Helper()
	n, err := s.Database().Collection(coll).CountDocuments(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLargeValues stores a 20 MB channel value and a 20 MB pending write,
// above MongoDB's 16 MB document limit, reads them back through GetTuple
// and List, and checks DeleteThread removes their chunks. (FerretDB needs
// about 0.1-0.3 s per stored or scanned MB, so this test takes tens of
// seconds there; copying large values is covered with small chunks by
// TestChunkedPayloadLifecycle.)
func TestLargeValues(t *testing.T) {
	if testing.Short() {
		t.Skip("20 MB round trip skipped in -short mode")
	}
	s := saverT(t)
	ctx := context.Background()
	big := make([]byte, 20<<20)
	_, _ = rand.Read(big)
	nv := spec.Versions{"big": "1", "small": "1"}
	cp := spec.Checkpoint{V: 4, ID: "1", ChannelValues: map[string]any{"big": big, "small": "x"}, ChannelVersions: nv}
	cfg, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, nv)
	if err != nil {
		t.Fatal(err)
	}
	checkValues := func(tup *spec.Tuple) {
		t.Helper()
		if got, _ := tup.Checkpoint.ChannelValues["big"].([]byte); !bytes.Equal(got, big) {
			t.Errorf("big channel value: %d bytes back, want %d identical", len(got), len(big))
		}
		if tup.Checkpoint.ChannelValues["small"] != "x" {
			t.Errorf("small value: %v", tup.Checkpoint.ChannelValues["small"])
		}
	}
	tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	checkValues(tup)

	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "w", Value: big}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	n := 0
	for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		checkValues(tup)
		if len(tup.PendingWrites) != 1 || !bytes.Equal(tup.PendingWrites[0].Value.([]byte), big) {
			t.Errorf("big pending write did not round-trip")
		}
	}
	if n != 1 {
		t.Errorf("listed %d tuples, want 1", n)
	}
	if n := countDocs(t, s, mongo.BlobsCollection, bson.D{{Key: "thread", Value: "t"}}); n < 10 {
		t.Errorf("%d chunks stored for two 20 MB payloads", n)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if n := countDocs(t, s, mongo.BlobsCollection, bson.D{}); n != 0 {
		t.Errorf("%d chunks left after DeleteThread", n)
	}
}

// TestChunkedPayloadLifecycle lowers the inline limit so that every value
// is chunked, and checks Put replacing a value, Prune and DeleteForRuns
// leave no unreferenced chunks behind and keep the live ones.
func TestChunkedPayloadLifecycle(t *testing.T) {
	restore := mongo.SetChunking(16, 7)
	t.Cleanup(restore)
	s := saverT(t)
	ctx := context.Background()
	val := func(i int) string { return string(bytes.Repeat([]byte{byte('a' + i)}, 40)) }
	var parent string
	for i := range 4 {
		nv := spec.Versions{"c": spec.Version(string(rune('1' + i)))}
		cp := spec.Checkpoint{V: 4, ID: string(rune('1' + i)), ChannelValues: map[string]any{"c": val(i)}, ChannelVersions: nv}
		cfg, err := s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: parent}, cp, spec.Metadata{"run_id": "r" + cp.ID, "pad": val(i)}, nv)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "w", Value: val(i)}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		parent = cfg.CheckpointID
	}
	if err := s.CopyThread(ctx, "t", "copy"); err != nil {
		t.Fatal(err)
	}
	copied, err := s.GetTuple(ctx, spec.Config{ThreadID: "copy", CheckpointID: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if copied.Checkpoint.ChannelValues["c"] != val(1) || copied.Metadata["pad"] != val(1) ||
		len(copied.PendingWrites) != 1 || copied.PendingWrites[0].Value != val(1) {
		t.Errorf("copied tuple %#v", copied)
	}
	if err := s.DeleteThread(ctx, "copy"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteForRuns(ctx, []string{"r1"}); err != nil {
		t.Fatal(err)
	}
	afterRuns := countDocs(t, s, mongo.BlobsCollection, bson.D{})
	if err := s.Prune(ctx, []string{"t"}, spec.KeepLatest); err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := &spec.Tuple{
		Config:        spec.Config{ThreadID: "t", CheckpointID: "4"},
		Parent:        &spec.Config{ThreadID: "t", CheckpointID: "3"},
		Checkpoint:    spec.Checkpoint{V: 4, ID: "4", ChannelValues: map[string]any{"c": val(3)}, ChannelVersions: spec.Versions{"c": "4"}, VersionsSeen: map[string]spec.Versions{}},
		Metadata:      spec.Metadata{"run_id": "r4", "pad": val(3)},
		PendingWrites: []spec.PendingWrite{{TaskID: "task", Channel: "w", Value: val(3)}},
	}
	if !reflect.DeepEqual(tup, want) {
		t.Errorf("after prune:\n got %#v\nwant %#v", tup, want)
	}
	// One checkpoint (cp and metadata payloads), one value and one write
	// remain; every payload of 40+ bytes is several 7-byte chunks.
	left := countDocs(t, s, mongo.BlobsCollection, bson.D{})
	if left == 0 || left >= afterRuns {
		t.Errorf("chunks: %d after DeleteForRuns, %d after Prune; want fewer, not none", afterRuns, left)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if n := countDocs(t, s, mongo.BlobsCollection, bson.D{}); n != 0 {
		t.Errorf("%d chunks after DeleteThread", n)
	}
}

// TestLargeMetadata stores metadata too large to keep a readable copy
// inline: it is chunked like any large payload and still filterable.
func TestLargeMetadata(t *testing.T) {
	restore := mongo.SetChunking(64<<10, 256<<10)
	t.Cleanup(restore)
	s := saverT(t)
	ctx := context.Background()
	md := spec.Metadata{"big": string(bytes.Repeat([]byte("m"), 2<<20)), "k": "v"}
	put(t, s, "t", "", "", "1", nil, md)
	put(t, s, "t", "", "", "2", nil, spec.Metadata{"k": "other"})
	tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tup.Metadata, md) {
		t.Errorf("large metadata did not round-trip (%d keys)", len(tup.Metadata))
	}
	if got := listIDs(t, s, spec.ListOptions{ThreadID: "t", Filter: spec.Metadata{"k": "v"}}); len(got) != 1 || got[0] != "t//1" {
		t.Errorf("filter on large metadata: %q", got)
	}
	var doc bson.M
	if err := s.Database().Collection(mongo.CheckpointsCollection).FindOne(ctx, bson.D{{Key: "_id", Value: mongo.CheckpointKey("t", "", "1")}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc["metadata"] != nil {
		t.Errorf("readable copy of 2 MB metadata stored inline")
	}
}

// TestDeepMetadata stores metadata nested deeper than the readable BSON
// copy may be (but within spec.MaxValueDepth): it round-trips and stays
// filterable through the encoded copy.
func TestDeepMetadata(t *testing.T) {
	s := saverT(t)
	var deep any = "leaf"
	for i := range spec.MaxValueDepth - 1 {
		if i%2 == 0 {
			deep = []any{deep}
		} else {
			deep = map[string]any{"k": deep}
		}
	}
	md := spec.Metadata{"deep": deep, "k": "v"}
	put(t, s, "t", "", "", "1", nil, md)
	tup, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tup.Metadata, md) {
		t.Error("deep metadata did not round-trip")
	}
	if got := listIDs(t, s, spec.ListOptions{ThreadID: "t", Filter: spec.Metadata{"deep": deep}}); len(got) != 1 {
		t.Errorf("filter on deep metadata: %q", got)
	}
}
