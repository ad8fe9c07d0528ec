package savertest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// badStrings hold a NUL byte or invalid UTF-8.
var badStrings = []string{"a\x00b", "\xff\xfe", "ok\xc3"}

// OddBytes checks that every adapter gives the same answer for NUL bytes
// and invalid UTF-8: in thread IDs, namespaces, checkpoint, parent and run
// IDs, Before, task IDs, task paths, channel and node names and versions
// they fail with spec.ErrInvalidConfig and store nothing; in TS, values and
// metadata (where the value model allows them) they are stored and read
// back byte for byte; invalid UTF-8 in metadata is spec.ErrUnsupportedValue.
// No backend error (an SQLSTATE, a driver error) ever reaches the caller.
func OddBytes(t *testing.T, s spec.Saver) {
	ctx := context.Background()
	MustPut(t, s, "t", "", "1", "r", true)
	before, err := Snapshot(ctx, s, "t")
	if err != nil {
		t.Fatal(err)
	}
	w := []spec.Write{{Channel: "a", Value: int64(1)}}
	wcfg := spec.Config{ThreadID: "t", CheckpointID: "1"}
	put := func(cfg spec.Config, mutate func(cp *spec.Checkpoint, nv spec.Versions)) error {
		cp, md, nv, _ := Fixture("9", "")
		if mutate != nil {
			mutate(&cp, nv)
		}
		_, err := s.Put(ctx, cfg, cp, md, nv)
		return err
	}
	list := func(o spec.ListOptions) error {
		for _, err := range s.List(ctx, o) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	for _, bad := range badStrings {
		calls := map[string]func() error{
			"put thread":    func() error { return put(spec.Config{ThreadID: bad}, nil) },
			"put namespace": func() error { return put(spec.Config{ThreadID: "t", Namespace: bad}, nil) },
			"put parent":    func() error { return put(spec.Config{ThreadID: "t", CheckpointID: bad}, nil) },
			"put id": func() error {
				return put(spec.Config{ThreadID: "t"}, func(cp *spec.Checkpoint, _ spec.Versions) { cp.ID = bad })
			},
			"put version": func() error {
				return put(spec.Config{ThreadID: "t"}, func(cp *spec.Checkpoint, nv spec.Versions) {
					cp.ChannelVersions["a"], nv["a"] = spec.Version(bad), spec.Version(bad)
				})
			},
			"put new version only": func() error {
				return put(spec.Config{ThreadID: "t"}, func(_ *spec.Checkpoint, nv spec.Versions) { nv["a"] = spec.Version(bad) })
			},
			"put channel": func() error {
				return put(spec.Config{ThreadID: "t"}, func(cp *spec.Checkpoint, nv spec.Versions) {
					cp.ChannelValues[bad], cp.ChannelVersions[bad], nv[bad] = 1, "1", "1"
				})
			},
			"put seen node": func() error {
				return put(spec.Config{ThreadID: "t"}, func(cp *spec.Checkpoint, _ spec.Versions) {
					cp.VersionsSeen[bad] = spec.Versions{"a": "1"}
				})
			},
			"put seen version": func() error {
				return put(spec.Config{ThreadID: "t"}, func(cp *spec.Checkpoint, _ spec.Versions) {
					cp.VersionsSeen["n"] = spec.Versions{"a": spec.Version(bad)}
				})
			},
			"put updated channel": func() error {
				return put(spec.Config{ThreadID: "t"}, func(cp *spec.Checkpoint, _ spec.Versions) { cp.UpdatedChannels = []string{bad} })
			},
			"writes thread": func() error { return s.PutWrites(ctx, spec.Config{ThreadID: bad, CheckpointID: "1"}, w, "x", "") },
			"writes namespace": func() error {
				return s.PutWrites(ctx, spec.Config{ThreadID: "t", Namespace: bad, CheckpointID: "1"}, w, "x", "")
			},
			"writes checkpoint": func() error { return s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: bad}, w, "x", "") },
			"writes task":       func() error { return s.PutWrites(ctx, wcfg, w, bad, "") },
			"writes task path":  func() error { return s.PutWrites(ctx, wcfg, w, "x", bad) },
			"writes channel":    func() error { return s.PutWrites(ctx, wcfg, append(w, spec.Write{Channel: bad, Value: 2}), "x", "") },
			"get thread":        func() error { _, err := s.GetTuple(ctx, spec.Config{ThreadID: bad}); return err },
			"get namespace":     func() error { _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", Namespace: bad}); return err },
			"get checkpoint":    func() error { _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: bad}); return err },
			"list thread":       func() error { return list(spec.ListOptions{ThreadID: bad}) },
			"list namespace":    func() error { return list(spec.ListOptions{ThreadID: "t", Namespace: bad}) },
			"list checkpoint":   func() error { return list(spec.ListOptions{ThreadID: "t", CheckpointID: bad}) },
			"list before":       func() error { return list(spec.ListOptions{ThreadID: "t", Before: bad}) },
			"delete thread":     func() error { return s.DeleteThread(ctx, bad) },
		}
		if c, ok := s.(spec.ThreadCopier); ok {
			calls["copy src"] = func() error { return c.CopyThread(ctx, bad, "u") }
			calls["copy dst"] = func() error { return c.CopyThread(ctx, "t", bad) }
		}
		if p, ok := s.(spec.Pruner); ok {
			calls["prune thread"] = func() error { return p.Prune(ctx, []string{bad}, spec.KeepLatest) }
		}
		if r, ok := s.(spec.RunDeleter); ok {
			calls["delete runs"] = func() error { return r.DeleteForRuns(ctx, []string{"r", bad}) }
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, spec.ErrInvalidConfig) {
				t.Errorf("%s %q: error = %v, want one wrapping ErrInvalidConfig", name, bad, err)
			}
		}
	}
	after, err := Snapshot(ctx, s, "t")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys(after)) != fmt.Sprint(keys(before)) {
		t.Errorf("rejected calls changed the thread: %v, was %v", keys(after), keys(before))
	}
	if snap, err := Snapshot(ctx, s, "u"); err != nil || len(snap) != 0 {
		t.Errorf("rejected copy stored %v (%v)", keys(snap), err)
	}

	// Where the value model allows odd bytes, they round-trip.
	odd := "\x00\xff\xfe é"
	cp, _, nv, _ := Fixture("o", "")
	cp.TS = odd
	cp.ChannelValues["a"] = map[string]any{odd: []any{odd, []byte(odd)}}
	md := spec.Metadata{"k\x00ey": "v", "nested": map[string]any{"s": "a\x00b"}}
	cfg, err := s.Put(ctx, spec.Config{ThreadID: "odd"}, cp, md, nv)
	if err != nil {
		t.Fatalf("put with odd bytes in TS, values and metadata: %v", err)
	}
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "w", Value: odd}}, "task", "p|ü:1"); err != nil {
		t.Fatalf("writes with odd bytes in the value: %v", err)
	}
	got, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Checkpoint.TS != odd {
		t.Errorf("TS read back as %q, want %q", got.Checkpoint.TS, odd)
	}
	if want := map[string]any{odd: []any{odd, []byte(odd)}}; !reflect.DeepEqual(got.Checkpoint.ChannelValues["a"], want) {
		t.Errorf("value read back as %#v, want %#v", got.Checkpoint.ChannelValues["a"], want)
	}
	if !reflect.DeepEqual(map[string]any(got.Metadata), map[string]any(md)) {
		t.Errorf("metadata read back as %#v, want %#v", got.Metadata, md)
	}
	if len(got.PendingWrites) != 1 || got.PendingWrites[0].Value != odd {
		t.Errorf("pending writes read back as %#v", got.PendingWrites)
	}
	for name, bad := range map[string]spec.Metadata{"key": {"\xff": 1}, "value": {"s": "\xfe"}, "nested": {"m": map[string]any{"\xff": 1}}} {
		cp, _, nv, _ := Fixture("m", "")
		_, err := s.Put(ctx, spec.Config{ThreadID: "odd"}, cp, bad, nv)
		if !errors.Is(err, spec.ErrUnsupportedValue) {
			t.Errorf("metadata with invalid UTF-8 in a %s: error = %v, want ErrUnsupportedValue", name, err)
		}
	}
	// Filters may hold NULs: they match exactly (after VALUE-7's removal
	// from top-level metadata strings), and never fail in the backend.
	for _, f := range []struct {
		filter spec.Metadata
		want   int
	}{
		{spec.Metadata{"k\x00ey": "v"}, 1},
		{spec.Metadata{"nested": map[string]any{"s": "a\x00b"}}, 1},
		{spec.Metadata{"x": "\x00"}, 0},
	} {
		n := 0
		for _, err := range s.List(ctx, spec.ListOptions{ThreadID: "odd", Filter: f.filter}) {
			if err != nil {
				t.Fatalf("list filter %q: %v", f.filter, err)
			}
			n++
		}
		if n != f.want {
			t.Errorf("filter %q matched %d checkpoints, want %d", f.filter, n, f.want)
		}
	}
}

