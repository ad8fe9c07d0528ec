package report

import "testing"

func TestFallbackCapabilityNotSupportedKeepsCore(t *testing.T) {
	rules := []RuleResult{
		{ID: "PUT-1", Tier: TierCore, Capability: "put", Status: StatusPassed},
		{ID: "LIST-1", Tier: TierStrict, Capability: "list", Status: StatusPassed},
		{ID: "DELTA-1", Tier: TierCore, Capability: "delta_history", Status: StatusNotSupported},
		{ID: "DELTA-10", Tier: TierStrict, Capability: "delta_history", Status: StatusNotSupported},
	}
	tests := []struct {
		name               string
		status             Status
		core, strict, full Level
	}{
		{"not supported", StatusNotSupported, LevelFull, LevelBase, LevelBase},
		{"passed", StatusPassed, LevelFull, LevelFull, LevelFull},
		{"failed", StatusFailed, LevelPartial, LevelPartial, LevelPartial},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := HarnessReport{Rules: append([]RuleResult(nil), rules...)}
			h.Rules[2].Status, h.Rules[3].Status = tt.status, tt.status
			h.SetLevels()
			if h.CoreLevel != tt.core || h.StrictLevel != tt.strict || h.Level != tt.full {
				t.Fatalf("core %s, strict %s, level %s; want %s, %s, %s", h.CoreLevel, h.StrictLevel, h.Level, tt.core, tt.strict, tt.full)
			}
		})
	}
}
