// Package report holds the data of a checkpointkit conformance report: what
// package conformance builds after a run, prints, and writes as JSON, and
// what tools such as ci/cmd/matrix read back.
//
// It has no dependency on Ginkgo or on the suite's specs, so a program that
// only reads reports does not link the suite (nor the golden engine traces
// its engine group embeds).
//
// The JSON form, abridged:
//
//	{"seed": 20261122, "harnesses": [{
//	  "name": "mysaver", "level": "PARTIAL", "core_level": "FULL", "strict_level": "PARTIAL",
//	  "primary_failed_rules": ["LIST-FILTER-7"],
//	  "failed_rules": ["LIST-FILTER-7", "PUT-4"],
//	  "capabilities": [{"name": "list", "optional": false, "status": "failed", "passed": 70, "failed": 1, ...}],
//	  "rules": [{"id": "LIST-FILTER-4", "tier": "strict", "capability": "list", "status": "differs",
//	             "behaviour": "true matches 1 ...", "passed": 0, "failed": 0, "differs": 1, ...},
//	            {"id": "PUT-4", "tier": "core", "status": "explained", "explained_by": ["LIST-FILTER-7"], ...}],
//	  "specs": [{"text": "[LIST-FILTER-7] matches lists ...", "rules": ["LIST-FILTER-7"], "labels": ["list"],
//	             "status": "failed", "message": "... (up to a few KB)", "location": "list_specs.go:301"},
//	            {"text": "[ID-1]...[LIST-LIMIT-2] random ...", "broad": "model", "status": "failed",
//	             "explained_by": ["LIST-FILTER-7"], ...}]
//	}]}
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

// Report is the outcome of one suite run: one HarnessReport per harness.
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

// Decode reads a report written as JSON.
func Decode(r io.Reader) (Report, error) {
	var rep Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return Report{}, fmt.Errorf("decoding a conformance report: %w", err)
	}
	return rep, nil
}

// ReadFile reads a report from a JSON file.
func ReadFile(path string) (Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return Report{}, err
	}
	defer f.Close()
	return Decode(f)
}

