package mongo_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// commandLog counts the commands a client sends, by name and collection,
// the time their successful replies took, the documents those replies
// returned, and the server cursors left open by the replies.
type commandLog struct {
	mu         sync.Mutex
	counts     map[string]int
	took       map[string]time.Duration // by "command collection", successful replies
	docs       map[string]int           // by "command collection": documents in cursor batches
	openCursor map[string]int           // by "command collection": replies with a non-zero cursor id
	coll       map[int64]string
}

func newCommandLog() *commandLog {
	l := &commandLog{}
	l.reset()
	return l
}

func (l *commandLog) started(_ context.Context, e *event.CommandStartedEvent) {
	// A getMore names its collection in "collection"; other commands in
	// the field named after them.
	field := e.CommandName
	if field == "getMore" {
		field = "collection"
	}
	coll := ""
	if v, err := e.Command.LookupErr(field); err == nil {
		coll, _ = v.StringValueOK()
	}
	l.mu.Lock()
	l.counts[e.CommandName+" "+coll]++
	l.coll[e.RequestID] = e.CommandName + " " + coll
	l.mu.Unlock()
}

func (l *commandLog) succeeded(_ context.Context, e *event.CommandSucceededEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.took[l.coll[e.RequestID]] += e.Duration
	l.docs[l.coll[e.RequestID]] += batchLen(e.Reply)
	if id, err := e.Reply.LookupErr("cursor", "id"); err == nil {
		if n, ok := id.AsInt64OK(); ok && n != 0 {
			l.openCursor[l.coll[e.RequestID]]++
		}
	}
}

// batchLen returns the number of documents in a reply's cursor batch
// (firstBatch of a find or aggregate, nextBatch of a getMore), 0 for a
// reply without one.
func batchLen(reply bson.Raw) int {
	for _, batch := range []string{"firstBatch", "nextBatch"} {
		if v, err := reply.LookupErr("cursor", batch); err == nil {
			if arr, ok := v.ArrayOK(); ok {
				vals, _ := arr.Values()
				return len(vals)
			}
		}
	}
	return 0
}

func (l *commandLog) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: l.started, Succeeded: l.succeeded}
}

func (l *commandLog) reset() {
	l.mu.Lock()
	l.counts, l.took, l.docs, l.openCursor, l.coll = map[string]int{}, map[string]time.Duration{}, map[string]int{}, map[string]int{}, map[int64]string{}
	l.mu.Unlock()
}

func (l *commandLog) get(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[key]
}

// snapshot returns the counts and times so far, by "command collection".
func (l *commandLog) snapshot() (counts map[string]int, took map[string]time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.counts), maps.Clone(l.took)
}

// documents returns the documents returned so far, by "command
// collection".
func (l *commandLog) documents() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.docs)
}

// documentsByCollection returns the documents returned so far, by
// collection, whatever the command (find, aggregate or getMore).
func (l *commandLog) documentsByCollection() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for key, n := range l.docs {
		_, coll, _ := strings.Cut(key, " ")
		out[coll] += n
	}
	return out
}

