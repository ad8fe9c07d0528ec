package repro

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/mutants"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// mutantOpener opens the conformance mutant name over a fresh memory saver.
func mutantOpener(t *testing.T, name string) Opener {
	t.Helper()
	m, ok := mutants.Lookup(name)
	if !ok {
		t.Fatalf("no mutant %q", name)
	}
	return func(context.Context) (spec.Saver, func(), error) { return m.Build(), nil, nil }
}

// deltaSequence records on s a chain a <- b <- c of one thread: a holds a
// snapshot of delta channel "m" and two tasks' writes to it (stored in the
// reverse of their task order), b one write, c none; delta history reads
// of b and c among unrelated calls.
func deltaSequence(t *testing.T, s spec.Saver) []trace.Call {
	t.Helper()
	ctx := context.Background()
	rec := trace.Record(s)
	put := func(i int, parent string, vals map[string]any) spec.Config {
		cp := spec.Checkpoint{V: 4, ID: cpID(i), TS: "2026-01-01T00:00:00Z", ChannelValues: vals, ChannelVersions: spec.Versions{}}
		nv := spec.Versions{}
		if len(vals) > 0 {
			cp.ChannelVersions["m"], nv["m"] = "1", "1"
		}
		out, err := rec.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: parent}, cp, spec.Metadata{"step": int64(i)}, nv)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	write := func(cfg spec.Config, task string) {
		if err := rec.PutWrites(ctx, cfg, []spec.Write{{Channel: "m", Value: "by " + task}}, task, "p"); err != nil {
			t.Fatal(err)
		}
	}
	read := func(cfg spec.Config) {
		if _, err := rec.DeltaHistory(ctx, cfg, []string{"m"}); err != nil {
			t.Fatal(err)
		}
	}
	a := put(1, "", map[string]any{"m": spec.DeltaSnapshot{Value: []any{"seed"}}})
	write(a, "task-2")
	write(a, "task-1")
	b := put(2, a.CheckpointID, map[string]any{})
	if _, err := rec.GetTuple(ctx, spec.Config{ThreadID: "t"}); err != nil {
		t.Fatal(err)
	}
	read(b)
	write(b, "task-3")
	if err := rec.DeleteThread(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	c := put(3, b.CheckpointID, map[string]any{})
	for range rec.List(ctx, spec.ListOptions{ThreadID: "t"}) {
	}
	read(c)
	return rec.Calls()
}

// deltaRepro shrinks deltaSequence on the mutant name, checking that it
// ends in a delta history read and that its JSON trace replays.
func deltaRepro(t *testing.T, name string, want []string) *Repro {
	t.Helper()
	ctx := context.Background()
	open := mutantOpener(t, name)
	s, _, _ := open(ctx)
	calls := deltaSequence(t, s)
	r, err := Minimize(ctx, open, Reference, calls, 0)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := make([]string, len(r.Calls))
	for i, c := range r.Calls {
		got[i] = c.Method
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: shrunk %d calls to %v, want %v", name, len(calls), got, want)
	}
	d := r.Divergence
	if d.Index != len(want)-1 || d.Kind() != trace.MethodDeltaHistory+" result" || !strings.Contains(d.Detail, "history of \"m\"") {
		t.Fatalf("%s: divergence at %d, %s: %s", name, d.Index, d.Kind(), d.Detail)
	}
	data, err := r.Trace()
	if err != nil {
		t.Fatal(err)
	}
	re, err := CheckTrace(ctx, open, data)
	if err != nil || re.Index != d.Index || re.Method != trace.MethodDeltaHistory {
		t.Fatalf("%s: CheckTrace on the mutant: %v, %v", name, re, err)
	}
	if _, err := CheckTrace(ctx, Reference, data); !errors.Is(err, ErrNotReproduced) {
		t.Fatalf("%s: CheckTrace on the reference: %v, want ErrNotReproduced", name, err)
	}
	return r
}

