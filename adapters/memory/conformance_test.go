package memory_test

import (
	"context"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestConformance runs the whole conformance suite against the in-memory
// saver, which must reach level FULL (when no label filter or focus narrows the run).
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Harness{
		Name: "memory",
		New: func(context.Context) (spec.Saver, func(), error) {
			return memory.New(), nil, nil
		},
	})
	rep, ok := conformance.LastReport()
	if !ok {
		t.Fatal("no conformance report")
	}
	h := rep.Harness("memory")
	if h == nil {
		t.Fatal("no report for the memory harness")
	}
	if len(h.FailedRules) > 0 {
		t.Errorf("memory saver breaks rules %v", h.FailedRules)
	}
	if h.Complete() && h.Level != conformance.LevelFull {
		t.Errorf("memory saver conformance level %s, want %s", h.Level, conformance.LevelFull)
	}
}
