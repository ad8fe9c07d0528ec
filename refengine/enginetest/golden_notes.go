package enginetest

// The LangGraph.js-only behaviours that LangGraphJSGoldenTraces gives each
// LangGraph.js trace as Notes.

// lgjsCommonNotes are the LangGraph.js-only behaviours every LangGraph.js
// trace shows (refengine's package docs, "Differences from
// LangGraph.js").
var lgjsCommonNotes = []string{
	"LangGraph.js: every available channel is put, versioned or not (a reducer's default, an empty __pregel_tasks)",
	"LangGraph.js: updated_channels is left unset",
	"LangGraph.js: channel versions are integers",
}

// lgjsNotes are the further LangGraph.js-only behaviours of single
// LangGraph.js traces: where TestAgainstLangGraphJS finds their traffic
// departing from LangGraph Python's on the same scenario.
var lgjsNotes = map[string][]string{
	"command_goto":     {"LangGraph.js: a Command without resume on a finished thread puts an input checkpoint after its writes"},
	"fanout_fanin":     {"LangGraph.js: a step consuming a join barrier gives the consumed channel one version and the updated channels the next"},
	"conditional":      {"LangGraph.js: a conditional edge's branch:to:X write carries the source node's name"},
	"failure_retry":    {"LangGraph.js: a failed task's __error__ write holds {message, name}"},
	"failure_siblings": {"LangGraph.js: a failed task's __error__ write holds {message, name}", "LangGraph.js: a cancelled sibling that finished saves an AbortError next to its writes"},
	"parallel_interrupts": {"LangGraph.js: a plain resume while two interrupts are pending is accepted",
		"LangGraph.js: a resume map saves a __resume__ write per interrupt, filed under the interrupt ID"},
	"parallel_resume": {"LangGraph.js: a resume map saves a __resume__ write per interrupt, filed under the interrupt ID"},
	"parallel_subgraph_resume": {"LangGraph.js: a resume map saves a __resume__ write per interrupt, filed under the interrupt ID",
		"LangGraph.js: a resumed subgraph gets the parent task's resume value as a null-task __resume__ write in its namespace"},
}
