package refengine

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/checkpointkit/checkpointkit/spec"
)

func TestExitDeltaTaskIDs(t *testing.T) {
	const tid = "6f3ecc87-dd35-0f18-a22b-f3df53530eb6"
	for _, c := range []struct{ got, want string }{
		{exitDeltaTaskID(2, tid), "00000002-dd35-0f18-a22b-f3df53530eb6"},
		{exitDeltaTaskID(2, spec.NullTaskID), "00000002-0000-0000-0000-000000000000"},
		// Never the null task ID, which readers take for the anchor's own.
		{exitDeltaTaskID(0, spec.NullTaskID), "00000000-0000-0000-0000-000000000001"},
		{exitDeltaLateTaskID(7, tid), "ffffffff-0000-0007-a22b-f3df53530eb6"},
		{exitDeltaLateTaskID(70000, tid), "ffffffff-0001-1170-a22b-f3df53530eb6"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func seenCheckpoint(seen map[string]spec.Versions) *spec.Checkpoint {
	cp := &spec.Checkpoint{VersionsSeen: map[string]spec.Versions{}}
	for n, vs := range seen {
		cp.VersionsSeen[n] = maps.Clone(vs)
	}
	return cp
}

func TestMarkBumpsSeenFromNoVersion(t *testing.T) {
	g := &Graph{nodes: []*node{{name: "sub", triggers: []string{"n"}}, {name: "other", triggers: []string{"x"}}}}
	read := map[string]spec.Versions{"__input__": {}, "a": {"x": "1"}, "b": {"n": "3"}}
	cp := seenCheckpoint(read)
	// Every entry without the channel takes the new version, and so does a
	// node it triggers that had no entry; b, which read a version, keeps it.
	g.markBumpsSeen(cp, []versionBump{{channel: "n", new: "5"}})
	want := map[string]spec.Versions{
		"__input__": {"n": "5"}, "a": {"x": "1", "n": "5"}, "b": {"n": "3"}, "sub": {"n": "5"},
		snapshotBumps: {"__input__|n": "5", "a|n": "5", "sub|n": "5"},
	}
	if d := cmp.Diff(want, cp.VersionsSeen); d != "" {
		t.Fatalf("bump from no version (-want +got):\n%s", d)
	}
	read["sub"] = spec.Versions{}
	if d := cmp.Diff(read, versionsSeenWithoutBumps(cp.VersionsSeen)); d != "" {
		t.Errorf("versions seen without bumps (-want +got):\n%s", d)
	}
}

func TestMarkBumpsSeenFromARead(t *testing.T) {
	g := &Graph{}
	read := map[string]spec.Versions{"a": {"m": "3", "x": "1"}, "b": {"m": "2"}}
	cp := seenCheckpoint(read)
	g.markBumpsSeen(cp, []versionBump{{channel: "m", old: "3", new: "4"}})
	// A second bump moves the entry on and keeps the first read.
	g.markBumpsSeen(cp, []versionBump{{channel: "m", old: "4", new: "5"}})
	want := map[string]spec.Versions{
		"a": {"m": "5", "x": "1"}, "b": {"m": "2"},
		snapshotBumps: {"a|m": "5", "a:m": "3"},
	}
	if d := cmp.Diff(want, cp.VersionsSeen); d != "" {
		t.Fatalf("bumps (-want +got):\n%s", d)
	}
	if d := cmp.Diff(read, versionsSeenWithoutBumps(cp.VersionsSeen)); d != "" {
		t.Errorf("versions seen without bumps (-want +got):\n%s", d)
	}
	// A real read of the new version after the bump is kept as read.
	cp.VersionsSeen["a"]["m"] = "6"
	if got := versionsSeenWithoutBumps(cp.VersionsSeen)["a"]["m"]; got != "6" {
		t.Errorf("a read m at %s, want 6", got)
	}
}
