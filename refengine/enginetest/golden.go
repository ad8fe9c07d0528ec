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
// testdata/langgraphjs/ record LangGraph.js's traffic on the scenarios
// written for it (see golden_lgjs.go). They are embedded here, in a
// package only tests import, so that the conformance suite can replay them
// against any adapter (see trace.Replay) without every binary that imports
// refengine carrying them; TestGoldenTraces and TestLangGraphJSGoldenTraces
// keep them current (go test ./refengine/enginetest -run
// 'TestGoldenTraces|TestLangGraphJSGoldenTraces' -update).
//
//go:embed testdata/*.json
var goldenFS embed.FS

// GoldenTrace is one embedded golden trace.
type GoldenTrace struct {
	// Name is the scenario's name, prefixed with LangGraphJSPrefix for a
	// trace recorded from LangGraph.js.
	Name string
	// Calls are the recorded saver calls, in order.
	Calls []trace.Call
}

// GoldenTraces returns the golden traces the conformance suite replays,
// sorted by name: LangGraph.js's traffic for every scenario written for
// LangGraph.js, and refengine's for the deterministic scenarios that have
// no LangGraph.js counterpart.
func GoldenTraces() ([]GoldenTrace, error) {
	lg, err := langGraphJSTraces()
	if err != nil {
		return nil, err
	}
	ref, err := RefengineGoldenTraces()
	if err != nil {
		return nil, err
	}
	covered := map[string]bool{}
	for _, t := range lg {
		covered[strings.TrimPrefix(t.Name, LangGraphJSPrefix)] = true
	}
	out := lg
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
