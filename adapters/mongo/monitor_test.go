package mongo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/event"
	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// commandLog counts the commands a client sends, by name and collection.
type commandLog struct {
	mu     sync.Mutex
	counts map[string]int
}

func (l *commandLog) started(_ context.Context, e *event.CommandStartedEvent) {
	coll := ""
	if v, err := e.Command.LookupErr(e.CommandName); err == nil {
		coll, _ = v.StringValueOK()
	}
	l.mu.Lock()
	l.counts[e.CommandName+" "+coll]++
	l.mu.Unlock()
}

func (l *commandLog) reset() {
	l.mu.Lock()
	l.counts = map[string]int{}
	l.mu.Unlock()
}

func (l *commandLog) get(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[key]
}

// TestListQueriesPerPage checks from the commands on the wire that List
// loads values and pending writes once per page of checkpoints, not once
// per checkpoint, and that breaking out of the loop kills the server
// cursor.
func TestListQueriesPerPage(t *testing.T) {
	log := &commandLog{counts: map[string]int{}}
	c, err := mongodrv.Connect(options.Client().ApplyURI(testURI(t)).
		SetMonitor(&event.CommandMonitor{Started: log.started}))
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
		got++
	}
	if got != n {
		t.Fatalf("listed %d, want %d", got, n)
	}
	if f := log.get("find " + mongo.CheckpointsCollection); f != 1 {
		t.Errorf("%d finds on checkpoints, want 1 cursor", f)
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
	if k := log.get("killCursors " + mongo.CheckpointsCollection); k != 1 {
		t.Errorf("breaking out of List sent %d killCursors, want 1", k)
	}
}
