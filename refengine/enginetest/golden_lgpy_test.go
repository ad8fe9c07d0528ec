package enginetest_test

import (
	"path/filepath"
	"testing"

	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
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
		got[name] = committedForm(t, name, append(calls, stored...), enginetest.NormalizeLangGraphPython)
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
	checkGolden(t, "LangGraph Python", lgpyGoldenDir, got)
}
