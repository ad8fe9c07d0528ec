package mutants

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// fingerprint is what must not change between two runs of the suite with
// one seed on one saver: the root causes, every rule's verdict but
// "explained" (a broad spec may fail on a free choice one run and not the
// next; it is explained either way), and every focused spec's status.
func fingerprint(h *report.HarnessReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "roots %v\n", h.PrimaryFailedRules)
	for _, r := range h.Rules {
		st := r.Status
		if st == report.StatusExplained {
			st = report.StatusPassed
		}
		fmt.Fprintf(&b, "rule %s %s %v\n", r.ID, st, r.Needs)
	}
	for _, s := range h.Specs {
		if s.Broad == "" {
			fmt.Fprintf(&b, "spec %s: %s %v\n", s.Text, s.Status, s.Needs)
		}
	}
	return b.String()
}

// TestSameSeedSameRoots runs the suite twice with one seed on savers that
// make free choices at random, alone and next to a fault, and requires the
// same report both times and no root cause but the expected ones.
// free-task-order orders the writes of different tasks at random: free for
// LangGraph, but WRITES-9 (strict) fixes that order, so WRITES-9 is its
// one root cause.
func TestSameSeedSameRoots(t *testing.T) {
	if os.Getenv(envMutant) != "" {
		t.Skip("inside a kill-test subprocess")
	}
	if testing.Short() {
		t.Skip("runs the suite four times; skipped with -short")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		roots []string
	}{
		{"free-task-order", []string{"WRITES-9"}},
		{"free-task-order+before-must-exist", []string{"LIST-BEFORE-3", "WRITES-9"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var prints []string
			for range 2 {
				_, rep, _, err := runSuite(t.Context(), dir, c.name, false, nil)
				if err != nil {
					t.Fatal(err)
				}
				h := rep.Harness(c.name)
				if h == nil {
					t.Fatalf("no report for %s", c.name)
				}
				if got := slices.Sorted(slices.Values(h.PrimaryFailedRules)); !slices.Equal(got, c.roots) {
					t.Errorf("root causes %v, want %v", got, c.roots)
				}
				prints = append(prints, fingerprint(h))
			}
			if prints[0] != prints[1] {
				t.Errorf("two runs with one seed differ:\n%s", lineDiff(prints[0], prints[1]))
			}
		})
	}
}

// lineDiff lists the lines of a and b that the other lacks.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
