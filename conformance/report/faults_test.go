package report

import "testing"

func TestHarnessCapabilityNotSupportedKeepsFull(t *testing.T) {
	rules := []RuleResult{
		{ID: "PUT-1", Tier: TierCore, Capability: "put", Status: StatusPassed},
		{ID: "LIST-1", Tier: TierStrict, Capability: "list", Status: StatusPassed},
		{ID: "FAULT-1", Tier: TierStrict, Capability: "faults", Status: StatusNotSupported},
		{ID: "PRUNE-1", Tier: TierStrict, Capability: "prune", Status: StatusPassed},
	}
	h := HarnessReport{Rules: rules}
	h.SetLevels()
	if h.Level != LevelFull {
		t.Fatalf("level %s with faults not supported, want FULL", h.Level)
	}
	h.Rules[3].Status = StatusNotSupported
	h.SetLevels()
	if h.Level != LevelBase {
		t.Fatalf("level %s with prune not supported, want BASE", h.Level)
	}
	h.Rules[2].Status = StatusFailed
	h.SetLevels()
	if h.Level != LevelPartial {
		t.Fatalf("level %s with a fault rule failed, want PARTIAL", h.Level)
	}
}

func TestFaultCountsAdd(t *testing.T) {
	var c FaultCounts
	c.Add(FaultCounts{Injected: 2, Cut: 1, Failed: 1, Checked: 1})
	c.Add(FaultCounts{Injected: 1, Cut: 1, Recovered: 1, Checked: 1, Partial: 1})
	want := FaultCounts{Injected: 3, Cut: 2, Failed: 1, Recovered: 1, Checked: 2, Partial: 1}
	if c != want {
		t.Fatalf("got %+v, want %+v", c, want)
	}
}
