package repro

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// countingVersions is a broken saver: it stores values once per (channel,
// version), as the memory adapter does, but mints versions as a plain
// counter (LangGraph's BaseCheckpointSaver default), so two forks of one
// checkpoint mint the same version and the second overwrites the first's
// value (VERSION-2).
type countingVersions struct{ *memory.Saver }

func (countingVersions) NextVersion(cur spec.Version) spec.Version {
	n, _ := strconv.Atoi(string(cur))
	return spec.Version(strconv.Itoa(n + 1))
}

func openCounting(context.Context) (spec.Saver, func(), error) {
	return countingVersions{memory.New()}, nil, nil
}

// forkSequence records VERSION-2's scenario on the broken saver, with its
// NextVersion calls: a base checkpoint, two forks of it each minting a
// version from the base's, and reads of both forks and the base.
func forkSequence(t *testing.T) []trace.Call {
	t.Helper()
	ctx := context.Background()
	rec := trace.Record(countingVersions{memory.New()}, trace.WithNextVersion())
	put := func(parent string, id int, v any, ver spec.Version) {
		cp := spec.Checkpoint{V: 4, ID: cpID(id), TS: "2026-01-01T00:00:00Z", ChannelValues: map[string]any{"a": v},
			ChannelVersions: spec.Versions{"a": ver}}
		if _, err := rec.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: parent}, cp, spec.Metadata{}, spec.Versions{"a": ver}); err != nil {
			t.Fatal(err)
		}
	}
	v1 := rec.NextVersion("")
	put("", 1, "base", v1)
	va, vb := rec.NextVersion(v1), rec.NextVersion(v1)
	put(cpID(1), 2, "fork A", va)
	put(cpID(1), 3, "fork B", vb)
	for _, id := range []int{2, 3, 1} {
		if _, err := rec.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: cpID(id)}); err != nil {
			t.Fatal(err)
		}
	}
	return rec.Calls()
}

