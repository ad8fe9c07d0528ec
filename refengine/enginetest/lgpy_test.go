package enginetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// bridgePython is the directory of the Python bridge package, whose
// scenarios/ folder holds the LangGraph Python side of the comparison.
var bridgePython = filepath.Join("..", "..", "bridge", "python")

// pythonRun is what scenarios.run printed for one scenario: the
// scenario's saver calls, and the listing of every thread it used.
type pythonRun struct {
	Calls  json.RawMessage `json:"calls"`
	Stored json.RawMessage `json:"stored"`
}

var (
	pythonOnce sync.Once
	pythonOut  map[string]pythonRun
	pythonErr  string
)

// lookPython returns the interpreter that has LangGraph Python installed:
// $CHECKPOINTKIT_PYTHON, else bridge/python/.venv/bin/python. It skips the
// test when there is none (failing instead when CI is set).
func lookPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("CHECKPOINTKIT_PYTHON")
	if py == "" {
		py = filepath.Join(bridgePython, ".venv", "bin", "python")
	}
	abs, err := filepath.Abs(py)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but LangGraph Python is not installed (%v): source ci/lib/backends.bash; ck_install_lgpy", err)
		}
		t.Skipf("LangGraph Python is not installed (%v); source ci/lib/backends.bash; ck_install_lgpy", err)
	}
	return abs
}

// recordPython runs every scenario of bridge/python/scenarios once per
// test binary and returns what each one recorded.
func recordPython(t *testing.T) map[string]pythonRun {
	t.Helper()
	py := lookPython(t)
	pythonOnce.Do(func() {
		cmd := exec.Command(py, "-m", "scenarios.run")
		cmd.Dir = bridgePython
		// LangGraph iterates sets of edges: a fixed string hash seed keeps
		// the order of a task's writes from run to run.
		cmd.Env = append(os.Environ(), "PYTHONHASHSEED=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			pythonErr = "python -m scenarios.run: " + err.Error() + "\n" + stderr.String()
			return
		}
		if err := json.Unmarshal(out, &pythonOut); err != nil {
			pythonErr = err.Error()
		}
	})
	if pythonErr != "" {
		t.Fatal(pythonErr)
	}
	return pythonOut
}

// runRefengine runs the Go side of a scenario on the memory adapter and
// returns its saver calls: the run of that name in the first of onlies
// that has one, else the enginetest scenario.
func runRefengine(t *testing.T, name string, onlies ...map[string]func(context.Context, spec.Saver) error) []trace.Call {
	t.Helper()
	for _, only := range onlies {
		if run, ok := only[name]; ok {
			calls, err := recordOnly(context.Background(), run, trace.Record(memory.New()))
			if err != nil {
				t.Fatalf("Go scenario: %v", err)
			}
			return calls
		}
	}
	for _, sc := range enginetest.All() {
		if sc.Name == name {
			env := &enginetest.Env{Saver: memory.New()}
			if err := sc.Run(context.Background(), env); err != nil {
				t.Fatalf("Go scenario: %v", err)
			}
			return env.Calls
		}
	}
	t.Fatalf("no Go scenario %q", name)
	return nil
}

// TestAgainstLangGraphPython runs each scenario on refengine (memory
// adapter) and on LangGraph Python (its InMemorySaver, recorded by
// bridge/python/checkpointkit_bridge/recorder.py) and diffs the canonical
// traces. LangGraph Python is the reference runtime: every difference is
// either an engine bug or listed in lgpyDifferences and in refengine's
// package docs ("Differences from LangGraph Python").
func TestAgainstLangGraphPython(t *testing.T) {
	runs := recordPython(t)
	if len(lgpyScenarios) < 45 {
		t.Errorf("%d scenarios, want at least 45", len(lgpyScenarios))
	}
	for _, name := range lgpyScenarios {
		t.Run(name, func(t *testing.T) {
			r, ok := runs[name]
			if !ok {
				t.Fatalf("bridge/python/scenarios has no scenario %q", name)
			}
			pyCalls, err := unmarshalCalls(r.Calls)
			if err != nil {
				t.Fatal(err)
			}
			refCalls := runRefengine(t, name, lgpyOnly, lgjsOnly)
			if lgpyUnordered[name] {
				pyCalls, refCalls = byNamespace(t, pyCalls), byNamespace(t, refCalls)
			}
			want, err := trace.Canonical(pyCalls)
			if err != nil {
				t.Fatal(err)
			}
			got, err := trace.Canonical(refCalls)
			if err != nil {
				t.Fatal(err)
			}
			want, got = lgpyDifferences(name, want, got)
			if lgpyUnordered[name] {
				sortCalls(t, want)
				sortCalls(t, got)
			}
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("refengine's saver traffic differs from LangGraph Python's (-python +refengine):\n%s", d)
			}
		})
	}
	for name := range runs {
		if !containsName(lgpyScenarios, name) {
			t.Errorf("bridge/python/scenarios has %q, which lgpyScenarios does not list", name)
		}
	}
}

func containsName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// unmarshalCalls decodes a JSON array of recorded calls.
func unmarshalCalls(calls json.RawMessage) ([]trace.Call, error) {
	return trace.Unmarshal([]byte(`{"calls":` + string(calls) + `}`))
}