// HarnessReport is the outcome of the suite for one saver.
type HarnessReport struct {
	Name string `json:"name"`
	// Level is the overall verdict: the lower of CoreLevel and StrictLevel.
	Level Level `json:"level"`
	// CoreLevel is the verdict on the rules of tier core: those whose
	// breakage changes what a LangGraph engine does or shows.
	CoreLevel Level `json:"core_level"`
	// StrictLevel is the verdict on the rules of tier strict:
	// checkpointkit's own choices where LangGraph's savers disagree or
	// LangGraph is silent.
	StrictLevel Level `json:"strict_level"`
	// PrimaryFailedRules are the root causes, each named once, in SPEC.md
	// order: rules whose focused specs failed, and rules a broad spec
	// (model, List matrix, engine) was attributed to when no focused
	// failure explained it. These are the rules to fix.
	PrimaryFailedRules []string `json:"primary_failed_rules"`
	// FailedRules lists, sorted, every rule ID cited by a failed spec,
	// root causes and their consequences alike.
	FailedRules []string `json:"failed_rules"`
	// Capabilities has one row per capability label, base ones first.
	Capabilities []CapabilityResult `json:"capabilities"`
	// Rules has one row per rule of SPEC.md, in document order.
	Rules []RuleResult `json:"rules"`
	// Specs has one row per spec that was not filtered out.
	Specs []SpecResult `json:"specs"`
	// UncitedRules are SPEC.md rules that no spec cites; UnknownRules are
	// cited IDs that SPEC.md does not define. Both must be empty.
	UncitedRules []string `json:"uncited_rules,omitempty"`
	UnknownRules []string `json:"unknown_rules,omitempty"`
	// Faults sums what the specs of the faults capability did: faults
	// injected, calls cut, outcomes checked. Nil when none ran.
	Faults *FaultCounts `json:"faults,omitempty"`
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

// Rule returns the row of rule id, or nil.
func (h HarnessReport) Rule(id string) *RuleResult {
	for i := range h.Rules {
		if h.Rules[i].ID == id {
			return &h.Rules[i]
		}
	}
	return nil
}

// Status is the outcome of a capability, rule or spec.
type Status string

// Statuses. A capability or spec is failed when a spec failed, differs when
// the saver follows a documented LangGraph behaviour instead of a strict
// rule, skipped when the harness skipped it, not_supported when the saver
// lacks the optional capability, not_run when filtered out (e.g. by
// -ginkgo.label-filter). A spec is not_judged when it failed but a rule it
// declares as a prerequisite failed too (its fixture relies on that rule,
// so the failure says nothing about its own), or when the transport
// between the suite and the saver cannot carry what it checks. A rule is
// failed only when it is a root cause (see
// HarnessReport.PrimaryFailedRules), explained when its failures are
// consequences of another rule's, and not_judged when every failing spec
// citing it was not judged.
const (
	StatusPassed       Status = "passed"
	StatusDiffers      Status = "differs"
	StatusNotSupported Status = "not_supported"
	StatusSkipped      Status = "skipped"
	StatusNotRun       Status = "not_run"
	StatusExplained    Status = "explained"
	StatusNotJudged    Status = "not_judged"
	StatusFailed       Status = "failed"
)

// Counts tallies spec outcomes.
type Counts struct {
	Passed       int `json:"passed"`
	Failed       int `json:"failed"`
	Differs      int `json:"differs"`
	Skipped      int `json:"skipped"`
	NotSupported int `json:"not_supported"`
	NotJudged    int `json:"not_judged,omitempty"`
}

// Add counts one spec outcome; not_run is not counted.
func (c *Counts) Add(st Status) {
	switch st {
	case StatusPassed:
		c.Passed++
	case StatusFailed:
		c.Failed++
	case StatusDiffers:
		c.Differs++
	case StatusSkipped:
		c.Skipped++
	case StatusNotSupported:
		c.NotSupported++
	case StatusNotJudged:
		c.NotJudged++
	}
}

// Status summarises the counts, worst outcome first.
func (c Counts) Status() Status {
	switch {
	case c.Failed > 0:
		return StatusFailed
	case c.NotJudged > 0:
		return StatusNotJudged
	case c.Skipped > 0:
		return StatusSkipped
	case c.Differs > 0:
		return StatusDiffers
	case c.Passed > 0:
		return StatusPassed
	case c.NotSupported > 0:
		return StatusNotSupported
	}
	return StatusNotRun
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

// RuleResult is the outcome of one rule of SPEC.md.
type RuleResult struct {
	ID   string `json:"id"`
	Tier Tier   `json:"tier"`
	// Capability is the label of the specs that check the rule.
	Capability string `json:"capability"`
	Status     Status `json:"status"`
	// Counts tallies the specs citing the rule.
	Counts
	// Behaviour, for status differs, names the LangGraph behaviour the
	// saver follows instead of the rule.
	Behaviour string `json:"behaviour,omitempty"`
	// ExplainedBy, for status explained, lists the root causes that explain
	// the failed broad specs citing the rule.
	ExplainedBy []string `json:"explained_by,omitempty"`
	// Needs, for status not_judged, lists the failed prerequisites that
	// kept the rule's failing specs from being judged.
	Needs []string `json:"needs,omitempty"`
}

// SpecResult is the outcome of one spec.
type SpecResult struct {
	Text   string   `json:"text"`
	Rules  []string `json:"rules"`
	Labels []string `json:"labels"`
	Status Status   `json:"status"`
	// Broad names the group of a spec that checks many rules at once
	// ("model", "list matrix", "engine scenario linear", ...); it is empty
	// for a focused spec, which checks one rule or a few.
	Broad string `json:"broad,omitempty"`
	// Message is the failure, skip or differs message, capped at a few KB.
	Message string `json:"message,omitempty"`
	// Location is where the failure was raised (file:line).
	Location string `json:"location,omitempty"`
	// Attributed, for a failed broad spec, lists the rules the failure
	// points at (from its failing case or shrunk reproduction).
	Attributed []string `json:"attributed,omitempty"`
	// ExplainedBy, for a failed broad spec, lists the root causes found by
	// focused specs that explain the failure; empty when the spec's own
	// attributed rules became root causes.
	ExplainedBy []string `json:"explained_by,omitempty"`
	// Prerequisites are the rules the spec declares its fixture relies on
	// besides its own: when one of them failed, the spec is not judged.
	Prerequisites []string `json:"prerequisites,omitempty"`
	// Needs, for status not_judged, lists the failed prerequisites.
	Needs []string `json:"needs,omitempty"`
	// Evidence, for a failed spec, is what the failure observed: the first
	// failing saver call and the expected and actual values.
	Evidence *Evidence `json:"evidence,omitempty"`
}

// Evidence is what a failing spec observed.
type Evidence struct {
	// Call is the saver call the failure concerns, e.g.
	// `List(thread="a" before="~" limit=0)`: the last call the spec made
	// before its failing assertion.
	Call string `json:"call,omitempty"`
	// Operation is the method of Call ("List", "GetTuple", ...).
	Operation string `json:"operation,omitempty"`
	// Result summarises what Call returned: "error: ...", "not found",
	// "3 tuples", "ok".
	Result string `json:"result,omitempty"`
	// Observation classifies Result: "error", "not found", "empty", "some",
	// "ok", "panic". Two failures share a cause only when their operations
	// and observations agree.
	Observation string `json:"observation,omitempty"`
	// Expected and Actual are the values of the failing assertion, when
	// its message gives them.
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	// Lengths tells, when Expected and Actual are lists, whether they have
	// the "same" length or an "other" one: a listing in the wrong order is
	// not a listing of the wrong checkpoints.
	Lengths string `json:"lengths,omitempty"`
}

// Signature is how a failure looks when the report decides whether
// another failure explains it: "operation/observation".
func (e Evidence) Signature() string { return e.Operation + "/" + e.Observation }

// Tier is one of the two tiers every rule of SPEC.md belongs to.
type Tier string

// Tiers.
const (
	// TierCore holds the rules whose breakage changes what a LangGraph
	// engine does or shows: state, history, resume, replay, interrupts.
	TierCore Tier = "core"
	// TierStrict holds checkpointkit's own choices: where LangGraph's
	// savers disagree among themselves, or LangGraph is silent.
	TierStrict Tier = "strict"
)

// Tiers lists the tiers in report order.
var Tiers = []Tier{TierCore, TierStrict}

// Capability labels. Base capabilities must pass for level BASE; optional
// ones may be not supported. Any other label (the suite's engine group,
// labels of extra spec groups) counts as a base capability too.
var (
	BaseCapabilities     = []string{"put", "put_writes", "get_tuple", "list", "delete_thread", "concurrency", "errors", "model"}
	OptionalCapabilities = []string{"list_threads", "copy_thread", "delete_for_runs", "prune", "versions", "delta_history", "faults"}
)

// HarnessCapabilities are the optional capabilities that depend on how the
// harness reaches the saver rather than on the saver: faults needs a
// network between them, which an in-process or file-based saver has not.
// When not supported, they leave the level as it is.
var HarnessCapabilities = []string{"faults"}

// FallbackCapabilities are the optional capabilities that LangGraph's
// engines do without: for a saver without its own delta history, their
// base classes walk GetTuple one ancestor at a time (spec.WalkDeltaHistory),
// which the base capabilities already judge. When not supported, they
// leave the core level as it is; the strict level and the overall one, like
// those of any optional capability, are then at most BASE.
var FallbackCapabilities = []string{"delta_history"}

// IsOptional reports whether label names an optional capability.
func IsOptional(label string) bool { return slices.Contains(OptionalCapabilities, label) }
