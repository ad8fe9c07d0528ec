package conformance

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	g "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// Report is the outcome of a suite run; see package report.
type Report = report.Report

// HarnessReport is the outcome of the suite for one saver; see package
// report.
type HarnessReport = report.HarnessReport

// Level summarises a harness's results; see package report.
type Level = report.Level

// Levels, from best to worst; see package report.
const (
	LevelFull    = report.LevelFull
	LevelBase    = report.LevelBase
	LevelPartial = report.LevelPartial
	LevelNone    = report.LevelNone
)

var (
	seedFlag      = flag.Uint64("checkpointkit.seed", 0, "seed of the model-based random specs (0: CHECKPOINTKIT_SEED or the default)")
	sequencesFlag = flag.Uint64("checkpointkit.sequences", 0, "random sequences per model-based spec (0: CHECKPOINTKIT_SEQUENCES or the default)")
	reportFlag    = flag.String("checkpointkit.report-json", "", "write the conformance report as JSON to this file (default: $CHECKPOINTKIT_REPORT_JSON)")

	lastMu     sync.Mutex
	lastReport *report.Report
)

// LastReport returns the report of the most recent suite run in this
// process, built by the ReportAfterSuite node that Describe registers.
func LastReport() (report.Report, bool) {
	lastMu.Lock()
	defer lastMu.Unlock()
	if lastReport == nil {
		return report.Report{}, false
	}
	return *lastReport, true
}

// afterSuite is the body of the ReportAfterSuite node.
func afterSuite(r types.Report) {
	rep := BuildReport(r)
	lastMu.Lock()
	lastReport = &rep
	lastMu.Unlock()
	report.WriteText(os.Stdout, rep)
	path := *reportFlag
	if path == "" {
		path = os.Getenv("CHECKPOINTKIT_REPORT_JSON")
	}
	if path != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(path, append(data, '\n'), 0o644)
		}
		if err != nil {
			g.Fail("writing the conformance report: " + err.Error())
		}
	}
	for _, h := range rep.Harnesses {
		if len(h.UncitedRules) > 0 || len(h.UnknownRules) > 0 {
			g.Fail(fmt.Sprintf("conformance self-test (%s): SPEC.md rules cited by no spec: %v; cited IDs missing from SPEC.md: %v",
				h.Name, h.UncitedRules, h.UnknownRules))
		}
	}
}

// BuildReport builds the conformance report from a Ginkgo suite report. It
// is what the ReportAfterSuite node registered by Describe uses; callers
// running the suite in their own way can call it from their own
// ReportAfterSuite.
func BuildReport(r types.Report) report.Report {
	registryMu.Lock()
	names := slices.Clone(registered)
	registryMu.Unlock()
	out := report.Report{Seed: seed()}
	for _, name := range names {
		var specs []types.SpecReport
		for _, s := range r.SpecReports {
			if s.LeafNodeType == types.NodeTypeIt && len(s.ContainerHierarchyTexts) > 0 && s.ContainerHierarchyTexts[0] == containerText(name) {
				specs = append(specs, s)
			}
		}
		out.Harnesses = append(out.Harnesses, buildHarnessReport(name, specs))
	}
	return out
}

// notJudgedTransport starts the message of a spec not judged because the
// transport could not carry one of its calls to the saver.
const notJudgedTransport = "not judged over this transport: "

// maxMessage caps the failure message kept per spec in the JSON report.
const maxMessage = 4096

// capMessage keeps the head and tail of a long message.
func capMessage(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	head, tail := s[:maxMessage*3/4], s[len(s)-maxMessage/4:]
	return fmt.Sprintf("%s\n… (%d bytes cut) …\n%s", strings.ToValidUTF8(head, ""), len(s)-len(head)-len(tail), strings.ToValidUTF8(tail, ""))
}

