package refengine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Errors returned by Invoke and friends.
var (
	// ErrEmptyInput reports a run with nothing to do: no input, no resume
	// and no pending work.
	ErrEmptyInput = errors.New("refengine: empty input")
	// ErrMultipleInterrupts reports a plain resume value while several
	// interrupts are pending; resume them with Command.ResumeMap.
	ErrMultipleInterrupts = errors.New("refengine: several interrupts are pending; resume with a map by interrupt ID")
	// ErrRecursionLimit reports a run that did not finish within its
	// recursion limit.
	ErrRecursionLimit = errors.New("refengine: recursion limit reached")
	// ErrNoSaver reports a graph compiled without a saver.
	ErrNoSaver = errors.New("refengine: graph has no saver")
	// ErrNodePanic wraps the value a panicking node panicked with.
	ErrNodePanic = errors.New("refengine: node panicked")
	// ErrNotInTask reports Interrupt called outside a running node.
	ErrNotInTask = errors.New("refengine: Interrupt called outside a node")
)

// PendingInterrupt is an interrupt raised by [Interrupt]: the value the node
// passed and the interrupt's ID, the key of a resume map.
type PendingInterrupt struct {
	Value any
	ID    string
}

// GraphInterrupt is the error a node returns (and Invoke reports in its
// Result) when a run stops for human input. Static interrupts
// (WithInterruptBefore/After) carry no Interrupts.
type GraphInterrupt struct {
	Interrupts []PendingInterrupt
}

// Error implements error.
func (e *GraphInterrupt) Error() string {
	if len(e.Interrupts) == 0 {
		return "refengine: graph interrupted"
	}
	vals := make([]string, len(e.Interrupts))
	for i, in := range e.Interrupts {
		vals[i] = fmt.Sprint(in.Value)
	}
	return "refengine: graph interrupted: " + strings.Join(vals, ", ")
}

// TaskError is a node failure, reported by Invoke after the superstep's
// other tasks committed.
type TaskError struct {
	Node   string
	TaskID string
	Err    error
}

// Error implements error.
func (e *TaskError) Error() string {
	return fmt.Sprintf("refengine: node %q failed: %v", e.Node, e.Err)
}

// Unwrap returns the node's error.
func (e *TaskError) Unwrap() error { return e.Err }

// encodeInterrupts is the stored form of interrupts: a list of
// {"value", "id"} maps.
func encodeInterrupts(ins []PendingInterrupt) (any, error) {
	out := make([]any, len(ins))
	for i, in := range ins {
		v, err := spec.Normalize(in.Value)
		if err != nil {
			return nil, fmt.Errorf("interrupt value: %w", err)
		}
		out[i] = map[string]any{"value": v, "id": in.ID}
	}
	return out, nil
}

// decodeInterrupts reads the stored form back.
func decodeInterrupts(v any) []PendingInterrupt {
	l, _ := v.([]any)
	var out []PendingInterrupt
	for _, e := range l {
		m, _ := e.(map[string]any)
		id, _ := m["id"].(string)
		out = append(out, PendingInterrupt{Value: m["value"], ID: id})
	}
	return out
}

// scratchpad is the per-task-attempt state behind Interrupt.
type scratchpad struct {
	mu      sync.Mutex
	loop    *loop
	task    *task
	parent  *scratchpad
	counter int
	resume  []any
	emitted []spec.Write // __resume__ writes, in order
}

type scratchKey struct{}

// nullResume consumes the first null-task resume value of this task's
// graph, or of an enclosing graph's task.
func (s *scratchpad) nullResume() (any, bool) {
	for sp := s; sp != nil; sp = sp.parent {
		if v, ok := sp.loop.consumeNullResume(); ok {
			return v, true
		}
	}
	return nil, false
}

// Interrupt pauses the running node for human input, as LangGraph's
// interrupt() does. The first time, it returns a *GraphInterrupt error that
// the node must return; the run stops and the interrupt is saved. When the
// run is resumed (Command.Resume, or Command.ResumeMap keyed by the
// interrupt ID), the node runs again from the top and the k-th Interrupt
// call returns the k-th resume value.
func Interrupt(ctx context.Context, value any) (any, error) {
	sp, _ := ctx.Value(scratchKey{}).(*scratchpad)
	if sp == nil {
		return nil, ErrNotInTask
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	idx := sp.counter
	sp.counter++
	if idx < len(sp.resume) {
		sp.emitted = append(sp.emitted, spec.Write{Channel: spec.ResumeChannel, Value: slices.Clone(sp.resume)})
		return sp.resume[idx], nil
	}
	if v, ok := sp.nullResume(); ok {
		sp.resume = append(sp.resume, v)
		sp.emitted = append(sp.emitted, spec.Write{Channel: spec.ResumeChannel, Value: slices.Clone(sp.resume)})
		return v, nil
	}
	return nil, &GraphInterrupt{Interrupts: []PendingInterrupt{{Value: value, ID: InterruptID(sp.task.ns)}}}
}
