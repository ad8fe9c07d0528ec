package mongo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The tests of this file force the interleavings that lose or tear data
// without transactions, through the saver's test hook: when an operation
// reaches a point, the hook runs a whole other operation there, on the same
// saver, before letting the first one continue.

// atOnce installs a hook that runs fn the first time point is reached
// (later passes, including those of fn's own calls, do nothing).
func atOnce(t *testing.T, s *mongo.Saver, point string, fn func()) {
	t.Helper()
	var done atomic.Bool
	mongo.SetHook(s, func(p string) {
		if p == point && done.CompareAndSwap(false, true) {
			fn()
		}
	})
	t.Cleanup(func() { mongo.SetHook(s, nil) })
}

// crash is the panic value of crashAt's hook.
type crash struct{}

// crashAt makes the first operation that reaches point stop there, as if
// its process had died: the hook panics and [crashed] recovers. Cancelling
// the context cannot interrupt a write call midway (it finishes whole, see
// the package's detach), so tests of what an interrupted call leaves behind
// stop it this way.
func crashAt(t *testing.T, s *mongo.Saver, point string) {
	t.Helper()
	atOnce(t, s, point, func() { panic(crash{}) })
}

// crashed runs call and reports whether crashAt stopped it; a call that
// returns instead fails the test.
func crashed(t *testing.T, call func() error) {
	t.Helper()
	stopped := func() (stopped bool) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(crash); !ok {
					panic(r)
				}
				stopped = true
			}
		}()
		err := call()
		t.Errorf("the call returned %v instead of stopping at the crash point", err)
		return false
	}()
	if !stopped {
		t.FailNow()
	}
}

// snapshot returns the keys of thread's checkpoints, failing the test on
// a torn one.
func snapshot(t *testing.T, s spec.Saver, thread string) []string {
	t.Helper()
	snap, err := savertest.Snapshot(context.Background(), s, thread)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for k, tup := range snap {
		out = append(out, fmt.Sprintf("%s:%d", k, len(tup.PendingWrites)))
	}
	slices.Sort(out)
	return out
}

func putFixtures(t *testing.T, s spec.Saver, thread string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		savertest.MustPut(t, s, thread, "", id, "", true)
	}
}

// TestPruneSparesNewerPut: a Put of a checkpoint newer than every other
// lands after Prune found the latest checkpoints and before it deletes.
// Prune deletes only what is older than the checkpoint it keeps, so the
// newer one survives whole, with its writes (it used to delete everything
// but the one it had read, the new checkpoint included).
func TestPruneSparesNewerPut(t *testing.T) {
	s := saverT(t)
	ctx := context.Background()
	putFixtures(t, s, "t", "1", "2", "3")
	atOnce(t, s, mongo.HookPruneLatest, func() { savertest.MustPut(t, s, "t", "", "9", "", true) })
	if err := s.Prune(ctx, []string{"t"}, spec.KeepLatest); err != nil {
		t.Fatal(err)
	}
	if got, want := snapshot(t, s, "t"), []string{"/3:4", "/9:4"}; !slices.Equal(got, want) {
		t.Fatalf("after Prune raced a newer Put: %v, want %v", got, want)
	}
}