var (
	put, putWrites, history = trace.MethodPut, trace.MethodPutWrites, trace.MethodDeltaHistory
	// Two ancestors with one write each show their order.
	newestFirstCalls = []string{put, putWrites, put, putWrites, put, history}
	// Two writes of one ancestor show theirs.
	asStoredCalls = []string{put, putWrites, putWrites, put, history}
	// A seed needs only its ancestor.
	stopsEarlyCalls = []string{put, put, history}
)

func TestMinimizeShrinksADeltaHistory(t *testing.T) {
	deltaRepro(t, "delta-writes-newest-first", newestFirstCalls)
	deltaRepro(t, "delta-writes-as-stored", asStoredCalls)
	deltaRepro(t, "delta-walk-stops-early", stopsEarlyCalls)
}

// toyDeltaSavers are LangGraph Python's InMemorySaver and broken subclasses
// whose delta histories list writes newest first or lose the seed.
// managed and managed_async give an InMemorySaver from a context manager
// that closes it on exit (as a database saver's connection closes), so a
// snippet must keep the context manager referenced while it runs.
const toyDeltaSavers = `from contextlib import asynccontextmanager, contextmanager

from langgraph.checkpoint.memory import InMemorySaver


def _reversed(histories):
    return {ch: {**h, "writes": list(reversed(h["writes"]))} for ch, h in histories.items()}


def _seedless(histories):
    return {ch: {"writes": h["writes"]} for ch, h in histories.items()}


class NewestFirstSaver(InMemorySaver):
    def get_delta_channel_history(self, *, config, channels):
        return _reversed(super().get_delta_channel_history(config=config, channels=channels))


class SeedlessSaver(InMemorySaver):
    def get_delta_channel_history(self, *, config, channels):
        return _seedless(super().get_delta_channel_history(config=config, channels=channels))


def correct():
    return InMemorySaver()


async def correct_async():
    return InMemorySaver()


class ClosableSaver(InMemorySaver):
    closed = False

    def put(self, *args, **kwargs):
        assert not self.closed, "put on a closed saver"
        return super().put(*args, **kwargs)

    def get_delta_channel_history(self, *, config, channels):
        assert not self.closed, "read of a closed saver"
        return super().get_delta_channel_history(config=config, channels=channels)


@contextmanager
def managed():
    saver = ClosableSaver()
    try:
        yield saver
    finally:
        saver.closed = True


@asynccontextmanager
async def managed_async():
    saver = ClosableSaver()
    try:
        yield saver
    finally:
        saver.closed = True
`

