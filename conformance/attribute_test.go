package conformance

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// TestExplainedMeansCaused checks that a failure is explained by another
// rule only when it looks the same: the same operation and observation as
// the explaining rule's failure, or as its own under that rule's mutants.
func TestExplainedMeansCaused(t *testing.T) {
	ev := func(op, obs string) *report.Evidence { return &report.Evidence{Operation: op, Observation: obs} }
	spec := func(rules []string, e *report.Evidence) report.SpecResult {
		return report.SpecResult{Rules: rules, Status: report.StatusFailed, Evidence: e}
	}
	root := spec([]string{"LIST-LIMIT-2"}, ev("List", "empty"))
	for _, c := range []struct {
		name string
		x    report.SpecResult
		want bool
	}{
		{"same operation and observation", spec([]string{"LIST-SCOPE-1"}, ev("List", "empty")), true},
		{"another observation", spec([]string{"LIST-SCOPE-1"}, ev("List", "some")), false},
		{"another operation", spec([]string{"LIST-SCOPE-1"}, ev("GetTuple", "empty")), false},
		{"no evidence", spec([]string{"LIST-SCOPE-1"}, nil), false},
		{"one spec citing both", spec([]string{"LIST-SCOPE-1", "LIST-LIMIT-2"}, ev("Put", "error")), true},
		{"lists of other lengths", spec([]string{"LIST-SCOPE-1"}, &report.Evidence{Operation: "List", Observation: "empty", Lengths: "other"}), false},
	} {
		if got := sameCause([]report.SpecResult{root, c.x}, "LIST-LIMIT-2", "LIST-SCOPE-1"); got != c.want {
			t.Errorf("sameCause, %s: %v, want %v", c.name, got, c.want)
		}
	}
	x := explanations{Signatures: map[string]map[string][]string{"CTX-5": {"PRUNE-1": {"Prune/error"}}}}
	if !x.seenUnder([]report.SpecResult{spec([]string{"CTX-5"}, ev("Prune", "error"))}, "PRUNE-1", "CTX-5") {
		t.Error("seenUnder: a failure seen under the rule's mutants")
	}
	if x.seenUnder([]report.SpecResult{spec([]string{"CTX-5"}, ev("List", "some"))}, "PRUNE-1", "CTX-5") {
		t.Error("seenUnder: a failure never seen under the rule's mutants")
	}
}