// TestPruneSparesValuesOfPutInFlight: a Put whose checkpoint document is
// written but whose values are not yet loses nothing to a Prune that runs
// to completion in between, and a Put that rewrites an unreferenced value
// after garbage collection read the live references keeps it: the value's
// new pin stops the deletion.
func TestPruneSparesValuesOfPutInFlight(t *testing.T) {
	ctx := context.Background()
	t.Run("checkpoint written, values not", func(t *testing.T) {
		s := saverT(t)
		putFixtures(t, s, "t", "1", "2", "3")
		atOnce(t, s, mongo.HookPutCheckpoint, func() {
			if err := s.Prune(ctx, []string{"t"}, spec.KeepLatest); err != nil {
				t.Error(err)
			}
		})
		savertest.MustPut(t, s, "t", "", "9", "", true)
		if got, want := snapshot(t, s, "t"), []string{"/9:4"}; !slices.Equal(got, want) &&
			!slices.Equal(got, []string{"/3:4", "/9:4"}) {
			t.Fatalf("after Prune ran inside a Put: %v, want %v", got, want)
		}
	})
	t.Run("value rewritten after the references were read", func(t *testing.T) {
		s := saverT(t)
		putFixtures(t, s, "t", "1", "2", "3")
		// Checkpoint 9 stores its values under checkpoint 1's versions:
		// by then checkpoint 1 is deleted and its values are candidates.
		atOnce(t, s, mongo.HookGCRefs, func() {
			cp, md, _, _ := savertest.Fixture("1", "")
			cp.ID, md["id"] = "9", "9"
			for ch := range cp.ChannelValues {
				cp.ChannelValues[ch] = "9/" + ch
			}
			if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, md, cp.ChannelVersions); err != nil {
				t.Error(err)
			}
		})
		if err := s.Prune(ctx, []string{"t"}, spec.KeepLatest); err != nil {
			t.Fatal(err)
		}
		tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "9"})
		if err != nil {
			t.Fatalf("checkpoint 9 lost its rewritten values: %v", err)
		}
		if len(tup.Checkpoint.ChannelValues) != 3 || tup.Checkpoint.ChannelValues["a"] != "9/a" {
			t.Fatalf("checkpoint 9 reads %v", tup.Checkpoint.ChannelValues)
		}
	})
}

// TestBlobsOfPutInFlight: with payloads chunked, a garbage collection that
// runs while a Put has written its checkpoint document but not its chunks,
// or after it read the live references while a Put rewrites a chunk that
// already existed, deletes none of them.
func TestBlobsOfPutInFlight(t *testing.T) {
	defer mongo.SetChunking(64, 32)()
	ctx := context.Background()
	big := func(id string) map[string]any { return map[string]any{"big": strings.Repeat(id, 200)} }
	putBig := func(s *mongo.Saver, id string) error {
		vs := spec.Versions{"big": spec.Version("v" + id)}
		cp := spec.Checkpoint{V: 4, ID: id, ChannelValues: big(id), ChannelVersions: vs}
		_, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, spec.Metadata{"id": id}, vs)
		return err
	}
	check := func(t *testing.T, s *mongo.Saver, id string) {
		t.Helper()
		tup, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: id})
		if err != nil || tup.Checkpoint.ChannelValues["big"] != big(id)["big"] {
			t.Fatalf("checkpoint %s after garbage collection: %v, %v", id, tup, err)
		}
	}
	t.Run("chunks not written yet", func(t *testing.T) {
		s := saverT(t)
		for _, id := range []string{"1", "2"} {
			if err := putBig(s, id); err != nil {
				t.Fatal(err)
			}
		}
		atOnce(t, s, mongo.HookPutCheckpoint, func() {
			if err := s.Prune(ctx, []string{"t"}, spec.KeepLatest); err != nil {
				t.Error(err)
			}
		})
		if err := putBig(s, "9"); err != nil {
			t.Fatal(err)
		}
		check(t, s, "9")
	})
	t.Run("existing chunk rewritten after the references were read", func(t *testing.T) {
		s := saverT(t)
		for _, id := range []string{"1", "2"} {
			if err := putBig(s, id); err != nil {
				t.Fatal(err)
			}
		}
		// Deleting checkpoint 1 leaves its chunks unreferenced; re-putting
		// it writes the very same chunks (same owner, same bytes).
		if err := s.DeleteForRuns(ctx, []string{"none"}); err != nil {
			t.Fatal(err)
		}
		atOnce(t, s, mongo.HookGCRefs, func() {
			if err := putBig(s, "1"); err != nil {
				t.Error(err)
			}
		})
		if err := s.Prune(ctx, []string{"t"}, spec.KeepLatest); err != nil {
			t.Fatal(err)
		}
		check(t, s, "1")
		check(t, s, "2")
	})
}

