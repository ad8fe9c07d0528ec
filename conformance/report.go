package conformance

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	g "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// Report is the outcome of one suite run: one HarnessReport per harness
// registered with Describe or Run.
type Report struct {
	// Seed is the seed of the model-based random specs.
	Seed uint64 `json:"seed"`
	// Harnesses holds one report per harness, in registration order.
	Harnesses []HarnessReport `json:"harnesses"`
}

// Harness returns the report of the named harness, or nil.
func (r Report) Harness(name string) *HarnessReport {
	for i := range r.Harnesses {
		if r.Harnesses[i].Name == name {
			return &r.Harnesses[i]
		}
	}
	return nil
}

// HarnessReport is the outcome of the suite for one saver.
type HarnessReport struct {
	Name  string `json:"name"`
	Level Level  `json:"level"`
	// Capabilities has one row per capability label, base ones first.
	Capabilities []CapabilityResult `json:"capabilities"`
	// Rules has one row per rule ID of SPEC.md, in document order.
	Rules []RuleResult `json:"rules"`
	// FailedRules lists, sorted, every rule ID cited by a failed spec.
	FailedRules []string `json:"failed_rules"`
	// Specs has one row per spec that was not filtered out.
	Specs []SpecResult `json:"specs"`
	// UncitedRules are SPEC.md rules that no spec cites; UnknownRules are
	// cited IDs that SPEC.md does not define. Both must be empty.
	UncitedRules []string `json:"uncited_rules,omitempty"`
	UnknownRules []string `json:"unknown_rules,omitempty"`
}

// Complete reports whether every capability ran: none was filtered out by
// a label filter or focus. A level below FULL only means something for a
// complete run.
func (h HarnessReport) Complete() bool {
	for _, c := range h.Capabilities {
		if c.Status == StatusNotRun {
			return false
		}
	}
	return true
}

// Status is the outcome of a capability, rule or spec.
type Status string

// Statuses, from best to worst. A capability or rule is failed when any of
// its specs failed, skipped when a harness skipped some and none failed,
// not_supported when the saver lacks the optional interface, not_run when
// all its specs were filtered out (e.g. by -ginkgo.label-filter).
const (
	StatusPassed       Status = "passed"
	StatusNotSupported Status = "not_supported"
	StatusSkipped      Status = "skipped"
	StatusNotRun       Status = "not_run"
	StatusFailed       Status = "failed"
)

// Counts tallies spec outcomes.
type Counts struct {
	Passed       int `json:"passed"`
	Failed       int `json:"failed"`
	Skipped      int `json:"skipped"`
	NotSupported int `json:"not_supported"`
}

// CapabilityResult is the outcome of the specs labelled with one capability.
type CapabilityResult struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional"`
	Status   Status `json:"status"`
	Counts
	// FailedRules lists the rule IDs cited by failed specs of the capability.
	FailedRules []string `json:"failed_rules,omitempty"`
	// SkipReasons lists the distinct reasons of harness skips.
	SkipReasons []string `json:"skip_reasons,omitempty"`
}

// RuleResult is the outcome of the specs citing one rule ID.
type RuleResult struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	Counts
}

// SpecResult is the outcome of one spec.
type SpecResult struct {
	Text   string   `json:"text"`
	Rules  []string `json:"rules"`
	Labels []string `json:"labels"`
	Status Status   `json:"status"`
	// Message is the failure or skip message, if any.
	Message string `json:"message,omitempty"`
}

// Capability labels. Base capabilities must pass for level BASE; optional
// ones may be not supported.
var (
	BaseCapabilities     = []string{"put", "put_writes", "get_tuple", "list", "delete_thread", "concurrency", "errors", "model"}
	OptionalCapabilities = []string{"copy_thread", "delete_for_runs", "prune", "versions"}
)

var (
	seedFlag      = flag.Uint64("checkpointkit.seed", 0, "seed of the model-based random specs (0: CHECKPOINTKIT_SEED or the default)")
	sequencesFlag = flag.Uint64("checkpointkit.sequences", 0, "random sequences per model-based spec (0: CHECKPOINTKIT_SEQUENCES or the default)")
	reportFlag    = flag.String("checkpointkit.report-json", "", "write the conformance report as JSON to this file (default: $CHECKPOINTKIT_REPORT_JSON)")

	lastMu     sync.Mutex
	lastReport *Report
)

