package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// rule is a rule row for the level tests.
func rule(id string, tier Tier, capability string, st Status) RuleResult {
	return RuleResult{ID: id, Tier: tier, Capability: capability, Status: st}
}

func TestLevels(t *testing.T) {
	for _, c := range []struct {
		name                 string
		rules                []RuleResult
		core, strict, overal Level
	}{
		{"all passed", []RuleResult{
			rule("A-1", TierCore, "put", StatusPassed), rule("B-1", TierStrict, "list", StatusPassed), rule("C-1", TierCore, "versions", StatusPassed),
		}, LevelFull, LevelFull, LevelFull},
		{"explained counts as passed", []RuleResult{
			rule("A-1", TierCore, "put", StatusExplained), rule("B-1", TierStrict, "list", StatusPassed),
		}, LevelFull, LevelFull, LevelFull},
		{"a strict rule differs", []RuleResult{
			rule("A-1", TierCore, "put", StatusPassed), rule("B-1", TierStrict, "list", StatusDiffers), rule("B-2", TierStrict, "list", StatusPassed),
		}, LevelFull, LevelBase, LevelBase},
		{"an optional capability not supported", []RuleResult{
			rule("A-1", TierCore, "put", StatusPassed), rule("C-1", TierCore, "versions", StatusNotSupported), rule("B-1", TierStrict, "list_threads", StatusNotSupported), rule("B-2", TierStrict, "list", StatusPassed),
		}, LevelBase, LevelBase, LevelBase},
		{"a core rule failed", []RuleResult{
			rule("A-1", TierCore, "put", StatusFailed), rule("A-2", TierCore, "list", StatusPassed), rule("B-1", TierStrict, "list", StatusPassed),
		}, LevelPartial, LevelFull, LevelPartial},
		{"nothing of a tier passed", []RuleResult{
			rule("A-1", TierCore, "put", StatusFailed), rule("B-1", TierStrict, "list", StatusPassed),
		}, LevelNone, LevelFull, LevelNone},
		{"a base capability skipped", []RuleResult{
			rule("A-1", TierCore, "put", StatusSkipped), rule("A-2", TierCore, "list", StatusPassed), rule("B-1", TierStrict, "list", StatusPassed),
		}, LevelPartial, LevelFull, LevelPartial},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := HarnessReport{Rules: c.rules}
			h.SetLevels()
			if h.CoreLevel != c.core || h.StrictLevel != c.strict || h.Level != c.overal {
				t.Errorf("levels core %s, strict %s, overall %s; want %s, %s, %s", h.CoreLevel, h.StrictLevel, h.Level, c.core, c.strict, c.overal)
			}
		})
	}
	h := HarnessReport{Rules: []RuleResult{rule("A-1", TierCore, "put", StatusPassed)}, UncitedRules: []string{"A-2"}}
	if h.SetLevels(); h.CoreLevel != LevelPartial {
		t.Errorf("a failed self-test gives level %s, want PARTIAL", h.CoreLevel)
	}
}

func TestWriteTextPutsRootCausesFirst(t *testing.T) {
	h := HarnessReport{
		Name: "s", CoreLevel: LevelPartial, StrictLevel: LevelBase, Level: LevelPartial,
		PrimaryFailedRules: []string{"A-1"},
		Rules: []RuleResult{
			rule("A-1", TierCore, "put", StatusFailed),
			{ID: "B-1", Tier: TierStrict, Capability: "list", Status: StatusDiffers, Behaviour: "true matches 1"},
			{ID: "A-2", Tier: TierCore, Capability: "list", Status: StatusExplained, ExplainedBy: []string{"A-1"}},
		},
		Specs: []SpecResult{
			{Text: "[A-2][A-1] broad", Rules: []string{"A-2", "A-1"}, Status: StatusFailed, Broad: "model", Message: "broad failure", ExplainedBy: []string{"A-1"}},
			{Text: "[A-1] focused", Rules: []string{"A-1"}, Status: StatusFailed, Message: "got int64(2), want float64(2)\nsecond line"},
		},
		Capabilities: []CapabilityResult{{Name: "put", Status: StatusFailed, Counts: Counts{Failed: 1}}},
	}
	var b strings.Builder
	WriteText(&b, Report{Harnesses: []HarnessReport{h}})
	out := b.String()
	order := []string{
		"LangGraph core: PARTIAL   strict: BASE (differs as a LangGraph saver does: B-1)",
		"root causes, fix these first (1):",
		"A-1                core   [A-1] focused",
		"got int64(2), want float64(2)",
		"B-1                differs: true matches 1",
		"also failed, as consequences of the root causes (1):",
		"capability",
	}
	pos := 0
	for _, want := range order {
		i := strings.Index(out[pos:], want)
		if i < 0 {
			t.Fatalf("report lacks %q after position %d:\n%s", want, pos, out)
		}
		pos += i + len(want)
	}
	if strings.Contains(out, "broad failure") {
		t.Errorf("an explained broad spec is shown as a root cause's evidence:\n%s", out)
	}
}

func TestDecode(t *testing.T) {
	in := Report{Seed: 7, Harnesses: []HarnessReport{{Name: "s", Level: LevelBase, PrimaryFailedRules: []string{}, FailedRules: []string{}}}}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Seed != 7 || rep.Harness("s") == nil || rep.Harness("s").Level != LevelBase || rep.Harness("other") != nil {
		t.Errorf("decoded %+v", rep)
	}
	if _, err := Decode(strings.NewReader("{")); err == nil {
		t.Error("Decode accepted broken JSON")
	}
}

func TestWriteTextEvidence(t *testing.T) {
	rep := Report{Harnesses: []HarnessReport{{
		Name: "s", PrimaryFailedRules: []string{"LIST-LIMIT-2"},
		Rules: []RuleResult{{ID: "LIST-LIMIT-2", Tier: TierCore, Status: StatusFailed}, {ID: "LIST-LIMIT-1", Tier: TierCore, Status: StatusNotJudged, Needs: []string{"LIST-FILTER-1"}}},
		Specs: []SpecResult{{
			Text: "[LIST-LIMIT-2] x", Rules: []string{"LIST-LIMIT-2"}, Status: StatusFailed, Message: "boom",
			Prerequisites: []string{"LIST-BEFORE-1"},
			Evidence:      &Evidence{Call: `List(thread="a" limit=0)`, Operation: "List", Result: "0 tuples", Observation: "empty", Expected: "[a b]", Actual: "[]"},
		}},
	}}}
	var b strings.Builder
	WriteText(&b, rep)
	for _, want := range []string{
		`first failing call: List(thread="a" limit=0) -> 0 tuples`, "expected: [a b]", "actual:   []",
		"prerequisites: LIST-BEFORE-1", "LIST-LIMIT-1       not judged: needs LIST-FILTER-1",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
