package enginetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
		canon, err := enginetest.NormalizeLangGraphJS(calls)
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
	if *update {
		old, _ := filepath.Glob(filepath.Join(lgjsGoldenDir, "*.json"))
		for _, f := range old {
			if _, ok := got[strings.TrimSuffix(filepath.Base(f), ".json")]; !ok {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := os.MkdirAll(lgjsGoldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range got {
			if err := os.WriteFile(filepath.Join(lgjsGoldenDir, name+".json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(lgjsGoldenDir, "*.json"))
	var committed []string
	for _, f := range files {
		committed = append(committed, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	for name := range got {
		if !slices.Contains(committed, name) {
			t.Errorf("scenario %s has no committed LangGraph.js trace (run with -update)", name)
		}
	}
	for _, name := range committed {
		want, err := os.ReadFile(filepath.Join(lgjsGoldenDir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s.json: LangGraph.js has no scenario %s any more (run with -update)", name, name)
		case !bytes.Equal(g, want) && !sameCalls(t, g, want):
			t.Errorf("%s.json is stale: LangGraph.js's trace differs (run with -update after checking the change):\n%s", name, firstDiff(want, g))
		case !bytes.Equal(g, want):
			t.Logf("%s: LangGraph.js issued the same calls in another order (concurrent tasks)", name)
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
			t.Errorf("%s: LangGraph.js's trace does not replay on the memory adapter: %v", name, err)
		}
	}
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

// sameCalls reports whether two committed-form traces hold the same calls
// in some order: LangGraph.js issues the writes of concurrent tasks in any
// order.
func sameCalls(t *testing.T, a, b []byte) bool {
	t.Helper()
	return slices.Equal(callKeys(t, a), callKeys(t, b))
}

// callKeys returns the JSON form of each call of a trace, sorted.
func callKeys(t *testing.T, data []byte) []string {
	t.Helper()
	calls, err := trace.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(calls))
	for i := range calls {
		k, err := trace.Marshal(calls[i : i+1])
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = string(k)
	}
	slices.Sort(keys)
	return keys
}