// LastReport returns the report of the most recent suite run in this
// process, built by the ReportAfterSuite node that Describe registers.
func LastReport() (Report, bool) {
	lastMu.Lock()
	defer lastMu.Unlock()
	if lastReport == nil {
		return Report{}, false
	}
	return *lastReport, true
}

// afterSuite is the body of the ReportAfterSuite node.
func afterSuite(r types.Report) {
	rep := BuildReport(r)
	lastMu.Lock()
	lastReport = &rep
	lastMu.Unlock()
	WriteText(os.Stdout, rep)
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
func BuildReport(r types.Report) Report {
	registryMu.Lock()
	names := slices.Clone(registered)
	registryMu.Unlock()
	out := Report{Seed: seed()}
	for _, name := range names {
		var specs []types.SpecReport
		var texts []string
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt || len(s.ContainerHierarchyTexts) == 0 || s.ContainerHierarchyTexts[0] != containerText(name) {
				continue
			}
			specs = append(specs, s)
			texts = append(texts, s.LeafNodeText)
		}
		out.Harnesses = append(out.Harnesses, buildHarnessReport(name, specs, texts))
	}
	return out
}

func specStatus(s types.SpecReport) (Status, string) {
	msg := s.Failure.Message
	switch {
	case s.State == types.SpecStatePassed:
		return StatusPassed, ""
	case s.State.Is(types.SpecStateFailureStates):
		return StatusFailed, msg
	case s.State == types.SpecStateSkipped && strings.HasPrefix(msg, notSupportedPrefix):
		return StatusNotSupported, msg
	case s.State == types.SpecStateSkipped && msg != "":
		return StatusSkipped, msg
	}
	return StatusNotRun, "" // filtered out or pending
}

func (c *Counts) add(st Status) {
	switch st {
	case StatusPassed:
		c.Passed++
	case StatusFailed:
		c.Failed++
	case StatusSkipped:
		c.Skipped++
	case StatusNotSupported:
		c.NotSupported++
	}
}

func (c Counts) status() Status {
	switch {
	case c.Failed > 0:
		return StatusFailed
	case c.Skipped > 0:
		return StatusSkipped
	case c.Passed > 0:
		return StatusPassed
	case c.NotSupported > 0:
		return StatusNotSupported
	}
	return StatusNotRun
}

func buildHarnessReport(name string, specs []types.SpecReport, texts []string) HarnessReport {
	h := HarnessReport{Name: name, FailedRules: []string{}}
	h.UncitedRules, h.UnknownRules = citationProblems(texts)
	caps := map[string]*CapabilityResult{}
	ruleCounts := map[string]*Counts{}
	failed := map[string]bool{}
	for _, s := range specs {
		st, msg := specStatus(s)
		if st == StatusNotRun {
			continue
		}
		ids := ruleIDsIn(s.LeafNodeText)
		h.Specs = append(h.Specs, SpecResult{Text: s.LeafNodeText, Rules: ids, Labels: s.Labels(), Status: st, Message: firstLine(msg)})
		for _, id := range ids {
			if ruleCounts[id] == nil {
				ruleCounts[id] = &Counts{}
			}
			ruleCounts[id].add(st)
			if st == StatusFailed {
				failed[id] = true
			}
		}
		for _, l := range s.Labels() {
			c := caps[l]
			if c == nil {
				c = &CapabilityResult{Name: l, Optional: slices.Contains(OptionalCapabilities, l)}
				caps[l] = c
			}
			c.add(st)
			if st == StatusFailed {
				c.FailedRules = append(c.FailedRules, ids...)
			}
			if st == StatusSkipped && !slices.Contains(c.SkipReasons, msg) {
				c.SkipReasons = append(c.SkipReasons, msg)
			}
		}
	}
	order := append(slices.Clone(BaseCapabilities), OptionalCapabilities...)
	var extra []string
	for l := range caps {
		if !slices.Contains(order, l) {
			extra = append(extra, l)
		}
	}
	slices.Sort(extra)
	for _, l := range append(order, extra...) {
		c := caps[l]
		if c == nil {
			c = &CapabilityResult{Name: l, Optional: slices.Contains(OptionalCapabilities, l)}
		}
		c.Status = c.status()
		slices.Sort(c.FailedRules)
		c.FailedRules = slices.Compact(c.FailedRules)
		h.Capabilities = append(h.Capabilities, *c)
	}
	for _, r := range Rules() {
		c := ruleCounts[r.ID]
		if c == nil {
			c = &Counts{}
		}
		h.Rules = append(h.Rules, RuleResult{ID: r.ID, Status: c.status(), Counts: *c})
	}
	for id := range failed {
		h.FailedRules = append(h.FailedRules, id)
	}
	slices.Sort(h.FailedRules)
	h.Level = levelOf(h)
	return h
}