// run runs a snippet and returns its output and exit status.
func run(t *testing.T, cmd *exec.Cmd) (string, int) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func TestPythonSnippetShowsADeltaHistoryDifference(t *testing.T) {
	py := pythonBin(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toydelta.py"), []byte(toyDeltaSavers), 0o644); err != nil {
		t.Fatal(err)
	}
	newest := deltaRepro(t, "delta-writes-newest-first", newestFirstCalls)
	newest.Rule = "DELTA-3"
	stops := deltaRepro(t, "delta-walk-stops-early", stopsEarlyCalls)
	stops.Rule = "DELTA-1"
	writes := "expected: [('task-2', 'm', 'by task-2'), ('task-3', 'm', 'by task-3')]\ngot:      "
	seed := "expected: _DeltaSnapshot(value=['seed'])\ngot:      "
	for _, tc := range []struct {
		r       *Repro
		factory string
		async   bool
		status  int
		says    string
	}{
		{newest, "toydelta:correct", false, 0, writes + "[('task-2', 'm', 'by task-2'), ('task-3', 'm', 'by task-3')]\n"},
		{newest, "toydelta:correct_async", true, 0, writes + "[('task-2', 'm', 'by task-2'), ('task-3', 'm', 'by task-3')]\n"},
		{newest, "toydelta:managed", false, 0, writes + "[('task-2', 'm', 'by task-2'), ('task-3', 'm', 'by task-3')]\n"},
		{newest, "toydelta:managed_async", true, 0, writes + "[('task-2', 'm', 'by task-2'), ('task-3', 'm', 'by task-3')]\n"},
		{newest, "toydelta:NewestFirstSaver", false, 1, writes + "[('task-3', 'm', 'by task-3'), ('task-2', 'm', 'by task-2')]\n"},
		{stops, "toydelta:correct", false, 0, seed + "_DeltaSnapshot(value=['seed'])\n"},
		{stops, "toydelta:correct_async", true, 0, seed + "_DeltaSnapshot(value=['seed'])\n"},
		{stops, "toydelta:SeedlessSaver", false, 1, seed + "'(no seed)'\n"},
	} {
		src := tc.r.Python(PythonOptions{Factory: tc.factory, Async: tc.async, Title: tc.factory})
		// Six calls, the async API's opening lines and a snapshot import.
		if lines := strings.Count(src, "\n"); lines > 35 {
			t.Errorf("%s %s: the snippet has %d lines, want at most 35:\n%s", tc.r.Rule, tc.factory, lines, src)
		}
		out, status := runPython(t, py, dir, src)
		if status != tc.status || !strings.Contains(out, tc.says) {
			t.Errorf("%s %s (async %v): status %d, output:\n%s\nwant status %d and %q\nsnippet:\n%s", tc.r.Rule, tc.factory, tc.async, status, out, tc.status, tc.says, src)
		}
	}
}

// toyJSDeltaSavers is LangGraph.js's MemorySaver with a delta history that
// lists writes newest first.
const toyJSDeltaSavers = `import { MemorySaver } from "@langchain/langgraph-checkpoint";

export class NewestFirstSaver extends MemorySaver {
  async getDeltaChannelHistory(options) {
    const hs = await super.getDeltaChannelHistory(options);
    for (const h of Object.values(hs)) h.writes = [...h.writes].reverse();
    return hs;
  }
}
`

func TestJSSnippetShowsADeltaHistoryDifference(t *testing.T) {
	node, dir := jsDir(t)
	if err := os.WriteFile(filepath.Join(dir, "toydelta.mjs"), []byte(toyJSDeltaSavers), 0o644); err != nil {
		t.Fatal(err)
	}
	jsSavers["toy-newest-first"] = jsSaver{imports: `import { NewestFirstSaver } from "./toydelta.mjs";`, open: "const saver = new NewestFirstSaver();"}
	defer delete(jsSavers, "toy-newest-first")
	newest := deltaRepro(t, "delta-writes-newest-first", newestFirstCalls)
	stops := deltaRepro(t, "delta-walk-stops-early", stopsEarlyCalls)
	writes := "expected: [ [ 'task-2', 'm', 'by task-2' ], [ 'task-3', 'm', 'by task-3' ] ]\ngot:      [ [ 'task-"
	seed := "expected: DeltaSnapshot { lg_name: 'DeltaSnapshot', value: [ 'seed' ] }\ngot:      DeltaSnapshot { lg_name: 'DeltaSnapshot', value: [ 'seed' ] }\n"
	for _, tc := range []struct {
		r      *Repro
		kind   string
		status int
		says   string
	}{
		{newest, "memory", 0, writes + "2', 'm', 'by task-2' ], [ 'task-3', 'm', 'by task-3' ] ]\n"},
		{newest, "toy-newest-first", 1, writes + "3', 'm', 'by task-3' ], [ 'task-2', 'm', 'by task-2' ] ]\n"},
		{stops, "memory", 0, seed},
	} {
		src, out, status := runJSSnippet(t, node, dir, tc.r, tc.kind)
		if status != tc.status || !strings.Contains(out, tc.says) {
			t.Errorf("%s: status %d, output:\n%s\nwant status %d and %q\nsnippet:\n%s", tc.kind, status, out, tc.status, tc.says, src)
		}
	}
}
