package enginetest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
var lgjsScenarios = []string{"linear", "linear_async", "interrupt_resume", "interrupt_twice", "static_interrupts", "interrupt_before"}

// lgjsUnordered are the scenarios whose calls are compared as multisets:
// with async durability (pregel-semantics §7) the checkpoint of a step is
// put in the background, so its order relative to the next step's writes
// is up to the scheduler in both engines.
var lgjsUnordered = map[string]bool{"linear_async": true, "interrupt_twice": true, "interrupt_before": true}

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
			if lgjsUnordered[name] {
				sortCalls(t, want)
				sortCalls(t, got)
			}
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
//     §2.7): it is cleared in ref;
//   - LangGraph.js gives the n-th interrupt of a task (n > 0) the ID
//     XXH3(ns + "|" + n), Python every interrupt of a task XXH3(ns)
//     (§3.3): in js, a task's later interrupt IDs become its first.
func lgjsDifferences(js, ref []trace.Call) {
	first, rename := map[string]string{}, map[string]string{}
	for _, c := range js {
		for _, w := range c.Writes {
			if w.Channel != spec.InterruptChannel {
				continue
			}
			for _, id := range interruptIDs(w.Value) {
				if f, ok := first[c.TaskID]; !ok {
					first[c.TaskID] = id
				} else if id != f {
					rename[id] = f
				}
			}
		}
	}
	if len(rename) > 0 {
		eachValue(js, func(v any) any { return renameStrings(v, rename) })
	}
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

// sortCalls orders calls by their JSON form.
func sortCalls(t *testing.T, calls []trace.Call) {
	t.Helper()
	keys := map[*trace.Call]string{}
	for i := range calls {
		data, err := trace.Marshal(calls[i : i+1])
		if err != nil {
			t.Fatal(err)
		}
		keys[&calls[i]] = string(data)
	}
	sorted := slices.Clone(calls)
	idx := make([]int, len(calls))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[&calls[a]], keys[&calls[b]]) })
	for i, j := range idx {
		calls[i] = sorted[j]
	}
}

// interruptIDs returns the IDs of an __interrupt__ write's interrupts.
func interruptIDs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if id, ok := m["id"].(string); ok {
				out = append(out, id)
			}
		}
	}
	return out
}

// eachValue replaces every state value of a trace (writes, pending writes,
// channel values) by f of it.
func eachValue(calls []trace.Call, f func(any) any) {
	tuple := func(t *spec.Tuple) {
		for i := range t.PendingWrites {
			t.PendingWrites[i].Value = f(t.PendingWrites[i].Value)
		}
	}
	for i := range calls {
		c := &calls[i]
		for j := range c.Writes {
			c.Writes[j].Value = f(c.Writes[j].Value)
		}
		if c.Tuple != nil {
			tuple(c.Tuple)
		}
		for _, t := range c.Tuples {
			tuple(t)
		}
	}
	eachCheckpoint(calls, func(cp *spec.Checkpoint) {
		for k, v := range cp.ChannelValues {
			cp.ChannelValues[k] = f(v)
		}
	})
}

// renameStrings replaces strings and map keys found in rename.
func renameStrings(v any, rename map[string]string) any {
	switch x := v.(type) {
	case string:
		if r, ok := rename[x]; ok {
			return r
		}
	case []any:
		for i, e := range x {
			x[i] = renameStrings(e, rename)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if r, ok := rename[k]; ok {
				k = r
			}
			out[k] = renameStrings(e, rename)
		}
		return out
	}
	return v
}
