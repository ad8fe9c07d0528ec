package refengine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/spec"
)

// PendingInterrupt is an interrupt raised by [Interrupt]: the value the node
// passed and the interrupt's ID, the key of a resume map.
type PendingInterrupt struct {
	// Value is what the node passed to Interrupt.
	Value any
	// ID is the xxh3-128 hex digest of the raising task's namespace (with
	// "|<n>" appended when the task's first n interrupts were answered), as
	// in LangGraph Python (langgraph/types.py:583); Command.ResumeMap is
	// keyed by it.
	ID string
}

// graphInterrupt is the error that stops a run for human input: the one
// Interrupt returns (with its interrupt) and the one static interrupts
// raise (without). It matches ErrGraphInterrupt.
type graphInterrupt struct {
	interrupts []PendingInterrupt
}

func (e *graphInterrupt) Error() string {
	if len(e.interrupts) == 0 {
		return ErrGraphInterrupt.Error()
	}
	vals := make([]string, len(e.interrupts))
	for i, in := range e.interrupts {
		vals[i] = fmt.Sprint(in.Value)
	}
	return ErrGraphInterrupt.Error() + ": " + strings.Join(vals, ", ")
}

func (e *graphInterrupt) Is(target error) bool { return target == ErrGraphInterrupt }

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
	raised  bool         // Interrupt returned an interrupt error
	// subgraphs counts the subgraphs this attempt started (the namespace
	// level of the next one, LangGraph's subgraph_counter).
	subgraphs int
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

// interruptRaised reports whether Interrupt returned an interrupt error
// during this attempt.
func (s *scratchpad) interruptRaised() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raised
}

// Interrupt pauses the running node for human input, as LangGraph's
// interrupt() does. The first time, it returns an error matching
// [ErrGraphInterrupt] that the node must return (wrapping it is fine); the
// run stops and the interrupt is saved. A node that drops that error fails
// with [ErrInterruptSwallowed]. When the run is resumed (Command.Resume, or
// Command.ResumeMap keyed by the interrupt ID), the node runs again from the
// top and the k-th Interrupt call returns the k-th resume value.
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
		sp.emitted = append(sp.emitted, spec.Write{Channel: spec.ResumeChannel, Value: slices.Clone(sp.resume[:idx+1])})
		return sp.resume[idx], nil
	}
	if v, ok := sp.nullResume(); ok {
		sp.resume = append(sp.resume, v)
		sp.emitted = append(sp.emitted, spec.Write{Channel: spec.ResumeChannel, Value: slices.Clone(sp.resume)})
		return v, nil
	}
	sp.raised = true
	return nil, &graphInterrupt{interrupts: []PendingInterrupt{{Value: value, ID: ids.InterruptAt(sp.task.ns, len(sp.resume))}}}
}