// A replay mints versions on the saver under test: replaying the recorded
// versions ("1", "2", "2") would collide on the reference too and show
// nothing.
func TestMinimizeMintsVersionsOnTheSaver(t *testing.T) {
	ctx := context.Background()
	calls := forkSequence(t)
	if n := countMethod(calls, trace.MethodNextVersion); n != 3 {
		t.Fatalf("recorded %d NextVersion calls, want 3", n)
	}
	r, err := Minimize(ctx, openCounting, Reference, calls, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Divergence
	if d.Kind() != "GetTuple result" || d.Got.Tuple == nil || d.Got.Tuple.Checkpoint.ChannelValues["a"] != "fork B" {
		t.Fatalf("divergence %+v: want fork A's GetTuple reading fork B's value", d)
	}
	// Both forks' versions must be minted by the saver from one current
	// version: without them the forks cannot collide.
	if n := countMethod(r.Calls, trace.MethodNextVersion); n < 2 {
		t.Fatalf("shrunk to %d calls with %d NextVersion: %+v", len(r.Calls), n, r.Calls)
	}
	for _, c := range r.Calls {
		if c.Method == trace.MethodNextVersion && spec.CompareVersions(c.Version, c.Current) != 1 {
			t.Errorf("the reference minted %q after %q", c.Version, c.Current)
		}
	}
	data, err := r.Trace()
	if err != nil {
		t.Fatal(err)
	}
	re, err := CheckTrace(ctx, openCounting, data)
	if err != nil || re.Method != trace.MethodGetTuple {
		t.Fatalf("CheckTrace on the broken saver: %v, %v", re, err)
	}
	// A saver minting versions of another form, distinct across forks,
	// agrees: versions are judged by what they do, not by their spelling.
	if _, err := CheckTrace(ctx, openLettered, data); !errors.Is(err, ErrNotReproduced) {
		t.Fatalf("CheckTrace on a saver with lettered versions: %v, want ErrNotReproduced", err)
	}
	if _, err := CheckTrace(ctx, Reference, data); !errors.Is(err, ErrNotReproduced) {
		t.Fatalf("CheckTrace on the reference: %v, want ErrNotReproduced", err)
	}
}

// lettered mints versions in a layout of its own ("<n>.<letters>"), each
// distinct: a correct saver whose versions never equal the reference's.
type lettered struct {
	*memory.Saver
	minted *int
}

func (l lettered) NextVersion(cur spec.Version) spec.Version {
	*l.minted++
	n, _, _ := strings.Cut(string(cur), ".")
	i, _ := strconv.Atoi(n)
	return spec.Version(strconv.Itoa(i+1) + "." + strings.Repeat("x", *l.minted))
}

func openLettered(context.Context) (spec.Saver, func(), error) {
	return lettered{memory.New(), new(int)}, nil, nil
}

func TestReplayChecksMintedVersionsAreGreater(t *testing.T) {
	ctx := context.Background()
	calls := []trace.Call{{Method: trace.MethodNextVersion, Current: "5", Version: "6"}}
	err := trace.Replay(ctx, countingVersions{memory.New()}, calls)
	if err != nil {
		t.Fatalf("counting from 5: %v", err)
	}
	var re *trace.ReplayError
	err = trace.Replay(ctx, stuckVersions{memory.New()}, calls)
	if !errors.As(err, &re) || re.Method != trace.MethodNextVersion {
		t.Fatalf("a saver minting the current version again: %v, want a NextVersion difference", err)
	}
}

// stuckVersions mints the current version again.
type stuckVersions struct{ *memory.Saver }

func (stuckVersions) NextVersion(cur spec.Version) spec.Version { return cur }

func countMethod(calls []trace.Call, m string) int {
	n := 0
	for _, c := range calls {
		if c.Method == m {
			n++
		}
	}
	return n
}

// toyVersionSavers are LangGraph's InMemorySaver (random-fraction
// versions) and a subclass minting BaseCheckpointSaver's plain counter,
// which makes InMemorySaver's per-version blobs collide across forks.
const toyVersionSavers = `from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver


class CountingSaver(InMemorySaver):
    def get_next_version(self, current, channel):
        return BaseCheckpointSaver.get_next_version(self, current, channel)


def broken():
    return CountingSaver()


def correct():
    return InMemorySaver()
`

// refVersion matches a version in the reference's layout (spec.NextVersion),
// which a snippet must not put.
var refVersion = regexp.MustCompile(`[0-9]{32}\.[0-9]{16}`)

func TestVersionSnippetsMintOnTheSaver(t *testing.T) {
	r, err := Minimize(context.Background(), openCounting, Reference, forkSequence(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Rule = "VERSION-2"
	py := pythonBin(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toyversions.py"), []byte(toyVersionSavers), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		factory string
		async   bool
		status  int
	}{
		{"toyversions:broken", false, 1},
		{"toyversions:broken", true, 1},
		{"toyversions:correct", false, 0},
	} {
		src := r.Python(PythonOptions{Factory: tc.factory, Async: tc.async, Title: tc.factory})
		if !strings.Contains(src, "v1 = saver.get_next_version(") || refVersion.MatchString(src) {
			t.Errorf("%s: the snippet does not mint its versions on the saver:\n%s", tc.factory, src)
		}
		out, status := runPython(t, py, dir, src)
		if status != tc.status || !strings.Contains(out, "expected: {'a': 'fork A'}") {
			t.Errorf("%s (async %v): status %d, output:\n%s\nwant status %d\nsnippet:\n%s", tc.factory, tc.async, status, out, tc.status, src)
		}
	}
	// LangGraph.js's MemorySaver keeps whole checkpoints, so its counter
	// versions never collide: the snippet runs and agrees.
	node, jdir := jsDir(t)
	src, out, status := runJSSnippet(t, node, jdir, r, "memory")
	if status != 0 || !strings.Contains(src, "const v1 = saver.getNextVersion(") || !strings.Contains(out, "got:      { a: 'fork A' }") {
		t.Errorf("memory: status %d, output:\n%s\nsnippet:\n%s", status, out, src)
	}
}
