package sqlite_test

import (
	"context"
	"encoding/base64"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The latest checkpoint of ci/bench-delta's list thread at step 1,000: one
// channel holding a list of 1,000 messages of 500 random base-64
// characters, about 500 KB of MessagePack (docs/benchmarks.md, "Storage
// growth of a delta channel").
const (
	largeItems    = 1000
	largeItemSize = 500
)

// largeList returns the list of largeItems random strings of largeItemSize
// base-64 characters, the same for every call.
func largeList() []any {
	rng := rand.New(rand.NewPCG(21, 1000))
	raw := make([]byte, largeItemSize*3/4)
	list := make([]any, largeItems)
	for i := range list {
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		list[i] = base64.StdEncoding.EncodeToString(raw)
	}
	return list
}

// putLarge opens a file database and puts one checkpoint holding largeList
// on thread "large".
func putLarge(tb testing.TB) (*sqlite.Saver, []any) {
	tb.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "large.db")+"?_synchronous=NORMAL")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	list := largeList()
	versions := spec.Versions{"messages": s.NextVersion("")}
	cp := spec.Checkpoint{
		V: 4, ID: spec.NewCheckpointID(0), TS: time.Now().UTC().Format(time.RFC3339Nano),
		ChannelValues:   map[string]any{"messages": list},
		ChannelVersions: versions,
		VersionsSeen:    map[string]spec.Versions{},
	}
	if _, err := s.Put(ctx, spec.Config{ThreadID: "large"}, cp, spec.Metadata{"source": "loop", "step": int64(1000)}, versions); err != nil {
		tb.Fatal(err)
	}
	return s, list
}

// TestLargeValueRead checks that a large list reads back as it was put and
// that two reads do not share it.
func TestLargeValueRead(t *testing.T) {
	ctx := context.Background()
	s, list := putLarge(t)
	a, err := s.GetTuple(ctx, spec.Config{ThreadID: "large"})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Checkpoint.ChannelValues["messages"]; !reflect.DeepEqual(got, list) {
		t.Fatalf("read back a %T of %d items, not the list put", got, len(list))
	}
	b, err := s.GetTuple(ctx, spec.Config{ThreadID: "large"})
	if err != nil {
		t.Fatal(err)
	}
	la, lb := a.Checkpoint.ChannelValues["messages"].([]any), b.Checkpoint.ChannelValues["messages"].([]any)
	la[0] = "changed"
	if lb[0] != list[0] {
		t.Fatal("two reads share one list")
	}
}

// BenchmarkLargeValueRead times GetTuple of the latest checkpoint of a
// thread whose one channel is a list of 1,000 strings of 500 bytes.
func BenchmarkLargeValueRead(b *testing.B) {
	ctx := context.Background()
	s, _ := putLarge(b)
	b.ReportAllocs()
	for b.Loop() {
		t, err := s.GetTuple(ctx, spec.Config{ThreadID: "large"})
		if err != nil {
			b.Fatal(err)
		}
		if l, _ := t.Checkpoint.ChannelValues["messages"].([]any); len(l) != largeItems {
			b.Fatalf("read %d items, want %d", len(l), largeItems)
		}
	}
}
