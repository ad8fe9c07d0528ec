package enginetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

// lgjsGoldenDir holds the canonical LangGraph.js traces.
var lgjsGoldenDir = filepath.Join("testdata", "langgraphjs")

// lookNode returns the node binary, skipping the test when LangGraph.js or
// node is missing (failing instead when CI is set).
func lookNode(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(bridgeJS, "node_modules", "@langchain", "langgraph")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but LangGraph.js is not installed (%v): run npm ci in bridge/js", err)
		}
		t.Skipf("LangGraph.js is not installed (%v); run npm ci in bridge/js", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but node is not on PATH")
		}
		t.Skip("node is not on PATH")
	}
	return node
}

// recordLangGraphJS runs every scenario of bridge/js/scenarios on
// LangGraph.js and returns each one's trace in the committed form.
func recordLangGraphJS(t *testing.T, node string) map[string][]byte {
	t.Helper()
	cmd := exec.Command(node, filepath.Join("scenarios", "golden.js"))
	cmd.Dir = bridgeJS
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node scenarios/golden.js: %v\n%s", err, stderr.Bytes())
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for name, doc := range raw {
		calls, err := trace.Unmarshal(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = committedForm(t, name, calls, enginetest.NormalizeLangGraphJS)
	}
	return got
}

// TestLangGraphJSGoldenTraces runs the LangGraph.js scenarios and compares
// their normalised canonical traces with testdata/langgraphjs: it fails
// when the committed traces are stale (a scenario added, removed or
// changed, or LangGraph.js upgraded). With -update it rewrites them. Every
// trace must then replay on the memory adapter: a read where LangGraph.js's
// saver and the contract disagree in a way NormalizeLangGraphJS does not
// handle shows up here, not in an adapter's suite.
func TestLangGraphJSGoldenTraces(t *testing.T) {
	node := lookNode(t)
	got := recordLangGraphJS(t, node)
	checkGolden(t, "LangGraph.js", lgjsGoldenDir, got)
}

// TestGoldenTracesReplay replays every golden trace the conformance suite
// replays (LangGraph Python's where a scenario exists for it, else
// LangGraph.js's, else refengine's) on a fresh memory adapter, and checks
// that every deterministic scenario has one.
func TestGoldenTracesReplay(t *testing.T) {
	traces, err := enginetest.GoldenTraces()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tr := range traces {
		names[strings.TrimPrefix(strings.TrimPrefix(tr.Name, enginetest.LangGraphJSPrefix), enginetest.LangGraphPythonPrefix)] = true
		if err := trace.Replay(context.Background(), memory.New(), tr.Calls); err != nil {
			t.Errorf("%s: %v", tr.Name, err)
		}
	}
	for _, sc := range enginetest.All() {
		if !nondeterministic[sc.Name] && !names[sc.Name] {
			t.Errorf("scenario %s has no golden trace", sc.Name)
		}
	}
}
