package conformance

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Rule is one numbered rule of spec/SPEC.md.
type Rule struct {
	// ID is the stable rule ID, e.g. "LIST-BEFORE-2".
	ID string `json:"id"`
	// Tier is the rule's tier, core or strict.
	Tier report.Tier `json:"tier"`
	// Text is the rule's statement, on one line.
	Text string `json:"text"`
	// Section is the capability label of the rule's section in SPEC.md.
	Section string `json:"section"`
}

// sectionLabel matches the capability label in a section heading of
// SPEC.md: "## Put — label `put`".
var sectionLabel = regexp.MustCompile("^#+ .*label `([a-z_]+)`")

// ruleLine matches the first line of a rule in SPEC.md:
// "- **ID** (tier) text"; the tier is optional here and required by the
// package's tests.
var ruleLine = regexp.MustCompile(`^- \*\*([A-Z]+(?:-[A-Z]+)*-[0-9]+)\*\*\s*(?:\((core|strict)\)\s*)?(.*)$`)

// citation matches a rule ID cited in a spec text: "[PUT-1]".
var citation = regexp.MustCompile(`\[([A-Z]+(?:-[A-Z]+)*-[0-9]+)\]`)

var (
	rulesOnce sync.Once
	rules     []Rule
)

// Rules returns the rules of spec/SPEC.md in document order.
func Rules() []Rule {
	rulesOnce.Do(func() { rules = parseRules(spec.SpecMarkdown()) })
	return slices.Clone(rules)
}

// tierOf returns the tier of rule id, or "" for an unknown ID.
func tierOf(id string) report.Tier {
	for _, r := range Rules() {
		if r.ID == id {
			return r.Tier
		}
	}
	return ""
}

// parseRules extracts the rules of a SPEC.md text. A rule's statement runs
// from its "- **ID**" line to the next blank line, list item or heading.
func parseRules(md string) []Rule {
	var out []Rule
	cur := -1
	section := ""
	for line := range strings.Lines(md) {
		line = strings.TrimRight(line, "\r\n")
		if m := sectionLabel.FindStringSubmatch(line); m != nil {
			section = m[1]
		}
		if m := ruleLine.FindStringSubmatch(line); m != nil {
			out = append(out, Rule{ID: m[1], Tier: report.Tier(m[2]), Text: m[3], Section: section})
			cur = len(out) - 1
			continue
		}
		t := strings.TrimSpace(line)
		if cur < 0 || t == "" || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "<!--") {
			cur = -1
			continue
		}
		out[cur].Text += " " + t
	}
	return out
}

// ruleIDsIn returns the rule IDs cited in a spec text, in order.
func ruleIDsIn(text string) []string {
	var ids []string
	for _, m := range citation.FindAllStringSubmatch(text, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// citationProblems compares the rule IDs cited by spec texts with the rules
// of SPEC.md: uncited lists rules no spec cites, unknown lists cited IDs
// that SPEC.md does not define. Both are sorted.
func citationProblems(texts []string) (uncited, unknown []string) {
	defined := map[string]bool{}
	for _, r := range Rules() {
		defined[r.ID] = true
	}
	cited := map[string]bool{}
	for _, t := range texts {
		for _, id := range ruleIDsIn(t) {
			cited[id] = true
			if !defined[id] {
				unknown = append(unknown, id)
			}
		}
	}
	for id := range defined {
		if !cited[id] {
			uncited = append(uncited, id)
		}
	}
	slices.Sort(uncited)
	slices.Sort(unknown)
	return uncited, slices.Compact(unknown)
}
