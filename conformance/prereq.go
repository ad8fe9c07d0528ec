package conformance

import (
	"context"
	"slices"
	"strings"
	"sync"

	g "github.com/onsi/ginkgo/v2"

	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Prerequisites. A focused spec's fixture exercises its own rules and,
// where it cannot avoid it, a few others: LIST-LIMIT-1's spec filters, so
// a saver whose filter is broken fails it whatever its Limit does. Those
// other rules are the spec's prerequisites, declared here as data. When a
// prerequisite failed, the spec's failure says nothing about its own rule:
// the report marks it "not judged: needs X" instead of accusing its rule.
//
// The neutral options every List call carries (an empty Before, Limit 0,
// the caller's thread and namespace) are not prerequisites: a saver that
// breaks them fails almost every spec, and explain.json covers that.
// TestPrerequisitesDeclared checks, on the memory adapter, that no focused
// spec uses the behaviour of a rule outside its own and its prerequisites
// (see listBehaviours).

// prerequisites maps a rule to the rules that the fixtures of its focused
// specs rely on, besides the spec's own rules.
var prerequisites = map[string][]string{
	// Lists with a Before naming a checkpoint above every other.
	"LIST-LIMIT-2": {"LIST-BEFORE-1"},
	// Lists with Limit 0 (no limit): a cycle with LIST-LIMIT-2, so when
	// both fail both are judged and the explanations decide.
	"LIST-BEFORE-1": {"LIST-LIMIT-2"},
	// Filters and cuts, then limits.
	"LIST-LIMIT-1": {"LIST-FILTER-1", "LIST-BEFORE-1"},
	// Provokes a List error with a negative limit.
	"ERR-5": {"ERR-4"},
	// Round trips read back through GetTuple and List by checkpoint ID
	// (see readBack), and compare the two.
	"VALUE-1": roundTrip, "VALUE-2": roundTrip, "VALUE-3": roundTrip,
	"VALUE-6": roundTrip, "VALUE-7": roundTrip, "VALUE-8": roundTrip,
	"VALUE-11": roundTrip, "PUT-15": roundTrip, "WRITES-13": roundTrip,
}

// roundTrip are the prerequisites of a spec reading back through both
// GetTuple and List: List by checkpoint ID, returning GetTuple's tuples.
var roundTrip = []string{"LIST-SCOPE-4", "LIST-SCOPE-5"}

var (
	specPrereqMu sync.Mutex
	specPrereqs  = map[string][]string{} // by spec text
)

// checkNeeds registers a focused spec like check, with prerequisites of
// its own besides those of its rules: the rules its fixture relies on.
func checkNeeds(text string, needs []string, labels g.Labels, body func(ctx context.Context)) bool {
	specPrereqMu.Lock()
	specPrereqs[text] = needs
	specPrereqMu.Unlock()
	return check(text, labels, body)
}

// prerequisitesOf returns the prerequisites of the focused spec with the
// given text, without the rules it cites, in SPEC.md order.
func prerequisitesOf(text string) []string {
	ids := ruleIDsIn(text)
	specPrereqMu.Lock()
	out := slices.Clone(specPrereqs[text])
	specPrereqMu.Unlock()
	for _, id := range ids {
		out = append(out, prerequisites[id]...)
	}
	out = slices.DeleteFunc(out, func(p string) bool { return slices.Contains(ids, p) })
	if len(out) == 0 {
		return nil
	}
	return docOrder(out)
}

// needsTransitively reports whether rule from needs rule to through a
// chain of prerequisites.
func needsTransitively(from, to string) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range prerequisites[r] {
			if p == to {
				return true
			}
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return false
}

// judgePrerequisites marks as not judged every failed focused spec whose
// prerequisite failed: a rule of failed (when not nil), else any rule of a
// failed focused spec. A prerequisite that itself needs one of the spec's
// rules (a cycle) cannot tell the two apart: both stay judged, and the
// explanations decide.
func judgePrerequisites(specs []report.SpecResult, failed map[string]bool) {
	if failed == nil {
		failed = map[string]bool{}
		for _, s := range specs {
			if s.Status == report.StatusFailed && s.Broad == "" {
				for _, id := range s.Rules {
					failed[id] = true
				}
			}
		}
	}
	for i := range specs {
		s := &specs[i]
		if s.Broad != "" {
			continue
		}
		s.Prerequisites = prerequisitesOf(s.Text)
		if s.Status != report.StatusFailed {
			continue
		}
		var needs []string
		for _, p := range s.Prerequisites {
			if failed[p] && !slices.ContainsFunc(s.Rules, func(id string) bool { return needsTransitively(p, id) }) {
				needs = append(needs, p)
			}
		}
		if len(needs) > 0 {
			s.Status, s.Needs = report.StatusNotJudged, needs
			s.Message = "not judged: needs " + strings.Join(needs, ", ") + "\n" + s.Message
		}
	}
}

// Behaviours of a List call that belong to one rule: a spec may use them
// only when it cites that rule or declares it as a prerequisite.
const (
	behaviourUnknownBefore = "an unknown Before"
	behaviourFilter        = "a filter"
	behaviourCrossThread   = "a cross-thread list"
	behaviourNegativeLimit = "a negative limit"
)

// behaviourRules maps a behaviour to the rules that allow it; a rule ID
// ending in "-" allows every rule with that prefix.
var behaviourRules = map[string][]string{
	behaviourUnknownBefore: {"LIST-BEFORE-3"},
	behaviourFilter:        {"LIST-FILTER-"},
	behaviourCrossThread:   {"LIST-SCOPE-6"},
	behaviourNegativeLimit: {"ERR-4"},
}

// listBehaviours returns the rule-specific behaviours a List call uses.
// known reports whether o.Before names a checkpoint of the listed threads.
// A call the contract rejects (negative limit aside) uses nothing: an
// invalid filter value or identifier is the matter of the rule that
// rejects it.
func listBehaviours(o spec.ListOptions, known bool) []string {
	var out []string
	if o.Limit < 0 {
		return []string{behaviourNegativeLimit}
	}
	if spec.ValidateList(o) != nil {
		return nil
	}
	if o.Before != "" && !known {
		out = append(out, behaviourUnknownBefore)
	}
	if len(o.Filter) > 0 {
		out = append(out, behaviourFilter)
	}
	if o.ThreadID == "" {
		out = append(out, behaviourCrossThread)
	}
	return out
}

// behaviourAllowed reports whether the focused spec with the given text
// may use behaviour b.
func behaviourAllowed(text, b string) bool {
	allowed := append(ruleIDsIn(text), prerequisitesOf(text)...)
	for _, r := range behaviourRules[b] {
		for _, id := range allowed {
			if id == r || strings.HasSuffix(r, "-") && strings.HasPrefix(id, r) {
				return true
			}
		}
	}
	return false
}
