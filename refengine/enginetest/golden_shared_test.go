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

// checkGolden compares the traces a runtime recorded (got, by scenario, in
// the committed form) with those committed in dir: it fails when they are
// stale (a scenario added, removed or changed, or the runtime upgraded).
// With -update it first rewrites dir. Every recorded trace must then
// replay on the memory adapter. runtime names the runtime in the messages
// ("LangGraph.js").
func checkGolden(t *testing.T, runtime, dir string, got map[string][]byte) {
	t.Helper()
	if *update {
		old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range old {
			if _, ok := got[strings.TrimSuffix(filepath.Base(f), ".json")]; !ok {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range got {
			if err := os.WriteFile(filepath.Join(dir, name+".json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var committed []string
	for _, f := range files {
		committed = append(committed, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	for name := range got {
		if !slices.Contains(committed, name) {
			t.Errorf("scenario %s has no committed %s trace (run with -update)", name, runtime)
		}
	}
	for _, name := range committed {
		want, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s.json: %s has no scenario %s any more (run with -update)", name, runtime, name)
		case !bytes.Equal(g, want) && !sameCalls(t, g, want):
			t.Errorf("%s.json is stale: %s's trace differs (run with -update after checking the change):\n%s", name, runtime, firstDiff(want, g))
		case !bytes.Equal(g, want):
			t.Logf("%s: %s issued the same calls in another order (concurrent tasks)", name, runtime)
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
			t.Errorf("%s: %s's trace does not replay on the memory adapter: %v", name, runtime, err)
		}
	}
}

// committedForm normalises the calls a runtime recorded for scenario name
// with normalize and returns them in the committed form.
func committedForm(t *testing.T, name string, calls []trace.Call, normalize func([]trace.Call) ([]trace.Call, error)) []byte {
	t.Helper()
	canon, err := normalize(calls)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	data, err := trace.Marshal(canon)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return data
}

// sameCalls reports whether two committed-form traces hold the same calls
// in some order: LangGraph.js and LangGraph Python issue the writes of
// concurrent tasks in any order.
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