// DeadlineCalls runs every method of s, optional capabilities included,
// under a context with a deadline far in the future, and fails the test on
// any error: request contexts carry deadlines, and a backend command that
// rejects the time limit its driver derives from one (FerretDB's distinct
// and maxTimeMS) must not surface.
func DeadlineCalls(t *testing.T, s spec.Saver, setup func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, id := range []string{"1", "2", "3"} {
		if err := Put(ctx, s, "d", "", id, "run-"+id, true); err != nil {
			t.Fatalf("put under a deadline: %v", err)
		}
		if err := Put(ctx, s, "d", "sub:1", id, "", true); err != nil {
			t.Fatalf("put under a deadline: %v", err)
		}
	}
	if setup != nil {
		if err := setup(ctx); err != nil {
			t.Errorf("setup under a deadline: %v", err)
		}
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "d"}); err != nil {
		t.Errorf("get latest under a deadline: %v", err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "d", CheckpointID: "2"}); err != nil {
		t.Errorf("get by ID under a deadline: %v", err)
	}
	for _, o := range []spec.ListOptions{{ThreadID: "d"}, {ThreadID: "d", AllNamespaces: true, Limit: 2}, {Filter: spec.Metadata{"id": "1"}}} {
		for _, err := range s.List(ctx, o) {
			if err != nil {
				if errors.Is(err, errors.ErrUnsupported) && o.ThreadID == "" {
					break
				}
				t.Errorf("list %+v under a deadline: %v", o, err)
				break
			}
		}
	}
	if c, ok := s.(spec.ThreadCopier); ok {
		if err := c.CopyThread(ctx, "d", "d2"); err != nil {
			t.Errorf("copy thread under a deadline: %v", err)
		}
	}
	if r, ok := s.(spec.RunDeleter); ok {
		if err := r.DeleteForRuns(ctx, []string{"run-1"}); err != nil {
			t.Errorf("delete for runs under a deadline: %v", err)
		}
	}
	if p, ok := s.(spec.Pruner); ok {
		if err := p.Prune(ctx, []string{"d"}, spec.KeepLatest); err != nil {
			t.Errorf("prune (keep latest) under a deadline: %v", err)
		}
		if snap, err := Snapshot(ctx, s, "d"); err != nil || len(snap) != 2 {
			t.Errorf("after prune under a deadline: %v (%v), want the latest of 2 namespaces", keys(snap), err)
		}
		if err := p.Prune(ctx, []string{"d2"}, spec.DeleteAll); err != nil {
			t.Errorf("prune (delete all) under a deadline: %v", err)
		}
	}
	if err := s.DeleteThread(ctx, "d"); err != nil {
		t.Errorf("delete thread under a deadline: %v", err)
	}
	if snap, err := Snapshot(ctx, s, "d"); err != nil || len(snap) != 0 {
		t.Errorf("after delete thread under a deadline: %v (%v)", keys(snap), err)
	}
}
