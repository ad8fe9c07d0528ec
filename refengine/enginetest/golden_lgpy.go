package enginetest

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

// Golden traces from LangGraph Python, the reference runtime.
//
// testdata/langgraphpy/<scenario>.json holds, for every scenario of
// bridge/python/scenarios, the saver traffic LangGraph Python produced on
// its own InMemorySaver (recorded by
// bridge/python/checkpointkit_bridge/recorder.py), followed by a listing of
// every thread the scenario used, in the committed form of
// [NormalizeLangGraphPython]. TestLangGraphPythonGoldenTraces regenerates
// them (go test ./refengine/enginetest -run TestLangGraphPythonGoldenTraces
// -update, which needs the LangGraph Python venv, see refengine's package
// docs) and fails when they are stale. [GoldenTraces] concretizes them
// like LangGraph.js's ([Concretize]).
//
//go:embed testdata/langgraphpy/*.json
var lgpyFS embed.FS

// LangGraphPythonPrefix starts the name of a golden trace recorded from
// LangGraph Python.
const LangGraphPythonPrefix = "langgraphpy/"

// LangGraphPythonVersion is the LangGraph Python release (package
// langgraph, with langgraph-checkpoint 4.3.2) whose traffic the
// langgraphpy traces hold and that TestAgainstLangGraphPython checks
// refengine against.
const LangGraphPythonVersion = "1.2.24"

// langGraphPythonTraces returns the embedded LangGraph Python traces,
// concrete, sorted by name.
func langGraphPythonTraces() ([]GoldenTrace, error) {
	return embeddedTraces(lgpyFS, "testdata/langgraphpy/*.json", LangGraphPythonPrefix, func(string) []string { return nil })
}

// embeddedTraces reads the canonical traces matching glob in fsys and
// concretizes them, naming each prefix + file name; notes gives a trace's
// notes by scenario name.
func embeddedTraces(fsys fs.FS, glob, prefix string, notes func(string) []string) ([]GoldenTrace, error) {
	names, err := fs.Glob(fsys, glob)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]GoldenTrace, 0, len(names))
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		canon, err := trace.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("golden trace %s: %w", n, err)
		}
		calls, err := Concretize(canon)
		if err != nil {
			return nil, fmt.Errorf("golden trace %s: %w", n, err)
		}
		name := strings.TrimSuffix(path.Base(n), ".json")
		out = append(out, GoldenTrace{Name: prefix + name, Calls: calls, Notes: notes(name)})
	}
	return out, nil
}

// NormalizeLangGraphPython turns a trace recorded from LangGraph Python
// into the committed form of testdata/langgraphpy: trace.Canonical, then
// what the contract says a saver returns where LangGraph's InMemorySaver
// does something else. Those are the steps of [NormalizeLangGraphJS],
// which apply to both runtimes' in-memory savers: a listing of several
// namespaces comes back grouped by namespace and is sorted into the
// contract's order; pending writes are ordered by canonical task ID, as
// concurrent tasks insert them in any order. (Its other steps change
// nothing in a Python trace: LangGraph Python stores only versioned
// channels, and the recorder gives a Send the form it was put in.) Values
// are LangGraph Python's: interrupt IDs, branch values, and a failed
// task's __error__ write as the repr of the exception, which a saver
// stores as given.
func NormalizeLangGraphPython(calls []trace.Call) ([]trace.Call, error) {
	return NormalizeLangGraphJS(calls)
}
