package enginetest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

// lgpyGoldenDir holds the canonical LangGraph Python traces.
var lgpyGoldenDir = filepath.Join("testdata", "langgraphpy")

// pythonGolden returns every Python scenario's trace (its calls, then the
// listing of its threads) in the committed form.
func pythonGolden(t *testing.T) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	for name, r := range recordPython(t) {
		calls, err := unmarshalCalls(r.Calls)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		stored, err := unmarshalCalls(r.Stored)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if lgpyUnordered[name] {
			// Concurrent loops and background Puts: a stable order (by
			// namespace) keeps the canonical names from run to run.
			calls = byNamespace(t, calls)
		}
		canon, err := enginetest.NormalizeLangGraphPython(append(calls, stored...))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := trace.Marshal(canon)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = data
	}
	return got
}

// TestLangGraphPythonGoldenTraces runs the LangGraph Python scenarios and
// compares their normalised canonical traces with testdata/langgraphpy: it
// fails when the committed traces are stale (a scenario added, removed or
// changed, or LangGraph Python upgraded). With -update it rewrites them.
// Every trace must replay on the memory adapter.
func TestLangGraphPythonGoldenTraces(t *testing.T) {
	got := pythonGolden(t)
	if *update {
		old, _ := filepath.Glob(filepath.Join(lgpyGoldenDir, "*.json"))
		for _, f := range old {
			if _, ok := got[strings.TrimSuffix(filepath.Base(f), ".json")]; !ok {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := os.MkdirAll(lgpyGoldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range got {
			if err := os.WriteFile(filepath.Join(lgpyGoldenDir, name+".json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(lgpyGoldenDir, "*.json"))
	var committed []string
	for _, f := range files {
		committed = append(committed, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	for name := range got {
		if !slices.Contains(committed, name) {
			t.Errorf("scenario %s has no committed LangGraph Python trace (run with -update)", name)
		}
	}
	for _, name := range committed {
		want, err := os.ReadFile(filepath.Join(lgpyGoldenDir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s.json: LangGraph Python has no scenario %s any more (run with -update)", name, name)
		case !bytes.Equal(g, want) && !sameCalls(t, g, want):
			t.Errorf("%s.json is stale: LangGraph Python's trace differs (run with -update after checking the change):\n%s", name, firstDiff(want, g))
		case !bytes.Equal(g, want):
			t.Logf("%s: LangGraph Python issued the same calls in another order (concurrent tasks)", name)
		}
	}
	for name, data := range got {
		canon, err := trace.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		calls, err := enginetest.Concretize(canon)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := trace.Replay(context.Background(), memory.New(), calls); err != nil {
			t.Errorf("%s: LangGraph Python's trace does not replay on the memory adapter: %v", name, err)
		}
	}
}
