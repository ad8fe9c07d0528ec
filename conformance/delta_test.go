package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// deltaUnsupported is the memory saver as a bridged saver presents it when
// the saver on the far side has no delta history: the method is there, and
// fails with errors.ErrUnsupported.
type deltaUnsupported struct{ *memory.Saver }

func (deltaUnsupported) DeltaHistory(context.Context, spec.Config, []string) (map[string]spec.DeltaHistory, error) {
	return nil, fmt.Errorf("bridge: delta_history: %w", errors.ErrUnsupported)
}

// deltaUnsupportedHarness is the harness TestSuite runs deltaUnsupported
// under.
const deltaUnsupportedHarness = "memory-delta-unsupported"

func newDeltaUnsupported(context.Context) (spec.Saver, func(), error) {
	return deltaUnsupported{memory.New()}, nil, nil
}

// checkDeltaUnsupported checks the report of deltaUnsupported: delta
// history is not supported, never failed, leaves the core level FULL, and
// the maintenance rules on
// delta threads are judged all the same, by walking GetTuple.
func checkDeltaUnsupported(t *testing.T, rep report.Report) {
	t.Helper()
	h := rep.Harness(deltaUnsupportedHarness)
	if h == nil {
		t.Fatalf("no report for %s", deltaUnsupportedHarness)
	}
	// Engines do without a saver's own delta history (they walk GetTuple),
	// so its absence leaves the core level FULL; the strict level, as for
	// any optional capability, is BASE.
	if len(h.FailedRules) > 0 || h.CoreLevel != LevelFull || h.StrictLevel != LevelBase {
		t.Errorf("%s: levels core %s, strict %s, failed %v; want FULL, BASE, none", h.Name, h.CoreLevel, h.StrictLevel, h.FailedRules)
	}
	for _, r := range h.Rules {
		want := report.StatusPassed
		switch {
		case r.Capability == lDeltaName || r.Capability == "faults":
			want = report.StatusNotSupported
		}
		if r.Status != want {
			t.Errorf("%s: rule %s (%s) is %s, want %s", h.Name, r.ID, r.Capability, r.Status, want)
		}
	}
	for _, id := range []string{"DELTA-11", "DELTA-12", "DELTA-13", "VALUE-12"} {
		if r := h.Rule(id); r == nil || r.Status != report.StatusPassed {
			t.Errorf("%s: %s should pass without the reader: %+v", h.Name, id, r)
		}
	}
}

// predatesDeltaHarness is the memory saver under the harness of a saver
// whose LangGraph has no delta channels: it skips every spec labelled
// DeltaChannels.
const predatesDeltaHarness = "memory-predates-delta"

// checkPredatesDelta checks that the DeltaChannels label reaches exactly
// the delta specs: VALUE-12 and DELTA-1 to DELTA-13 are skipped, some
// engine traces (those of delta graphs) are skipped and the others pass,
// and nothing else is touched.
func checkPredatesDelta(t *testing.T, rep report.Report) {
	t.Helper()
	h := rep.Harness(predatesDeltaHarness)
	if h == nil {
		t.Fatalf("no report for %s", predatesDeltaHarness)
	}
	if len(h.FailedRules) > 0 {
		t.Errorf("%s: failed %v", h.Name, h.FailedRules)
	}
	for _, r := range h.Rules {
		delta := r.ID == "VALUE-12" || strings.HasPrefix(r.ID, "DELTA-")
		switch {
		case delta && (r.Status != report.StatusSkipped || r.Passed != 0):
			t.Errorf("%s: %s is %s with %d passed, want skipped", h.Name, r.ID, r.Status, r.Passed)
		case r.ID == "ENGINE-TRACE-1" && (r.Skipped == 0 || r.Passed == 0):
			t.Errorf("%s: ENGINE-TRACE-1: %d skipped, %d passed; want the delta traces skipped and the others passed", h.Name, r.Skipped, r.Passed)
		case !delta && r.ID != "ENGINE-TRACE-1" && r.Skipped != 0:
			t.Errorf("%s: %s has %d skipped specs", h.Name, r.ID, r.Skipped)
		}
	}
}