// monitoredSaver returns a saver over fresh storage whose client's commands
// the returned log records; both are released when the test ends.
func monitoredSaver(t *testing.T) (*mongo.Saver, *commandLog) {
	t.Helper()
	log := newCommandLog()
	s, cleanup, err := newSaver(context.Background(), monitoredClient(t, log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return s, log
}

// monitoredClient connects a client whose commands log records, closed
// when the test ends.
func monitoredClient(tb testing.TB, log *commandLog) *mongodrv.Client {
	tb.Helper()
	c, err := mongodrv.Connect(options.Client().ApplyURI(testURI(tb)).SetMonitor(log.monitor()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

func (l *commandLog) open(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.openCursor[key]
}

// TestListQueriesPerPage checks from the commands on the wire that List
// reads checkpoints a page at a time with one bounded query per page, loads
// values and pending writes once per page, not once per checkpoint, and
// never leaves a server cursor open while the loop body runs (so a slow
// consumer cannot meet the server's idle-cursor timeout, and breaking out
// of the loop leaves nothing to kill).
func TestListQueriesPerPage(t *testing.T) {
	log := newCommandLog()
	c, err := mongodrv.Connect(options.Client().ApplyURI(testURI(t)).SetMonitor(log.monitor()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	s, cleanup, err := newSaver(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)

	const n = 40 // more than one page of 32
	for i := range n {
		cfg := put(t, s, "t", "", "", fmt.Sprintf("%03d", i), map[string]any{"c": int64(i)}, nil)
		if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "w", Value: int64(i)}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}

	log.reset()
	got := 0
	for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(tup.PendingWrites) != 1 || tup.Checkpoint.ChannelValues["c"] == nil {
			t.Fatalf("incomplete tuple %#v", tup)
		}
		if open := log.open("find " + mongo.CheckpointsCollection); open != 0 {
			t.Fatalf("a server cursor is open while the loop body runs (%d)", open)
		}
		got++
	}
	if got != n {
		t.Fatalf("listed %d, want %d", got, n)
	}
	if f := log.get("find " + mongo.CheckpointsCollection); f != 2 {
		t.Errorf("%d finds on checkpoints, want 2 (one per page of 32)", f)
	}
	if g := log.get("getMore " + mongo.CheckpointsCollection); g != 0 {
		t.Errorf("%d getMores on checkpoints, want none", g)
	}
	for _, coll := range []string{mongo.WritesCollection, mongo.ValuesCollection} {
		if f := log.get("find " + coll); f != 2 {
			t.Errorf("%d finds on %s for %d checkpoints, want 2 (one per page)", f, coll, n)
		}
	}

	log.reset()
	for range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		break
	}
	if k := log.get("killCursors " + mongo.CheckpointsCollection); k != 0 {
		t.Errorf("breaking out of List sent %d killCursors: a cursor was left open", k)
	}
}

// TestDeleteForRunsPages checks from the commands on the wire that
// DeleteForRuns reads its matches a bounded page at a time (never one
// unbounded find, never a getMore) and deletes all of them.
func TestDeleteForRunsPages(t *testing.T) {
	var mu sync.Mutex
	var finds []int64 // limit of each find on checkpoints, -1 for none
	getMores := 0
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		coll := ""
		if v, err := e.Command.LookupErr(e.CommandName); err == nil {
			coll, _ = v.StringValueOK()
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.CommandName == "find" && coll == mongo.CheckpointsCollection:
			limit := int64(-1)
			if v, err := e.Command.LookupErr("limit"); err == nil {
				limit, _ = v.AsInt64OK()
			}
			finds = append(finds, limit)
		case e.CommandName == "getMore":
			getMores++
		}
	}}
	c, err := mongodrv.Connect(options.Client().ApplyURI(testURI(t)).SetMonitor(mon))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	ctx := context.Background()
	s, cleanup, err := newSaver(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	const n = 300 // more than one page of 256
	for i := range n {
		put(t, s, fmt.Sprintf("t%d", i%7), "", "", fmt.Sprintf("%04d", i), nil, spec.Metadata{"run_id": "r"})
	}
	put(t, s, "t0", "", "", "9999", nil, spec.Metadata{"run_id": "other"})
	mu.Lock()
	finds, getMores = nil, 0
	mu.Unlock()
	if err := s.DeleteForRuns(ctx, []string{"r"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	seen, gm := slices.Clone(finds), getMores
	mu.Unlock()
	if len(seen) < 2 {
		t.Errorf("%d finds for %d matches, want a page at a time", len(seen), n)
	}
	for _, l := range seen {
		if l < 0 || l > 256 {
			t.Errorf("a find on checkpoints with limit %d: DeleteForRuns must read bounded pages", l)
		}
	}
	if gm != 0 {
		t.Errorf("%d getMores", gm)
	}
	if got := listIDs(t, s, spec.ListOptions{AllNamespaces: true}); len(got) != 1 {
		t.Errorf("after DeleteForRuns: %d checkpoints left, want 1", len(got))
	}
}
