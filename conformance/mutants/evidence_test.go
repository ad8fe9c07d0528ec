package mutants

import (
	"context"
	"fmt"
	"slices"
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
			failed = append(failed, "scenario "+sc.Name+": "+msg)
		}
	}
	for _, tr := range traces {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := runGuarded(func() error { return trace.Replay(sctx, newSaver(), tr.Calls) })
		cancel()
		if err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			failed = append(failed, "trace "+tr.Name+": "+msg)
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

// TestEngineEvidence runs the engine scenarios and golden traces against
// every mutant and logs, per mutant, which of them change outcome.
func TestEngineEvidence(t *testing.T) {
	ctx := t.Context()
	control, err := engineOutcome(ctx, func() spec.Saver { return plain() })
	if err != nil {
		t.Fatal(err)
	}
	if len(control) > 0 {
		t.Fatalf("the unmutated memory saver fails %v", control)
	}
	var b strings.Builder
	for _, m := range All() {
		failed, err := engineOutcome(ctx, m.Build)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(failed)
		for _, f := range failed {
			fmt.Fprintf(&b, "%s\t%s\t%.300s\n", m.Rule, m.Name, f)
		}
	}
	t.Log("\n" + b.String())
}
