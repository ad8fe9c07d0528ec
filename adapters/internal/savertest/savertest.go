// Package savertest holds tests every adapter of checkpointkit runs against
// its own saver, beyond the conformance suite: odd bytes in identifiers,
// calls under live deadlines, contexts cancelled in the middle of a call,
// and maintenance (Prune, DeleteThread, CopyThread, DeleteForRuns) racing
// writes and reads on the same thread, and the delta-history scenarios
// ([RunDelta]) with the delta snapshots' round trip. Each check states the
// rule it proves in its doc comment; the rules are listed in the adapters'
// docs.
//
// Interleavings are forced by the savers' own synchronisation (goroutines
// released together by a closed channel) and, for the MongoDB adapter, by
// hooks in its tests; nothing waits on a timer.
package savertest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Factory returns a fresh, empty saver for one test; cleanup is the test's.
type Factory func(t *testing.T) spec.Saver

// channels are the channels of every fixture checkpoint.
var channels = []string{"a", "b", "c"}

// Fixture returns checkpoint id with a value for every channel, each at a
// version of its own, metadata naming it (and run, when not empty), and
// the writes its task "task-<id>" makes. Everything is derived from id, so
// [Whole] can check a tuple on its own.
func Fixture(id, run string) (spec.Checkpoint, spec.Metadata, spec.Versions, []spec.Write) {
	vals := map[string]any{}
	vers := spec.Versions{}
	for _, ch := range channels {
		vals[ch] = id + "/" + ch
		vers[ch] = spec.Version(fmt.Sprintf("%s.%s", id, ch))
	}
	md := spec.Metadata{"id": id}
	if run != "" {
		md["run_id"] = run
	}
	writes := []spec.Write{
		{Channel: "w1", Value: id + "/w1"}, {Channel: "w2", Value: id + "/w2"},
		{Channel: spec.InterruptChannel, Value: id + "/i"}, {Channel: "w3", Value: []byte(id)},
	}
	cp := spec.Checkpoint{V: 4, ID: id, TS: "2026-01-01T00:00:00Z", ChannelValues: vals,
		ChannelVersions: vers, VersionsSeen: map[string]spec.Versions{}}
	return cp, md, vers, writes
}

// Put stores Fixture(id, run) in (thread, ns), and its writes when
// withWrites is set.
func Put(ctx context.Context, s spec.Saver, thread, ns, id, run string, withWrites bool) error {
	cp, md, nv, writes := Fixture(id, run)
	cfg, err := s.Put(ctx, spec.Config{ThreadID: thread, Namespace: ns}, cp, md, nv)
	if err != nil || !withWrites {
		return err
	}
	return s.PutWrites(ctx, cfg, writes, "task-"+id, "path")
}

// MustPut is Put that fails the test on error.
func MustPut(t testing.TB, s spec.Saver, thread, ns, id, run string, withWrites bool) {
	t.Helper()
	if err := Put(context.Background(), s, thread, ns, id, run, withWrites); err != nil {
		t.Fatalf("put %s/%s/%s: %v", thread, ns, id, err)
	}
}

// Whole returns an error unless t is a complete Fixture checkpoint: all
// its values and metadata, and either none or all of its task's writes.
func Whole(t *spec.Tuple) error {
	id := t.Config.CheckpointID
	if t.Metadata["id"] != id {
		return fmt.Errorf("checkpoint %s: metadata %v", id, t.Metadata)
	}
	if len(t.Checkpoint.ChannelValues) != len(channels) {
		return fmt.Errorf("checkpoint %s: torn, %d of %d channel values visible", id, len(t.Checkpoint.ChannelValues), len(channels))
	}
	for _, ch := range channels {
		if v := t.Checkpoint.ChannelValues[ch]; v != id+"/"+ch {
			return fmt.Errorf("checkpoint %s: channel %s holds %v", id, ch, v)
		}
	}
	if n := len(t.PendingWrites); n != 0 && n != 4 {
		return fmt.Errorf("checkpoint %s: %d of 4 pending writes visible", id, n)
	}
	return nil
}

