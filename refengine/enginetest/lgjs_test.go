package enginetest_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// lgjsScenarios are the scenarios written for both engines: the Go side in
// enginetest or in lgjsOnly (lgjs_scenarios_test.go, lgjs_features_test.go),
// the JS side in bridge/js/scenarios/scenarios.js (and features.js).
var lgjsScenarios = []string{"linear", "linear_async", "interrupt_resume", "interrupt_twice", "static_interrupts", "interrupt_before",
	"new_input_discards", "command_goto", "update_fork", "sibling_forks", "replay_history",
	"send_map_reduce", "stateful_subgraph",
	"conditional", "fanout_fanin", "exit_linear", "state_history", "failure_retry",
	"failure_siblings", "subgraph_node", "update_copy",
	"command_node", "update_copy_bulk", "subgraph_in_node", "subgraph_in_node_resume",
	"parallel_resume", "subgraph_in_node_stateful", "command_send", "parallel_subgraph_resume"}

// Not compared yet: parallel_interrupts (bridge/js/scenarios has it) runs
// two Send tasks whose subgraphs interleave their saver calls in
// LangGraph.js, and then diverges (a plain resume with two interrupts
// pending is accepted); comparing it needs an order-free comparison up to
// a divergence.

// lgjsUnordered are the scenarios whose calls are compared as multisets:
// with async durability (pregel-semantics §7) the checkpoint of a step is
// put in the background, so its order relative to the next step's writes
// is up to the scheduler in both engines.
var lgjsUnordered = map[string]bool{"linear_async": true, "interrupt_twice": true, "interrupt_before": true, "replay_history": true, "send_map_reduce": true,
	// Concurrent tasks commit in completion order (§2.5).
	"parallel_resume": true, "parallel_subgraph_resume": true}

// divergence is a documented difference after which two traces cannot be
// aligned: the traces must agree up to it, and the first differing
// LangGraph.js call must be the one js recognizes.
type divergence struct {
	doc string
	// js reports whether the LangGraph.js trace diverges as documented
	// at call i, the first one that differs.
	js func(js []trace.Call, i int) bool
}

// at adapts a test of the first differing call.
func at(f func(trace.Call) bool) func([]trace.Call, int) bool {
	return func(js []trace.Call, i int) bool { return f(js[i]) }
}

func putWithSource(source string) func([]trace.Call, int) bool {
	return at(func(c trace.Call) bool { return c.Method == trace.MethodPut && c.Metadata["source"] == source })
}

// lgjsDivergences are the scenarios that diverge as documented in
// refengine's package docs.
var lgjsDivergences = map[string]divergence{
	"command_goto": {"a Command without resume on a finished thread: LangGraph.js puts an input checkpoint, Python does not (§2.3 items 2 and 4)",
		putWithSource("input")},
	"fanout_fanin": {"a step that consumes a join barrier and updates channels: LangGraph.js gives the consumed channel one version and the updated ones the next, Python one version to all (§1.3, §2.6 items 4-5)",
		at(func(c trace.Call) bool {
			vs := map[spec.Version]bool{}
			for _, v := range c.NewVersions {
				vs[v] = true
			}
			return c.Method == trace.MethodPut && len(vs) > 1
		})},
}

// bridgeJS is the bridge package's directory.
var bridgeJS = filepath.Join("..", "..", "bridge", "js")

// TestAgainstLangGraphJS runs each scenario on refengine (memory adapter)
// and on LangGraph.js (its MemorySaver, recorded by bridge/js/recorder.js)
// and diffs the canonical traces, after applying the deliberate differences
// documented in refengine's package docs (lgjsDifferences).
func TestAgainstLangGraphJS(t *testing.T) {
	node := lookNode(t)
	for _, name := range lgjsScenarios {
		t.Run(name, func(t *testing.T) {
			refCalls := runRefengine(t, name, lgjsOnly)
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
			jsCalls = dropResumeMapWrites(jsCalls)
			if lgjsUnordered[name] {
				jsCalls, refCalls = byNamespace(t, jsCalls), byNamespace(t, refCalls)
			}
			want, err := trace.Canonical(jsCalls)
			if err != nil {
				t.Fatal(err)
			}
			got, err := trace.Canonical(refCalls)
			if err != nil {
				t.Fatal(err)
			}
			want, got = lgjsDifferences(want, got)
			if lgjsUnordered[name] {
				sortCalls(t, want)
				sortCalls(t, got)
			}
			if div, ok := lgjsDivergences[name]; ok {
				i := 0
				for i < len(want) && i < len(got) && cmp.Equal(want[i], got[i], cmpopts.EquateEmpty()) {
					i++
				}
				if i == len(want) || !div.js(want, i) {
					t.Fatalf("the documented divergence (%s) does not occur at the first differing call %d:\n%s", div.doc, i, cmp.Diff(want[min(i, len(want)-1):], got[min(i, len(got)-1):], cmpopts.EquateEmpty()))
				}
				t.Logf("calls 0-%d agree; call %d diverges as documented: %s", i-1, i, div.doc)
				return
			}
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("refengine's saver traffic differs from LangGraph.js's (-lgjs +refengine):\n%s", d)
			}
		})
	}
}
