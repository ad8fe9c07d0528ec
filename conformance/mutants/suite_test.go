package mutants

import (
	"context"
	"fmt"
	"os"
	"testing"

	g "github.com/onsi/ginkgo/v2"

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
	if name != ControlName {
		m, ok := Lookup(name)
		if !ok {
			t.Fatalf("%s=%q names no registered mutant", envMutant, name)
		}
		newSaver = m.New
	}
	conformance.Run(t, conformance.Harness{
		Name: name,
		New: func(context.Context) (spec.Saver, func(), error) {
			text := g.CurrentSpecReport().LeafNodeText
			fmt.Fprintln(os.Stderr, markerStart+text)
			return newSaver(), func() { fmt.Fprintln(os.Stderr, markerEnd+text) }, nil
		},
	})
}