// specStatus maps a Ginkgo spec report to a status and its message.
func specStatus(s types.SpecReport) (report.Status, string) {
	msg := s.Failure.Message
	if s.Failure.ForwardedPanic != "" {
		msg = strings.TrimSpace(msg + "\npanic: " + s.Failure.ForwardedPanic)
	}
	switch {
	case s.State == types.SpecStatePassed:
		return report.StatusPassed, ""
	case s.State.Is(types.SpecStateFailureStates):
		return report.StatusFailed, msg
	case s.State == types.SpecStateSkipped && strings.HasPrefix(msg, notSupportedPrefix):
		return report.StatusNotSupported, msg
	case s.State == types.SpecStateSkipped && strings.HasPrefix(msg, differsPrefix):
		return report.StatusDiffers, strings.TrimPrefix(msg, differsPrefix)
	case s.State == types.SpecStateSkipped && msg != "":
		return report.StatusSkipped, msg
	}
	return report.StatusNotRun, "" // filtered out or pending
}

// location renders where a failure was raised, as file:line.
func location(s types.SpecReport) string {
	l := s.Failure.Location
	if l.FileName == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", filepath.Base(l.FileName), l.LineNumber)
}

func buildHarnessReport(name string, specs []types.SpecReport) report.HarnessReport {
	h := report.HarnessReport{Name: name, FailedRules: []string{}, PrimaryFailedRules: []string{}}
	texts := make([]string, 0, len(specs))
	for _, s := range specs {
		texts = append(texts, s.LeafNodeText)
		st, msg := specStatus(s)
		if st == report.StatusNotRun {
			continue
		}
		carried := st == report.StatusSkipped && strings.HasPrefix(msg, notCarriedSkip)
		if nc := notCarriedOf(s); nc != "" && (st == report.StatusPassed || st == report.StatusFailed || carried) {
			st, msg = report.StatusNotJudged, notJudgedTransport+nc+"\n"+strings.TrimPrefix(msg, notCarriedSkip)
		}
		res := report.SpecResult{
			Text: s.LeafNodeText, Rules: ruleIDsIn(s.LeafNodeText), Labels: s.Labels(), Status: st,
			Broad: broadGroup(s.LeafNodeText), Message: capMessage(msg),
		}
		if st == report.StatusFailed {
			res.Location = location(s)
			res.Attributed = attributedEntry(s)
		}
		if st == report.StatusFailed || st == report.StatusDiffers {
			res.Evidence = evidenceOf(s)
		}
		h.Specs = append(h.Specs, res)
	}
	h.UncitedRules, h.UnknownRules = citationProblems(texts)
	if fc, ok := faultCountsOf(specs); ok {
		h.Faults = &fc
	}
	h.Capabilities = capabilities(h.Specs)
	attribute(&h)
	h.SetLevels()
	return h
}

// capabilities tallies the specs per capability label, base ones first.
func capabilities(specs []report.SpecResult) []report.CapabilityResult {
	caps := map[string]*report.CapabilityResult{}
	for _, s := range specs {
		for _, l := range s.Labels {
			c := caps[l]
			if c == nil {
				c = &report.CapabilityResult{Name: l, Optional: report.IsOptional(l)}
				caps[l] = c
			}
			c.Add(s.Status)
			if s.Status == report.StatusFailed {
				c.FailedRules = append(c.FailedRules, s.Rules...)
			}
			if s.Status == report.StatusSkipped && !slices.Contains(c.SkipReasons, s.Message) {
				c.SkipReasons = append(c.SkipReasons, s.Message)
			}
		}
	}
	var out []report.CapabilityResult
	for _, l := range capabilityOrder(caps) {
		c := caps[l]
		if c == nil {
			c = &report.CapabilityResult{Name: l, Optional: report.IsOptional(l)}
		}
		c.Status = c.Counts.Status()
		slices.Sort(c.FailedRules)
		c.FailedRules = slices.Compact(c.FailedRules)
		out = append(out, *c)
	}
	return out
}

// capabilityOrder lists the known capabilities, then any other label
// found, sorted.
func capabilityOrder[V any](found map[string]V) []string {
	order := append(slices.Clone(report.BaseCapabilities), report.OptionalCapabilities...)
	var extra []string
	for l := range found {
		if !slices.Contains(order, l) {
			extra = append(extra, l)
		}
	}
	slices.Sort(extra)
	return append(order, extra...)
}
