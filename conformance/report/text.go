package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Limits of the printed report; the JSON report keeps more.
const (
	printedMessageLines = 6
	printedLineWidth    = 160
)

// WriteText prints, per harness: the two tier verdicts, the root causes
// (rule, tier, first failing spec, message), the strict rules where the
// saver follows a LangGraph behaviour instead, the rules that failed only
// as a consequence, and the capability table.
func WriteText(w io.Writer, rep Report) {
	for _, h := range rep.Harnesses {
		writeHarness(w, h, rep.Seed)
	}
}

func writeHarness(w io.Writer, h HarnessReport, seed uint64) {
	fmt.Fprintf(w, "\ncheckpointkit conformance report: %s (seed %d)\n", h.Name, seed)
	fmt.Fprintf(w, "  LangGraph core: %s   strict: %s\n", h.CoreLevel, strictVerdict(h))
	if h.Faults != nil {
		fmt.Fprintf(w, "  faults: %s\n", h.Faults)
	}
	if len(h.UncitedRules)+len(h.UnknownRules) > 0 {
		fmt.Fprintf(w, "  SELF-TEST FAILED: uncited rules %v, unknown cited IDs %v\n", h.UncitedRules, h.UnknownRules)
	}
	if len(h.PrimaryFailedRules) > 0 {
		fmt.Fprintf(w, "  root causes, fix these first (%d):\n", len(h.PrimaryFailedRules))
		for _, id := range h.PrimaryFailedRules {
			writeRootCause(w, h, id)
		}
	}
	var differs, notJudged []RuleResult
	var explained []string
	for _, r := range h.Rules {
		switch r.Status {
		case StatusNotJudged:
			notJudged = append(notJudged, r)
		case StatusDiffers:
			differs = append(differs, r)
		case StatusExplained:
			explained = append(explained, r.ID)
		}
	}
	if len(differs) > 0 {
		fmt.Fprintf(w, "  strict rules where the saver does what a LangGraph saver does instead (%d):\n", len(differs))
		for _, r := range differs {
			fmt.Fprintf(w, "    %-18s differs: %s\n", r.ID, r.Behaviour)
		}
	}
	if len(notJudged) > 0 {
		fmt.Fprintf(w, "  not judged, a prerequisite failed (%d):\n", len(notJudged))
		for _, r := range notJudged {
			if len(r.Needs) > 0 {
				fmt.Fprintf(w, "    %-18s not judged: needs %s\n", r.ID, strings.Join(r.Needs, ", "))
			} else {
				fmt.Fprintf(w, "    %-18s not judged over this transport\n", r.ID)
			}
		}
	}
	if len(explained) > 0 {
		fmt.Fprintf(w, "  also failed, as consequences of the root causes (%d):\n    %s\n", len(explained), wrap(strings.Join(explained, " "), "    "))
	}
	writeCapabilities(w, h)
	var n Counts
	notRun := 0
	tiers := map[Tier]int{}
	for _, r := range h.Rules {
		tiers[r.Tier]++
		switch r.Status {
		case StatusPassed, StatusExplained:
			n.Passed++
		case StatusFailed:
			n.Failed++
		case StatusDiffers:
			n.Differs++
		case StatusSkipped:
			n.Skipped++
		case StatusNotSupported:
			n.NotSupported++
		case StatusNotJudged:
			n.NotJudged++
		default:
			notRun++
		}
	}
	fmt.Fprintf(w, "  rules: %d passed, %d failed (root causes), %d not judged, %d differ, %d skipped, %d not supported, %d not run; %d in SPEC.md (%d core, %d strict); %d specs\n",
		n.Passed, n.Failed, n.NotJudged, n.Differs, n.Skipped, n.NotSupported, notRun, len(h.Rules), tiers[TierCore], tiers[TierStrict], len(h.Specs))
}

