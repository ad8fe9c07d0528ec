package enginetest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// lgjsScenarios are the scenarios written for both engines: the Go side in
// enginetest, the JS side in bridge/js/scenarios/scenarios.js.
var lgjsScenarios = []string{"linear"}

// bridgeJS is the bridge package's directory.
var bridgeJS = filepath.Join("..", "..", "bridge", "js")

// TestAgainstLangGraphJS runs each scenario on refengine (memory adapter)
// and on LangGraph.js (its MemorySaver, recorded by bridge/js/recorder.js)
// and diffs the canonical traces, after applying the deliberate differences
// documented in refengine's package docs (lgjsDifferences).
func TestAgainstLangGraphJS(t *testing.T) {
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
	byName := map[string]enginetest.Scenario{}
	for _, sc := range enginetest.All() {
		byName[sc.Name] = sc
	}
	for _, name := range lgjsScenarios {
		t.Run(name, func(t *testing.T) {
			sc, ok := byName[name]
			if !ok {
				t.Fatalf("no Go scenario %q", name)
			}
			env := &enginetest.Env{Saver: memory.New()}
			if err := sc.Run(context.Background(), env); err != nil {
				t.Fatalf("Go scenario: %v", err)
			}
			cmd := exec.Command(node, filepath.Join("scenarios", "run.js"), name)
			cmd.Dir = bridgeJS
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node scenarios/run.js %s: %v\n%s", name, err, stderr.Bytes())
			}
			jsCalls, err := trace.Unmarshal(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := trace.Canonical(jsCalls)
			if err != nil {
				t.Fatal(err)
			}
			got, err := trace.Canonical(env.Calls)
			if err != nil {
				t.Fatal(err)
			}
			lgjsDifferences(want, got)
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("refengine's saver traffic differs from LangGraph.js's (-lgjs +refengine):\n%s", d)
			}
		})
	}
}

// lgjsDifferences rewrites canonical traces of LangGraph.js (js) and
// refengine (ref) to undo the deliberate differences listed in refengine's
// package docs ("Differences from LangGraph.js"):
//   - LangGraph.js stores every available channel, versioned or not (a
//     reducer key's default, an empty __pregel_tasks); Python, and
//     refengine, store only channels with a version (pregel-semantics §1.2):
//     unversioned channels are dropped from js;
//   - LangGraph.js does not record updated_channels (Python does, §1.1,
//     §2.7): it is cleared in ref.
func lgjsDifferences(js, ref []trace.Call) {
	eachCheckpoint(js, func(cp *spec.Checkpoint) {
		for k := range cp.ChannelValues {
			if _, ok := cp.ChannelVersions[k]; !ok {
				delete(cp.ChannelValues, k)
			}
		}
	})
	eachCheckpoint(ref, func(cp *spec.Checkpoint) { cp.UpdatedChannels = nil })
}

// eachCheckpoint calls f on every checkpoint of a trace.
func eachCheckpoint(calls []trace.Call, f func(*spec.Checkpoint)) {
	for i := range calls {
		c := &calls[i]
		if c.Checkpoint != nil {
			f(c.Checkpoint)
		}
		if c.Tuple != nil {
			f(&c.Tuple.Checkpoint)
		}
		for _, t := range c.Tuples {
			f(&t.Checkpoint)
		}
	}
}
