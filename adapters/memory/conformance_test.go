package memory_test

import (
	"context"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestConformance runs the whole conformance suite against the in-memory
// saver; it must pass at level FULL.
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
	if h := rep.Harness("memory"); h == nil || h.Level != conformance.LevelFull {
		t.Errorf("memory saver conformance level: got %+v, want FULL", h)
	}
}
