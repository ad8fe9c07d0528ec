package mutants

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	g "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Environment of a kill-test subprocess.
const (
	// envMutant names the mutant (or ControlName) that TestMutantSuite runs
	// the suite against.
	envMutant = "CHECKPOINTKIT_MUTANT"
	// envReport is where conformance.Run writes its JSON report.
	envReport = "CHECKPOINTKIT_REPORT_JSON"
	// envStop, when "1", makes the subprocess skip every spec that starts
	// after a failing spec (other than a model-based one) citing the
	// mutant's rule: the mutant is killed, the rest would only cost time.
	envStop = "CHECKPOINTKIT_MUTANT_STOP_AT_KILL"
)

// Markers written to stderr around every spec, so that the kill test can
// tell during which spec the race detector (which writes to stderr at the
// moment it sees a race) reported something.
const (
	markerStart = "=== checkpointkit mutant spec start: "
	markerEnd   = "=== checkpointkit mutant spec end: "
)

// TestMutantSuite runs the whole conformance suite against the saver named
// by CHECKPOINTKIT_MUTANT. Ginkgo runs one suite per process, so the kill
// test (TestKillMatrix) starts this test once per mutant in a subprocess;
// run directly, it skips.
//
// To debug one mutant by hand:
//
//	CHECKPOINTKIT_MUTANT=list-ascending go test ./conformance/mutants -run '^TestMutantSuite$' -v
func TestMutantSuite(t *testing.T) {
	name := os.Getenv(envMutant)
	if name == "" {
		t.Skip(envMutant + " is not set: this test runs as a subprocess of TestKillMatrix")
	}
	newSaver := func() spec.Saver { return memory.New() }
	var killed atomic.Bool
	if name != ControlName {
		// Several mutants joined by "+" run stacked (see Stack).
		var ms []Mutant
		for n := range strings.SplitSeq(name, "+") {
			m, ok := lookupAny(n)
			if !ok {
				t.Fatalf("%s=%q: %q names no registered mutant", envMutant, name, n)
			}
			ms = append(ms, m)
		}
		if _, err := Stack(ms...); err != nil {
			t.Fatal(err)
		}
		newSaver = func() spec.Saver {
			s, _ := Stack(ms...)
			return s
		}
		if os.Getenv(envStop) == "1" && len(ms) == 1 {
			rule := ms[0].Rule
			g.ReportAfterEach(func(r types.SpecReport) {
				// The model-based specs cite dozens of rules each; only a
				// focused spec's failure, or its verdict that the saver
				// differs like a LangGraph saver, settles the verdict.
				differs := r.State == types.SpecStateSkipped && strings.HasPrefix(r.Failure.Message, "differs: ")
				if (r.Failed() || differs) && !slices.Contains(r.Labels(), "model") && slices.Contains(citedRules(r.LeafNodeText), rule) {
					killed.Store(true)
				}
			})
		}
	}
	conformance.Run(t, conformance.Harness{
		Name: name,
		New: func(context.Context) (spec.Saver, func(), error) {
			if killed.Load() {
				g.Skip("the mutant is already killed")
			}
			text := g.CurrentSpecReport().LeafNodeText
			fmt.Fprintln(os.Stderr, markerStart+text)
			return newSaver(), func() { fmt.Fprintln(os.Stderr, markerEnd+text) }, nil
		},
	})
}

// citedRules returns the rule IDs a spec text cites, as "[LIST-ORDER-1]".
func citedRules(text string) []string {
	var out []string
	for _, m := range citation.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}