// TestDeleteThreadRacesPutInFlight: DeleteThread running inside a Put
// (after its checkpoint document, before its values), and a Put running
// inside DeleteThread (after its first deletion of the checkpoints), never
// leave a checkpoint without its values; the checkpoint put before
// DeleteThread began is gone.
func TestDeleteThreadRacesPutInFlight(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		point string
		outer func(s *mongo.Saver) error
		inner func(s *mongo.Saver) error
	}{
		{"delete inside put", mongo.HookPutCheckpoint,
			func(s *mongo.Saver) error { return savertest.Put(ctx, s, "t", "", "2", "", true) },
			func(s *mongo.Saver) error { return s.DeleteThread(ctx, "t") }},
		{"delete inside put, after its values", mongo.HookPutValues,
			func(s *mongo.Saver) error { return savertest.Put(ctx, s, "t", "", "2", "", true) },
			func(s *mongo.Saver) error { return s.DeleteThread(ctx, "t") }},
		{"put inside delete", mongo.HookDeleteCheckpoints,
			func(s *mongo.Saver) error { return s.DeleteThread(ctx, "t") },
			func(s *mongo.Saver) error { return savertest.Put(ctx, s, "t", "", "2", "", true) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := saverT(t)
			putFixtures(t, s, "t", "1")
			atOnce(t, s, c.point, func() {
				if err := c.inner(s); err != nil {
					t.Error(err)
				}
			})
			if err := c.outer(s); err != nil {
				t.Fatal(err)
			}
			if got := snapshot(t, s, "t"); len(got) != 0 && !slices.Equal(got, []string{"/2:4"}) {
				t.Fatalf("thread holds %v, want nothing or the whole new checkpoint", got)
			}
		})
	}
}

// TestReaderRacesDeleteThread: a List that has read its page of checkpoint
// documents when DeleteThread runs to completion shows none of them torn.
func TestReaderRacesDeleteThread(t *testing.T) {
	s := saverT(t)
	ctx := context.Background()
	putFixtures(t, s, "t", "1", "2", "3")
	atOnce(t, s, mongo.HookListPage, func() {
		if err := s.DeleteThread(ctx, "t"); err != nil {
			t.Error(err)
		}
	})
	for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
		if err := savertest.Whole(tup); err != nil {
			t.Fatalf("a reader saw a checkpoint torn by DeleteThread: %v", err)
		}
	}
}

// TestPutWritesMidway: a batch whose document is stored but whose large
// value is not yet chunked shows none of its writes; when the call then
// stops there (its process dies), still none; retried, all of them. A
// cancelled context instead lets the call finish whole.
func TestPutWritesMidway(t *testing.T) {
	defer mongo.SetChunking(64, 32)()
	s := saverT(t)
	putFixtures(t, s, "t", "1")
	cfg := spec.Config{ThreadID: "t", CheckpointID: "1"}
	writes := []spec.Write{{Channel: "small", Value: "s"}, {Channel: spec.InterruptChannel, Value: "i"}, {Channel: "large", Value: strings.Repeat("x", 500)}}
	atOnce(t, s, mongo.HookWritesBatch, func() {
		if n := countTaskWrites(t, s, "x"); n != 0 {
			t.Errorf("%d writes of the batch visible before its chunks are written", n)
		}
		panic(crash{})
	})
	crashed(t, func() error { return s.PutWrites(context.Background(), cfg, writes, "x", "") })
	if n := countTaskWrites(t, s, "x"); n != 0 {
		t.Fatalf("%d writes of an interrupted batch visible", n)
	}
	mongo.SetHook(s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	atOnce(t, s, mongo.HookWritesBatch, cancel)
	if err := s.PutWrites(ctx, cfg, writes, "y", ""); err != nil {
		t.Fatalf("PutWrites cancelled midway: %v, want it finished whole", err)
	}
	if n := countTaskWrites(t, s, "y"); n != 3 {
		t.Fatalf("%d writes of a batch cancelled midway visible, want 3", n)
	}
	mongo.SetHook(s, nil)
	if err := s.PutWrites(context.Background(), cfg, writes, "x", ""); err != nil {
		t.Fatal(err)
	}
	if n := countTaskWrites(t, s, "x"); n != 3 {
		t.Fatalf("%d writes of the retried batch visible, want 3", n)
	}
}

func countTaskWrites(t *testing.T, s spec.Saver, task string) int {
	t.Helper()
	tup, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "t", CheckpointID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range tup.PendingWrites {
		if w.TaskID == task {
			n++
		}
	}
	return n
}