// Snapshot returns the checkpoints of thread in every namespace, keyed
// "ns/id", checking that each is whole.
func Snapshot(ctx context.Context, s spec.Saver, thread string) (map[string]*spec.Tuple, error) {
	out := map[string]*spec.Tuple{}
	for t, err := range s.List(ctx, spec.ListOptions{ThreadID: thread, AllNamespaces: true}) {
		if err != nil {
			return nil, err
		}
		if err := Whole(t); err != nil {
			return nil, fmt.Errorf("thread %q: %w", thread, err)
		}
		out[t.Config.Namespace+"/"+t.Config.CheckpointID] = t
	}
	return out, nil
}

// keys returns the sorted keys of a snapshot, with the number of pending
// writes of each, e.g. "/2:4".
func keys(snap map[string]*spec.Tuple) []string {
	out := make([]string, 0, len(snap))
	for _, k := range slices.Sorted(maps.Keys(snap)) {
		out = append(out, fmt.Sprintf("%s:%d", k, len(snap[k].PendingWrites)))
	}
	return out
}

// Countdown is a context that cancels itself the k-th time the saver asks
// it whether it is done (Done or Err), so that a call is cancelled at the
// k-th point where the saver or its driver looks at its context: sweeping
// k cancels a call at every such point in turn.
type Countdown struct {
	context.Context
	cancel context.CancelFunc
	left   atomic.Int64
}

// NewCountdown returns a Countdown that fires on the k-th look (k >= 1).
func NewCountdown(k int) *Countdown {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Countdown{Context: ctx, cancel: cancel}
	c.left.Store(int64(k))
	return c
}

func (c *Countdown) tick() {
	if c.left.Add(-1) == 0 {
		c.cancel()
	}
}

// Done implements context.Context.
func (c *Countdown) Done() <-chan struct{} { c.tick(); return c.Context.Done() }

// Err implements context.Context.
func (c *Countdown) Err() error { c.tick(); return c.Context.Err() }

// Fired reports whether the countdown cancelled the context.
func (c *Countdown) Fired() bool { return c.Context.Err() != nil }

// Stop releases the context.
func (c *Countdown) Stop() { c.cancel() }

// Options sizes [RunAll].
type Options struct {
	// Rounds is how often each race runs (default 20).
	Rounds int
	// Writes is how many checkpoints the writer of ReadersDuringMaintenance
	// puts (default 40).
	Writes int
	// MaxK bounds the cancellation sweep (default 400).
	MaxK int
	// Setup, when set, returns the saver's Setup method, which
	// DeadlineCalls then calls under a deadline too.
	Setup func(s spec.Saver) func(context.Context) error
}

// RunAll runs every check of the package as a subtest, each on a fresh
// saver from fresh.
func RunAll(t *testing.T, fresh Factory, o Options) {
	if o.Rounds == 0 {
		o.Rounds = 20
	}
	if o.Writes == 0 {
		o.Writes = 40
	}
	if o.MaxK == 0 {
		o.MaxK = 400
	}
	t.Run("OddBytes", func(t *testing.T) { OddBytes(t, fresh(t)) })
	t.Run("DeadlineCalls", func(t *testing.T) {
		s := fresh(t)
		var setup func(context.Context) error
		if o.Setup != nil {
			setup = o.Setup(s)
		}
		DeadlineCalls(t, s, setup)
	})
	t.Run("PutWritesAllOrNothing", func(t *testing.T) { PutWritesAllOrNothing(t, fresh(t)) })
	t.Run("CancelDuring", func(t *testing.T) { CancelDuring(t, fresh(t), o.MaxK) })
	t.Run("PruneRacesPut", func(t *testing.T) { PruneRacesPut(t, fresh(t), o.Rounds) })
	t.Run("DeleteThreadRacesPut", func(t *testing.T) { DeleteThreadRacesPut(t, fresh(t), o.Rounds) })
	t.Run("ReadersDuringMaintenance", func(t *testing.T) { ReadersDuringMaintenance(t, fresh(t), o.Writes) })
}
