// Package conftest runs the conformance suite over the saver bridge; its
// subpackages run it against cmd/checkpointkit-saver serving each adapter.
package conftest

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Run runs the whole conformance suite over the bridge against a
// server started with args, one fresh saver (open) per spec, and requires
// level FULL with no failing rule when the run is complete (no label
// filter or focus).
func Run(t *testing.T, name string, args ...string) {
	RunSkipping(t, name, nil, args...)
}

// RunSkipping is Run with the harness's Skip map set to skip (rule IDs or
// capability labels, each with its reason); no rule may fail, but skipped
// rules keep the level below FULL.
func RunSkipping(t *testing.T, name string, skip map[string]string, args ...string) {
	p := bridgetest.Start(t, args...)
	harness := "bridge/" + name
	start := time.Now()
	conformance.Run(t, conformance.Harness{
		Name: harness,
		Skip: skip,
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			s, err := p.Open(ctx)
			if err != nil {
				return nil, nil, err
			}
			return s, func() {
				if err := s.(io.Closer).Close(); err != nil {
					t.Errorf("closing a saver of %s: %v", harness, err)
				}
			}, nil
		},
	})
	t.Logf("conformance over the bridge (%s): %v", p.Name(), time.Since(start).Round(time.Millisecond))
	rep, ok := conformance.LastReport()
	if !ok {
		t.Fatal("no conformance report")
	}
	h := rep.Harness(harness)
	if h == nil {
		t.Fatalf("no report for %s", harness)
	}
	if len(h.FailedRules) > 0 {
		t.Errorf("%s breaks rules %v", harness, h.FailedRules)
	}
	// Over the bridge, the specs whose input the wire cannot carry (a cycle,
	// invalid UTF-8, Go types outside the value model) are not judged, which
	// caps the levels at BASE; every other rule must hold, as it does on the
	// adapter itself (level FULL there).
	if h.Complete() && len(skip) == 0 {
		for _, r := range h.Rules {
			switch {
			case r.Status == report.StatusNotJudged && len(r.Needs) == 0:
				t.Logf("%s: %s not judged over this transport", harness, r.ID)
			case r.Status == report.StatusNotJudged:
				t.Errorf("%s: %s not judged: needs %v", harness, r.ID, r.Needs)
			case r.Status == report.StatusFailed || r.Status == report.StatusExplained || r.Status == report.StatusSkipped || r.Status == report.StatusDiffers:
				t.Errorf("%s: %s %s", harness, r.ID, r.Status)
			}
		}
	}
}
