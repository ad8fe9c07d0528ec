package mutants

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// engineOutcome runs every engine scenario and every golden trace replay
// against fresh savers from newSaver and returns the names of the ones that
// fail, as "scenario <name>" and "trace <name>".
func engineOutcome(ctx context.Context, newSaver func() spec.Saver) ([]string, error) {
	traces, err := enginetest.GoldenTraces()
	if err != nil {
		return nil, err
	}
	var failed []string
	for _, sc := range enginetest.All() {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := runGuarded(func() error { return sc.Run(sctx, &enginetest.Env{Saver: newSaver()}) })
		cancel()
		if err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			failed = append(failed, "engine scenario "+sc.Name+": "+msg)
		}
	}
	for _, tr := range traces {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := runGuarded(func() error { return trace.Replay(sctx, newSaver(), tr.Calls) })
		cancel()
		if err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			failed = append(failed, "engine trace "+tr.Name+": "+msg)
		}
	}
	return failed, nil
}

// runGuarded turns a panic of f into an error.
func runGuarded(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// evidenceRuns is how often TestEngineEvidence runs each mutant: some
// scenarios fail only on some runs (concurrency, random digits in IDs), so
// rewriting the explain table takes many.
var evidenceRuns = flag.Int("mutants.evidence-runs", 1, "how often TestEngineEvidence runs each mutant's engine scenarios (use 20 or more with -mutants.explain)")

// TestEngineEvidence runs the engine scenarios and golden traces of the
// conformance suite's engine group against every mutant, in this process,
// and logs which of them each mutant fails, with the first line of the
// failure: the evidence behind the tier of each rule in SPEC.md (a rule is
// core when a mutant breaking it changes an engine scenario's outcome).
// With -mutants.explain it adds the failures to the explain table.
func TestEngineEvidence(t *testing.T) {
	ctx := t.Context()
	control, err := engineOutcome(ctx, func() spec.Saver { return plain() })
	if err != nil {
		t.Fatal(err)
	}
	if len(control) > 0 {
		t.Fatalf("the unmutated memory saver fails %v", control)
	}
	broad := map[string][]string{}
	var b strings.Builder
	for _, m := range All() {
		seen := map[string]bool{}
		for range *evidenceRuns {
			failed, err := engineOutcome(ctx, m.Build)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range failed {
				group, _, _ := strings.Cut(f, ":")
				addRule(broad, group, m.Rule)
				if !seen[group] {
					seen[group] = true
					fmt.Fprintf(&b, "%s\t%s\t%.200s\n", m.Rule, m.Name, f)
				}
			}
		}
	}
	t.Log("rule\tmutant\tfirst failure of each engine scenario or trace it fails\n" + b.String())
	if *explainFile != "" {
		mergeExplain(t, broad, nil, nil)
	}
}
