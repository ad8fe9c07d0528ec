package refengine

import "errors"

// ParentCommand is the error a node of a subgraph returns to steer the
// graph that called it, as LangGraph's Command(graph=Command.PARENT) does
// (langgraph/pregel/_retry.py, ParentCommand in langgraph/errors.py):
// build it with [ToParent]. The subgraph stops at once and saves nothing
// for the raising task; the parent's task that ran the subgraph (a node
// added with StateGraph.AddSubgraph, or a node function that called
// Graph.InvokeFromNode and returned the error) finishes with the
// Command's update, gotos and Sends as its writes. Returned by a node of
// the root graph, it fails the run.
type ParentCommand struct {
	// Command is what the parent's task writes: Update, Goto and Sends.
	Command Command
	origin  *loop // the loop whose node raised it
}

// Error implements error.
func (p *ParentCommand) Error() string {
	return "refengine: a Command for the parent graph reached a graph without one"
}

// ToParent returns the error that sends cmd to the parent graph (see
// [ParentCommand]); a node returns it.
func ToParent(cmd Command) error { return &ParentCommand{Command: cmd} }

// parentCommand reports whether err is a ParentCommand that task t of l
// must turn into its writes: one raised in a subgraph t ran. One raised by
// l's own node is marked as coming from l and bubbles up.
func (l *loop) parentCommand(err error) (*ParentCommand, bool) {
	var pc *ParentCommand
	if !errors.As(err, &pc) {
		return nil, false
	}
	if pc.origin == nil {
		pc.origin = l
		return nil, false
	}
	return pc, pc.origin != l
}
