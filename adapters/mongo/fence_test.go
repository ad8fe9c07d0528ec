package mongo_test

import (
	"context"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestInterruptedMaintenance stops each maintenance call right after it
// inserted its fence, before it deleted or released anything, as if its
// process had died there: readers see
// the whole effect (or, for a copy, none of it) and keep seeing it, and
// the next Put on the thread finishes the fence before it writes, so the
// new checkpoint is visible and nothing stale comes back.
func TestInterruptedMaintenance(t *testing.T) {
	for _, c := range []struct {
		name  string
		point string
		call  func(ctx context.Context, s *mongo.Saver) error
		// after is the thread "t" the reader must see after the
		// interrupted call, and after a new Put of checkpoint 9.
		after, next []string
	}{
		{"delete thread", mongo.HookFenced,
			func(ctx context.Context, s *mongo.Saver) error { return s.DeleteThread(ctx, "t") },
			nil, []string{"/9:4"}},
		{"prune", mongo.HookFenced,
			func(ctx context.Context, s *mongo.Saver) error { return s.Prune(ctx, []string{"t"}, spec.KeepLatest) },
			[]string{"/3:4"}, []string{"/3:4", "/9:4"}},
		{"delete for runs", mongo.HookFenced,
			func(ctx context.Context, s *mongo.Saver) error { return s.DeleteForRuns(ctx, []string{"r"}) },
			[]string{"/2:4"}, []string{"/2:4", "/9:4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := saverT(t)
			savertest.MustPut(t, s, "t", "", "1", "r", true)
			savertest.MustPut(t, s, "t", "", "2", "", true)
			savertest.MustPut(t, s, "t", "", "3", "r", true)
			crashAt(t, s, c.point)
			crashed(t, func() error { return c.call(context.Background(), s) })
			mongo.SetHook(s, nil)
			if got := snapshot(t, s, "t"); !slices.Equal(got, c.after) {
				t.Fatalf("after the interrupted call: %v, want %v", got, c.after)
			}
			if n := countDocs(t, s, mongo.OpsCollection, bson.D{}); n != 1 {
				t.Fatalf("%d fences left, want the interrupted call's", n)
			}
			// A new Put finishes the fence first.
			savertest.MustPut(t, s, "t", "", "9", "", true)
			if got := snapshot(t, s, "t"); !slices.Equal(got, c.next) {
				t.Fatalf("after a new Put: %v, want %v", got, c.next)
			}
			if n := countDocs(t, s, mongo.OpsCollection, bson.D{}); n != 0 {
				t.Errorf("%d fences left after the Put finished them", n)
			}
			// Re-putting a deleted checkpoint shows none of its old writes.
			cp, md, nv, _ := savertest.Fixture("1", "")
			if _, err := s.Put(context.Background(), spec.Config{ThreadID: "t"}, cp, md, nv); err != nil {
				t.Fatal(err)
			}
			if tup, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "t", CheckpointID: "1"}); err != nil || len(tup.PendingWrites) != 0 {
				t.Errorf("re-put checkpoint 1: %v, %v: old writes came back", tup, err)
			}
		})
	}
}

// TestInterruptedCopy stops CopyThread after it wrote every document,
// before it released them, as if its process had died there: dst shows
// nothing, and a new copy shows all.
func TestInterruptedCopy(t *testing.T) {
	s := saverT(t)
	for _, id := range []string{"1", "2", "3"} {
		savertest.MustPut(t, s, "src", "", id, "", true)
	}
	crashAt(t, s, mongo.HookCopyHeld)
	crashed(t, func() error { return s.CopyThread(context.Background(), "src", "dst") })
	mongo.SetHook(s, nil)
	if got := snapshot(t, s, "dst"); len(got) != 0 {
		t.Fatalf("an interrupted copy shows %v", got)
	}
	if err := s.CopyThread(context.Background(), "src", "dst"); err != nil {
		t.Fatal(err)
	}
	if got, want := snapshot(t, s, "dst"), []string{"/1:4", "/2:4", "/3:4"}; !slices.Equal(got, want) {
		t.Fatalf("after a second copy: %v, want %v", got, want)
	}
}
