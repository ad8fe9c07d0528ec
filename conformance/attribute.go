package conformance

import (
	"cmp"
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
// fail only when a saver breaks one of them, or a rule their scenario
// relies on. Broad specs (the model-based random sequences, the generated
// List matrix, the engine scenarios and golden traces) cite many rules and
// fail for almost any fault. After a run, the report names as root causes
// the rules of failed focused specs that no other failure explains; a
// failed broad spec adds a root cause only when no failure of a focused
// spec (or a rule that differs, or an earlier broad root cause) explains it.
//
// Rule R explains a failure when a mutant breaking R (package
// conformance/mutants) is known to cause that failure: explain.json lists,
// per broad spec group and per rule, the rules whose mutants fail them. A
// failure explained both ways (R explains X and X explains R) is not
// explained: both stay root causes. For a focused spec, being known is not
// enough: explained means caused, so this run's failure must look the same
// as the cause, by its evidence (see evidence.go): the same operation and
// observation as a failure of R's own specs, or as X's specs showed under
// R's mutants (explain.json's "signatures"). Otherwise X stays a root: a
// missed explanation is preferred to a wrong one. `go test ./conformance/mutants -run
// TestKillMatrix -mutants.full -mutants.explain=../explain.json` rewrites
// the table.

//go:embed explain.json
var explainJSON []byte

// explanations is the decoded explain.json.
type explanations struct {
	// Broad maps a broad spec group to the rules whose failure explains a
	// failure of its specs.
	Broad map[string][]string `json:"broad"`
	// Focused maps a rule to the rules whose failure explains a failure of
	// a focused spec citing it.
	Focused map[string][]string `json:"focused"`
	// Signatures maps a rule X and a rule R of Focused[X] to how X's
	// focused specs failed under R's mutants: "operation/observation" of
	// their evidence (see report.Evidence).
	Signatures map[string]map[string][]string `json:"signatures"`
}

var explainTable = sync.OnceValue(func() explanations {
	var x explanations
	if err := json.Unmarshal(explainJSON, &x); err != nil {
		panic("conformance: explain.json: " + err.Error())
	}
	return x
})

// explains reports whether a failure of rule r explains one of rule x's
// focused specs, one way only.
func (x explanations) explains(r, x2 string) bool {
	return r != x2 && slices.Contains(x.Focused[x2], r) && !slices.Contains(x.Focused[r], x2)
}

// seenUnder reports whether every failed focused spec citing x (and not
// r) failed the way focused specs of x failed under a mutant of r: the
// same operation with the same observation. A failed spec citing both is
// r's own failure.
func (x explanations) seenUnder(specs []report.SpecResult, r, id string) bool {
	sigs := x.Signatures[id][r]
	for _, s := range specs {
		if s.Broad != "" || s.Status != report.StatusFailed || !slices.Contains(s.Rules, id) || slices.Contains(s.Rules, r) {
			continue
		}
		if s.Evidence == nil || !slices.Contains(sigs, s.Evidence.Signature()) {
			return false
		}
	}
	return true
}

// broadSpec describes a broad spec.
type broadSpec struct {
	// group names the spec's group in explain.json.
	group string
	// attributed are the rules a failure is attributed to when nothing
	// explains it and the spec recorded nothing more precise.
	attributed []string
	// order is the registration order: broad specs are judged in it, so
	// that an engine scenario that builds on an earlier one's paths can be
	// explained by the earlier one's root cause.
	order int
}

var (
	broadMu    sync.Mutex
	broadSpecs = map[string]broadSpec{} // by spec text
)

// checkBroad registers a broad spec of the given group; see check.
func checkBroad(text, group string, labels g.Labels, attributed []string, body func(ctx g.SpecContext)) bool {
	broadMu.Lock()
	if _, ok := broadSpecs[text]; !ok {
		broadSpecs[text] = broadSpec{group: group, attributed: attributed, order: len(broadSpecs)}
	}
	broadMu.Unlock()
	return g.It(text, labels, g.SpecTimeout(specTimeout), body)
}

// engineLast is 0 for an engine spec and 1 for any other broad spec.
func engineLast(s *report.SpecResult) int {
	if strings.HasPrefix(s.Broad, "engine ") {
		return 0
	}
	return 1
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
//
// Prerequisites are judged twice: first against every rule whose focused
// specs failed, then, when a spec was left unjudged for a prerequisite that
// turned out to fail only as a consequence (LIST-FILTER-1's spec failing on
// a listing's order), against the root causes of the first pass.
func attribute(h *report.HarnessReport) {
	orig := cloneSpecs(h.Specs)
	attributeWith(h, nil)
	roots := map[string]bool{}
	for _, id := range h.PrimaryFailedRules {
		roots[id] = true
	}
	again := slices.ContainsFunc(h.Specs, func(s report.SpecResult) bool {
		return slices.ContainsFunc(s.Needs, func(id string) bool { return !roots[id] })
	})
	if again {
		h.Specs, h.Rules = orig, nil
		attributeWith(h, roots)
	}
}

// cloneSpecs copies specs deeply enough for attributeWith to run again.
func cloneSpecs(specs []report.SpecResult) []report.SpecResult {
	out := slices.Clone(specs)
	for i := range out {
		out[i].ExplainedBy = slices.Clone(out[i].ExplainedBy)
		out[i].Attributed = slices.Clone(out[i].Attributed)
	}
	return out
}

// attributeWith is one pass of attribute; failedPrereqs, when not nil, are
// the prerequisites that count as failed.
func attributeWith(h *report.HarnessReport, failedPrereqs map[string]bool) {
	x := explainTable()
	judgePrerequisites(h.Specs, failedPrereqs)
	focused := map[string]bool{} // rules of failed focused specs
	differs := map[string]string{}
	for _, s := range h.Specs {
		switch {
		case s.Status == report.StatusFailed && s.Broad == "":
			for _, id := range s.Rules {
				focused[id] = true
			}
		case s.Status == report.StatusDiffers:
			for _, id := range s.Rules {
				if _, ok := differs[id]; !ok {
					differs[id] = s.Message
				}
			}
		}
	}
	evidence := maps.Clone(focused)
	for id := range differs {
		evidence[id] = true
	}
	// edges[x] are the rules whose failure can have caused x's, this run.
	edges := map[string][]string{}
	for id := range focused {
		for r := range evidence {
			// The mutants say r can make id's specs fail; it explains
			// this run's failures only when they look the same.
			if x.explains(r, id) && (sameCause(h.Specs, r, id) || x.seenUnder(h.Specs, r, id)) {
				edges[id] = append(edges[id], r)
			}
		}
	}
	roots, explained := rootsOf(focused, differs, edges)
	var broad []*report.SpecResult
	for i := range h.Specs {
		if s := &h.Specs[i]; s.Status == report.StatusFailed && s.Broad != "" {
			broad = append(broad, s)
		}
	}
	// Engine specs first: their root causes are specific, and may explain
	// the List matrix or the model (a List path only the engine takes).
	broadMu.Lock()
	slices.SortFunc(broad, func(a, b *report.SpecResult) int {
		return cmp.Or(cmp.Compare(engineLast(a), engineLast(b)), broadSpecs[a.Text].order-broadSpecs[b.Text].order)
	})
	broadMu.Unlock()
	for _, s := range broad {
		deps, known := x.Broad[s.Broad]
		for id := range evidence {
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
			// A later broad spec (an engine scenario that builds on an
			// earlier one) may be explained by this root cause.
			evidence[id] = true
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
			if !slices.Contains(s.Rules, r.ID) || skippedForAnother(s, r.ID) || skippedForOptional(s, row.Capability) {
				continue
			}
			row.Add(s.Status)
			if s.Status != report.StatusFailed {
				rest.Add(s.Status)
			}
			row.Needs = append(row.Needs, s.Needs...)
		}
		switch {
		case roots[r.ID]:
			row.Status = report.StatusFailed
		case differs[r.ID] != "":
			row.Status, row.Behaviour = report.StatusDiffers, differs[r.ID]
		case len(explained[r.ID]) > 0:
			by := slices.DeleteFunc(docOrder(explained[r.ID]), func(id string) bool { return id == r.ID })
			row.Status, row.ExplainedBy = report.StatusExplained, by
		default:
			row.Status = rest.Status()
		}
		if row.Status == report.StatusNotJudged {
			row.Needs = docOrder(row.Needs)
		} else {
			row.Needs = nil
		}
		h.Rules = append(h.Rules, row)
	}
}

// rootsOf decides which failed focused rules are root causes. A rule is
// explained only by a root cause or a differing rule: a rule that failed
// as a consequence explains nothing (an input fault's consequence must not
// swallow a race). Rules left undecided, explained only by one another,
// become root causes from the sources of that tangle on (all of them when
// it is a cycle), and the explanations are drawn again.
func rootsOf(failed map[string]bool, differs map[string]string, edges map[string][]string) (roots map[string]bool, explained map[string][]string) {
	roots, explained = map[string]bool{}, map[string][]string{}
	undecided := map[string]bool{}
	for id := range failed {
		if len(edges[id]) == 0 {
			roots[id] = true
		} else {
			undecided[id] = true
		}
	}
	for len(undecided) > 0 {
		for changed := true; changed; {
			changed = false
			for _, id := range slices.Sorted(maps.Keys(undecided)) {
				for _, r := range edges[id] {
					if roots[r] || differs[r] != "" {
						explained[id] = append(explained[id], r)
					}
				}
				if len(explained[id]) > 0 {
					delete(undecided, id)
					changed = true
				}
			}
		}
		// What is left is explained only by other undecided rules: their
		// sources become root causes (a cycle's every rule).
		var sources []string
		for id := range undecided {
			if !slices.ContainsFunc(edges[id], func(r string) bool { return undecided[r] }) {
				sources = append(sources, id)
			}
		}
		if len(sources) == 0 {
			sources = slices.Collect(maps.Keys(undecided))
		}
		for _, id := range sources {
			roots[id] = true
			delete(undecided, id)
		}
	}
	return roots, explained
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

// skippedForOptional reports whether the harness skipped s for an optional
// capability's label other than capability, the one its rule is checked
// under: CONC-4's race with Prune skipped along with prune says nothing
// about CONC-4's races with the base methods.
func skippedForOptional(s report.SpecResult, capability string) bool {
	if s.Status != report.StatusSkipped {
		return false
	}
	key, _, _ := strings.Cut(strings.TrimPrefix(s.Message, skipPrefix), ":")
	return key != capability && report.IsOptional(key)
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