// Level summarises a HarnessReport.
type Level string

// Conformance levels, from best to worst:
//
//   - FULL: every capability, optional ones included, passed; nothing
//     skipped, nothing unsupported, nothing filtered out.
//   - BASE: every base capability passed; each optional capability passed,
//     is not supported or was skipped by the harness; nothing failed.
//   - PARTIAL: something failed or a base capability was skipped or not
//     run, but at least one base capability passed.
//   - NONE: no base capability passed.
//
// A report whose self-test found uncited or unknown rule IDs is at most
// PARTIAL.
const (
	LevelFull    Level = "FULL"
	LevelBase    Level = "BASE"
	LevelPartial Level = "PARTIAL"
	LevelNone    Level = "NONE"
)

func levelOf(h HarnessReport) Level {
	basePassed, allBase, allPassed, anyFailed := 0, true, true, false
	for _, c := range h.Capabilities {
		if c.Status == StatusFailed {
			anyFailed = true
		}
		if c.Status != StatusPassed {
			allPassed = false
		}
		if !c.Optional {
			if c.Status == StatusPassed {
				basePassed++
			} else {
				allBase = false
			}
		}
	}
	selfTestOK := len(h.UncitedRules) == 0 && len(h.UnknownRules) == 0
	switch {
	case basePassed == 0:
		return LevelNone
	case allPassed && selfTestOK:
		return LevelFull
	case allBase && !anyFailed && selfTestOK:
		return LevelBase
	}
	return LevelPartial
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// WriteText prints the capability table and level of every harness in rep.
func WriteText(w io.Writer, rep Report) {
	for _, h := range rep.Harnesses {
		fmt.Fprintf(w, "\ncheckpointkit conformance report: %s (seed %d)\n", h.Name, rep.Seed)
		fmt.Fprintf(w, "  %-16s %-14s %6s %6s %7s %13s  %s\n", "capability", "status", "passed", "failed", "skipped", "not supported", "failing rules / skip reasons")
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
			fmt.Fprintf(w, "  %-16s %-14s %6d %6d %7d %13d  %s\n", name, c.Status, c.Passed, c.Failed, c.Skipped, c.NotSupported, notes)
		}
		fmt.Fprintf(w, "  (* optional capability)\n")
		if len(h.UncitedRules)+len(h.UnknownRules) > 0 {
			fmt.Fprintf(w, "  SELF-TEST FAILED: uncited rules %v, unknown cited IDs %v\n", h.UncitedRules, h.UnknownRules)
		}
		var byStatus Counts
		notRun := 0
		for _, r := range h.Rules {
			switch r.Status {
			case StatusPassed:
				byStatus.Passed++
			case StatusFailed:
				byStatus.Failed++
			case StatusSkipped:
				byStatus.Skipped++
			case StatusNotSupported:
				byStatus.NotSupported++
			default:
				notRun++
			}
		}
		fmt.Fprintf(w, "  rules: %d passed, %d failed, %d skipped, %d not supported, %d not run (of %d in SPEC.md); %d specs\n",
			byStatus.Passed, byStatus.Failed, byStatus.Skipped, byStatus.NotSupported, notRun, len(h.Rules), len(h.Specs))
		fmt.Fprintf(w, "  level: %s\n", h.Level)
		if len(h.FailedRules) > 0 {
			fmt.Fprintf(w, "  failed rules: %s\n", strings.Join(h.FailedRules, " "))
		}
	}
}