// strictVerdict is the strict level, with the differing rules named.
func strictVerdict(h HarnessReport) string {
	var ids []string
	for _, r := range h.Rules {
		if r.Tier == TierStrict && r.Status == StatusDiffers {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return string(h.StrictLevel)
	}
	return fmt.Sprintf("%s (differs as a LangGraph saver does: %s)", h.StrictLevel, strings.Join(ids, " "))
}

// writeRootCause prints one root cause with its first failing spec.
func writeRootCause(w io.Writer, h HarnessReport, id string) {
	tier := Tier("?")
	if r := h.Rule(id); r != nil {
		tier = r.Tier
	}
	s := firstEvidence(h, id)
	if s == nil {
		fmt.Fprintf(w, "    %-18s %-6s (no failing spec recorded)\n", id, tier)
		return
	}
	fmt.Fprintf(w, "    %-18s %-6s %s\n", id, tier, clip(s.Text, printedLineWidth))
	writeEvidence(w, s)
	lines := strings.Split(strings.TrimSpace(s.Message), "\n")
	for i, l := range lines {
		if i == printedMessageLines {
			fmt.Fprintf(w, "        ... %d more lines (the JSON report has the message)\n", len(lines)-i)
			break
		}
		fmt.Fprintf(w, "        %s\n", clip(l, printedLineWidth))
	}
}

// writeEvidence prints what a root cause's first failing spec observed:
// the call, what it returned, the expected and actual values, and the
// prerequisites the spec had (all of which passed, or it would not be a
// root cause, unless they need each other).
func writeEvidence(w io.Writer, s *SpecResult) {
	if ev := s.Evidence; ev != nil {
		if ev.Call != "" {
			fmt.Fprintf(w, "        first failing call: %s -> %s\n", clip(ev.Call, printedLineWidth-40), ev.Result)
		} else if ev.Operation != "" {
			fmt.Fprintf(w, "        observed: %s, %s (%s)\n", ev.Operation, ev.Observation, clip(ev.Result, printedLineWidth-40))
		}
		if ev.Expected != "" || ev.Actual != "" {
			fmt.Fprintf(w, "        expected: %s\n", clip(oneLine(ev.Expected), printedLineWidth-20))
			fmt.Fprintf(w, "        actual:   %s\n", clip(oneLine(ev.Actual), printedLineWidth-20))
		}
	}
	if len(s.Prerequisites) > 0 {
		fmt.Fprintf(w, "        prerequisites: %s\n", strings.Join(s.Prerequisites, ", "))
	}
}

// oneLine joins the lines of s with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstEvidence returns the first failed spec that makes id a root cause:
// a focused spec citing it, else a broad spec attributed to it.
func firstEvidence(h HarnessReport, id string) *SpecResult {
	for i, s := range h.Specs {
		if s.Status == StatusFailed && s.Broad == "" && slices.Contains(s.Rules, id) {
			return &h.Specs[i]
		}
	}
	for i, s := range h.Specs {
		if s.Status == StatusFailed && s.Broad != "" && len(s.ExplainedBy) == 0 && slices.Contains(s.Attributed, id) {
			return &h.Specs[i]
		}
	}
	return nil
}

func writeCapabilities(w io.Writer, h HarnessReport) {
	fmt.Fprintf(w, "  %-16s %-14s %6s %6s %7s %7s %13s  %s\n", "capability", "status", "passed", "failed", "differs", "skipped", "not supported", "failing rules / skip reasons")
	for _, c := range h.Capabilities {
		name := c.Name
		if c.Optional {
			name += "*"
		}
		notes := strings.Join(c.FailedRules, " ")
		if len(c.SkipReasons) > 0 {
			if notes != "" {
				notes += "; "
			}
			notes += strings.Join(c.SkipReasons, "; ")
		}
		fmt.Fprintf(w, "  %-16s %-14s %6d %6d %7d %7d %13d  %s\n", name, c.Status, c.Passed, c.Failed, c.Differs, c.Skipped, c.NotSupported, clip(notes, printedLineWidth))
	}
	fmt.Fprintf(w, "  (* optional capability)\n")
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// wrap breaks a space-separated list into lines of at most
// printedLineWidth, indenting continuation lines.
func wrap(s, indent string) string {
	var b strings.Builder
	width := 0
	for i, f := range strings.Fields(s) {
		if i > 0 {
			if width+1+len(f) > printedLineWidth-len(indent) {
				b.WriteString("\n" + indent)
				width = 0
			} else {
				b.WriteByte(' ')
				width++
			}
		}
		b.WriteString(f)
		width += len(f)
	}
	return b.String()
}
