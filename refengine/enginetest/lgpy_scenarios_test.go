package enginetest_test

import (
	"context"
	"regexp"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// lgpyScenarios are the scenarios written for refengine and LangGraph
// Python: the Go side in enginetest, lgjsOnly or lgpyOnly, the Python side
// in bridge/python/scenarios.
var lgpyScenarios = append(append([]string{}, lgjsScenarios...),
	"parallel_interrupts",
	// bridge/python/scenarios/subgraphs.py
	"command_parent", "command_parent_in_node", "subgraph_state_in_node", "subgraph_update_in_node",
	"subgraph_update", "subgraph_fork", "send_subgraph", "parallel_resume_all",
	// bridge/python/scenarios/policies.py
	"retry_policy", "retry_exhausted", "cache_hit", "durability_sync_interrupt", "durability_async_interrupt",
	"durability_exit_interrupt", "durability_async_subgraph", "durability_exit_subgraph", "history_before_limit",
	"command_fork", "fanout_failure", "exit_durability", "subgraph_interrupt",
	// bridge/python/scenarios/updates.py
	"update_as_input", "update_as_input_fresh", "update_as_end", "interrupt_twice_by_id", "stateful_subgraph_state",
	"update_finished_task",
)

// lgpyUnordered are the scenarios whose calls are compared as multisets
// (see lgjsUnordered): background Puts with async durability, concurrent
// tasks committing in completion order.
var lgpyUnordered = map[string]bool{"linear_async": true, "interrupt_twice": true, "interrupt_before": true, "replay_history": true,
	"send_map_reduce": true, "failure_siblings": true, "parallel_resume": true, "parallel_subgraph_resume": true, "parallel_interrupts": true,
	"send_subgraph": true, "parallel_resume_all": true, "durability_async_interrupt": true, "durability_async_subgraph": true,
	"fanout_failure": true, "exit_durability": true, "update_finished_task": true}

// lgpyOnly are the Go sides of scenarios written for LangGraph Python and
// refengine only.
var lgpyOnly = map[string]func(ctx context.Context, rec spec.Saver) error{}

// lgpyDifferences rewrites the canonical traces of LangGraph Python (py)
// and refengine (ref) of scenario name to undo the deliberate differences
// documented in refengine's package docs ("Differences from LangGraph
// Python"), and returns them.
func lgpyDifferences(name string, py, ref []trace.Call) ([]trace.Call, []trace.Call) {
	pyErrors(py)
	sortWrites(py)
	sortWrites(ref)
	return py, ref
}

// pyErrorPattern matches the repr of an exception with a string message,
// as LangGraph Python's serde stores a failed task's __error__ write.
var pyErrorPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*\('(.*)'\)$`)

// pyErrors rewrites the __error__ values of a Python trace (writes put and
// pending writes read back) from the exception's repr to its message,
// which refengine stores.
func pyErrors(calls []trace.Call) {
	fix := func(channel string, v any) any {
		if s, ok := v.(string); ok && channel == spec.ErrorChannel {
			if m := pyErrorPattern.FindStringSubmatch(s); m != nil {
				return m[1]
			}
		}
		return v
	}
	rewriteWriteValues(calls, fix)
}
