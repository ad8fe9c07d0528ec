package refengine

import (
	"errors"
	"fmt"
)

// Errors of Compile, Invoke and the other Graph methods. Errors about the
// run's address or arguments wrap spec.ErrInvalidConfig or
// spec.ErrInvalidArgument instead.
var (
	// ErrInvalidGraph reports a graph definition that cannot be compiled,
	// or a route or Send to a node the graph does not have.
	ErrInvalidGraph = errors.New("refengine: invalid graph")
	// ErrInvalidUpdate reports writes a channel cannot accept, such as two
	// values for a last-value key in one superstep (LangGraph's
	// InvalidUpdateError).
	ErrInvalidUpdate = errors.New("refengine: invalid update")
	// ErrNoSaver reports a graph compiled without a saver.
	ErrNoSaver = errors.New("refengine: graph has no saver")
	// ErrEmptyInput reports a run with nothing to do: no input, no resume
	// and no pending work.
	ErrEmptyInput = errors.New("refengine: empty input")
	// ErrMultipleInterrupts reports a plain resume value while several
	// interrupts are pending; resume them with Command.ResumeMap.
	ErrMultipleInterrupts = errors.New("refengine: several interrupts are pending; resume with a map by interrupt ID")
	// ErrRecursionLimit reports a run that did not finish within its
	// recursion limit.
	ErrRecursionLimit = errors.New("refengine: recursion limit reached")
	// ErrNodePanic wraps the value a panicking node panicked with.
	ErrNodePanic = errors.New("refengine: node panicked")
	// ErrReducerPanic wraps the value a panicking reducer panicked with;
	// the run fails with it, as when a reducer returns an error.
	ErrReducerPanic = errors.New("refengine: reducer panicked")
	// ErrGraphInterrupt is matched (with errors.Is) by the error
	// [Interrupt] returns to pause a node, LangGraph's GraphInterrupt. A
	// node must return that error, wrapped or not; Invoke then reports the
	// interrupt in its Result, not as an error.
	ErrGraphInterrupt = errors.New("refengine: graph interrupted")
	// ErrInterruptSwallowed reports a node that called [Interrupt], got
	// the interrupt error and returned without it (nil, or an error that
	// does not wrap it). The interrupt would be lost, so the node's task
	// fails instead, with a *TaskError wrapping this error (and the node's
	// own error, if any).
	ErrInterruptSwallowed = errors.New("refengine: node swallowed the error of Interrupt instead of returning it")
	// ErrSiblingFailed is the cause (context.Cause) with which a task's
	// context is cancelled when a sibling task of the same superstep
	// fails; a node that returns because of it fails too, while one that
	// finishes anyway keeps its writes.
	ErrSiblingFailed = errors.New("refengine: cancelled: a sibling task failed")
	// ErrNotInTask reports Interrupt called outside a running node.
	ErrNotInTask = errors.New("refengine: Interrupt called outside a node")
)

// TaskError is a node failure, reported by Invoke after the superstep's
// other tasks committed. A failure inside a subgraph keeps the inner node's
// name and task ID.
type TaskError struct {
	// Node names the failed node.
	Node string
	// TaskID is the ID of the failed task.
	TaskID string
	// Err is what the node returned (or ErrNodePanic,
	// ErrInterruptSwallowed).
	Err error
}

// Error implements error.
func (e *TaskError) Error() string {
	return fmt.Sprintf("refengine: node %q failed: %v", e.Node, e.Err)
}

// Unwrap returns the node's error.
func (e *TaskError) Unwrap() error { return e.Err }
