package conformance

import (
	"context"
	"encoding/json"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// FaultHarness lets the suite route a network saver's connections through
// its fault-injecting TCP proxy (package faultproxy), which enables the
// faults capability (SPEC.md FAULT-1, FAULT-2, FAULT-3). Without it, the
// specs of that capability report "not supported".
type FaultHarness struct {
	// Addr is the host:port of the server the saver talks to. The suite
	// starts a proxy in front of it for each spec.
	Addr string
	// New returns a saver over empty, isolated storage, like Harness.New,
	// except that every connection it opens goes to via (the proxy's
	// host:port) instead of Addr. The saver must open its connections
	// itself, not share a pool with other savers, so that a fault reaches
	// only it.
	New func(ctx context.Context, via string) (spec.Saver, func(), error)
	// Restart, when set, restarts the server at Addr for real (stops it and
	// starts it again) and returns once it accepts connections. The suite
	// then checks FAULT-3 across a real restart too; without it that spec
	// reports "not supported" and only the proxy's restarts run.
	Restart func(ctx context.Context) error
}

// FaultCounts tally what the specs of the faults capability did to a
// saver; see package report.
type FaultCounts = report.FaultCounts

// faultEntry is the name of the report entry a faults spec adds with its
// FaultCounts.
const faultEntry = "checkpointkit faults"

// faultCountsOf sums the FaultCounts entries of specs.
func faultCountsOf(specs []types.SpecReport) (FaultCounts, bool) {
	var sum FaultCounts
	found := false
	for _, s := range specs {
		for _, e := range s.ReportEntries {
			if e.Name != faultEntry {
				continue
			}
			var c FaultCounts
			if raw, ok := e.GetRawValue().(FaultCounts); ok {
				c = raw
			} else if json.Unmarshal([]byte(e.Value.AsJSON), &c) != nil {
				continue
			}
			sum.Add(c)
			found = true
		}
	}
	return sum, found
}
