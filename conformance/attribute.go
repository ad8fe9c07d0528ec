package conformance

import (
	_ "embed"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	g "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// Root causes. Most specs are focused: they cite one rule, or a few, and
// fail only when a saver breaks one of them. Broad specs (the model-based
// random sequences, the generated List matrix, the engine scenarios and
// golden traces) cite many rules and fail for almost any fault. After a
// run, the report names as root causes the rules of failed focused specs;
// a failed broad spec adds a root cause only when no focused failure (or
// differing strict rule) explains it. A focused result explains a broad
// failure when a mutant breaking its rule is known to fail that broad spec
// too: explain.json lists those rules per broad spec group. It is written
// by the mutants package's tests (TestEngineEvidence for the engine groups,
// TestKillMatrix -mutants.full -mutants.explain for the others).

//go:embed explain.json
var explainJSON []byte

// explainRules maps a broad spec group to the rules whose failure explains
// a failure of the group's specs.
var explainRules = sync.OnceValue(func() map[string][]string {
	var m map[string][]string
	if err := json.Unmarshal(explainJSON, &m); err != nil {
		panic("conformance: explain.json: " + err.Error())
	}
	return m
})

// broadSpec describes a broad spec.
type broadSpec struct {
	// group names the spec's group in explain.json.
	group string
	// attributed are the rules a failure is attributed to when nothing
	// explains it and the spec recorded nothing more precise.
	attributed []string
}

var (
	broadMu    sync.Mutex
	broadSpecs = map[string]broadSpec{} // by spec text
)

// checkBroad registers a broad spec of the given group; see check.
func checkBroad(text, group string, labels g.Labels, attributed []string, body func(ctx g.SpecContext)) bool {
	broadMu.Lock()
	broadSpecs[text] = broadSpec{group: group, attributed: attributed}
	broadMu.Unlock()
	return g.It(text, labels, g.SpecTimeout(specTimeout), body)
}

// broadGroup returns the group of a broad spec, or "" for a focused one.
func broadGroup(text string) string {
	broadMu.Lock()
	defer broadMu.Unlock()
	return broadSpecs[text].group
}

// attributedEntryName names the report entry in which a failing broad spec
// records the rules its failure points at.
const attributedEntryName = "checkpointkit attributed rules"

// attributeFailure records, from inside a broad spec that is about to
// fail, the rules the failure points at.
func attributeFailure(ids ...string) {
	g.AddReportEntry(attributedEntryName, strings.Join(ids, " "))
}

// attributedEntry returns the rules a failed broad spec recorded.
func attributedEntry(s types.SpecReport) []string {
	for _, e := range s.ReportEntries {
		if e.Name == attributedEntryName {
			return strings.Fields(e.Value.String())
		}
	}
	return nil
}

// attribute finds the root causes of h's failures and fills the rule rows
// and h.PrimaryFailedRules, h.FailedRules.
func attribute(h *report.HarnessReport) {
	roots := map[string]bool{}
	differs := map[string]string{}
	for _, s := range h.Specs {
		switch {
		case s.Status == report.StatusFailed && s.Broad == "":
			for _, id := range s.Rules {
				roots[id] = true
			}
		case s.Status == report.StatusDiffers:
			for _, id := range s.Rules {
				if _, ok := differs[id]; !ok {
					differs[id] = s.Message
				}
			}
		}
	}
	explainers := maps.Clone(roots)
	for id := range differs {
		explainers[id] = true
	}
	explained := map[string][]string{} // rule -> root causes explaining its broad failures
	for i := range h.Specs {
		s := &h.Specs[i]
		if s.Status != report.StatusFailed || s.Broad == "" {
			continue
		}
		deps, known := explainRules()[s.Broad]
		for id := range explainers {
			if !known || slices.Contains(deps, id) {
				s.ExplainedBy = append(s.ExplainedBy, id)
			}
		}
		if len(s.ExplainedBy) > 0 {
			s.ExplainedBy = docOrder(s.ExplainedBy)
			for _, id := range s.Rules {
				explained[id] = append(explained[id], s.ExplainedBy...)
			}
			continue
		}
		if len(s.Attributed) == 0 {
			broadMu.Lock()
			s.Attributed = broadSpecs[s.Text].attributed
			broadMu.Unlock()
		}
		if len(s.Attributed) == 0 {
			s.Attributed = s.Rules
		}
		for _, id := range s.Attributed {
			roots[id] = true
		}
	}

	failed := map[string]bool{}
	for _, s := range h.Specs {
		if s.Status == report.StatusFailed {
			for _, id := range s.Rules {
				failed[id] = true
			}
		}
	}
	for id := range roots {
		failed[id] = true
	}
	h.FailedRules = slices.Sorted(maps.Keys(failed))
	if h.FailedRules == nil {
		h.FailedRules = []string{}
	}
	h.PrimaryFailedRules = docOrder(slices.Collect(maps.Keys(roots)))

	for _, r := range Rules() {
		row := report.RuleResult{ID: r.ID, Tier: r.Tier, Capability: ruleCapability(r, h.Specs)}
		var rest report.Counts
		for _, s := range h.Specs {
			if !slices.Contains(s.Rules, r.ID) || skippedForAnother(s, r.ID) {
				continue
			}
			row.Add(s.Status)
			if !(s.Status == report.StatusFailed && len(s.ExplainedBy) > 0) {
				rest.Add(s.Status)
			}
		}
		switch st := rest.Status(); {
		case roots[r.ID]:
			row.Status = report.StatusFailed
		case differs[r.ID] != "":
			row.Status, row.Differs = report.StatusDiffers, differs[r.ID]
		case len(explained[r.ID]) > 0 && (st == report.StatusPassed || st == report.StatusNotRun):
			row.Status, row.ExplainedBy = report.StatusExplained, docOrder(explained[r.ID])
		default:
			row.Status = st
		}
		h.Rules = append(h.Rules, row)
	}
}

// skippedForAnother reports whether s is a broad spec that the harness
// skipped for a rule other than id: the skip then says nothing about id.
func skippedForAnother(s report.SpecResult, id string) bool {
	if s.Status != report.StatusSkipped || s.Broad == "" {
		return false
	}
	key, _, _ := strings.Cut(strings.TrimPrefix(s.Message, skipPrefix), ":")
	return len(ruleIDsIn("["+key+"]")) == 1 && key != id
}

// ruleCapability is the label under which rule r is checked: the first
// capability label of its focused specs, else of its broad specs, else the
// label of its section in SPEC.md.
func ruleCapability(r Rule, specs []report.SpecResult) string {
	for _, broad := range []bool{false, true} {
		labels := map[string]bool{}
		for _, s := range specs {
			if (s.Broad != "") == broad && slices.Contains(s.Rules, r.ID) {
				for _, l := range s.Labels {
					labels[l] = true
				}
			}
		}
		for _, l := range capabilityOrder(labels) {
			if labels[l] {
				return l
			}
		}
	}
	return r.Section
}

// docOrder sorts rule IDs in SPEC.md order, unknown IDs last, without
// duplicates.
func docOrder(ids []string) []string {
	pos := map[string]int{}
	for i, r := range Rules() {
		pos[r.ID] = i
	}
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b string) int {
		pa, oka := pos[a]
		pb, okb := pos[b]
		switch {
		case oka && okb:
			return pa - pb
		case oka:
			return -1
		case okb:
			return 1
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}
