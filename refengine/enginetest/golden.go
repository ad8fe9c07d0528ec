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

// The golden traces in testdata/ record the saver traffic of the
// deterministic scenarios, run on the in-memory adapter with
// trace.SequentialIDs and sequential versions; those in
// testdata/langgraphpy/ record LangGraph Python's traffic on the scenarios
// written for it (see golden_lgpy.go), and those in testdata/langgraphjs/
// LangGraph.js's (see golden_lgjs.go). They are embedded here, in a
// package only tests import, so that the conformance suite can replay them
// against any adapter (see trace.Replay) without every binary that imports
// refengine carrying them; TestGoldenTraces,
// TestLangGraphPythonGoldenTraces and TestLangGraphJSGoldenTraces keep
// them current (go test ./refengine/enginetest -run
// 'TestGoldenTraces|TestLangGraph' -update).
//
//go:embed testdata/*.json
var goldenFS embed.FS

// GoldenTrace is one embedded golden trace.
type GoldenTrace struct {
	// Name is the scenario's name, prefixed with LangGraphPythonPrefix or
	// LangGraphJSPrefix for a trace recorded from LangGraph Python or
	// LangGraph.js.
	Name string
	// Calls are the recorded saver calls, in order.
	Calls []trace.Call
	// Notes name the behaviours of the trace that only its runtime has,
	// each starting with the runtime's name ("LangGraph.js: ..."): where a
	// LangGraph.js trace departs from LangGraph Python's traffic on the
	// same scenario (see refengine's package docs).
	Notes []string
}

// GoldenTraces returns the golden traces the conformance suite replays,
// sorted by name: LangGraph Python's traffic for every scenario written
// for it, LangGraph.js's for the scenarios written only for LangGraph.js,
// and refengine's for the deterministic scenarios that have neither.
func GoldenTraces() ([]GoldenTrace, error) {
	py, err := langGraphPythonTraces()
	if err != nil {
		return nil, err
	}
	js, err := LangGraphJSGoldenTraces()
	if err != nil {
		return nil, err
	}
	ref, err := RefengineGoldenTraces()
	if err != nil {
		return nil, err
	}
	covered := map[string]bool{}
	out := py
	for _, t := range py {
		covered[strings.TrimPrefix(t.Name, LangGraphPythonPrefix)] = true
	}
	for _, t := range js {
		if name := strings.TrimPrefix(t.Name, LangGraphJSPrefix); !covered[name] {
			covered[name] = true
			out = append(out, t)
		}
	}
	for _, t := range ref {
		if !covered[t.Name] {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b GoldenTrace) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// RefengineGoldenTraces returns the golden traces recorded from refengine
// (testdata/*.json), sorted by name.
func RefengineGoldenTraces() ([]GoldenTrace, error) {
	names, err := fs.Glob(goldenFS, "testdata/*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]GoldenTrace, 0, len(names))
	for _, n := range names {
		data, err := goldenFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		calls, err := trace.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("golden trace %s: %w", n, err)
		}
		out = append(out, GoldenTrace{Name: strings.TrimSuffix(path.Base(n), ".json"), Calls: calls})
	}
	return out, nil
}
