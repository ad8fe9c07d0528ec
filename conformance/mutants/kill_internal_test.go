package mutants

import (
	"slices"
	"testing"
)

func TestRacesBySpec(t *testing.T) {
	out := []byte(markerStart + "[PUT-1] first\n" +
		markerEnd + "[PUT-1] first\n" +
		"•" + markerStart + "[CONC-2][CONC-3] second\n" +
		"==================\nWARNING: DATA RACE\nWrite at 0x00c000 by goroutine 7:\n" +
		markerEnd + "[CONC-2][CONC-3] second\n" +
		"WARNING: DATA RACE\n")
	got := racesBySpec(out)
	want := []string{"(outside any spec)", "CONC-2", "CONC-3"}
	if !slices.Equal(got, want) {
		t.Errorf("racesBySpec = %v, want %v", got, want)
	}
	if got := racesBySpec([]byte(markerStart + "[PUT-1] x\n")); len(got) != 0 {
		t.Errorf("racesBySpec without a race = %v", got)
	}
}

func TestCitedRules(t *testing.T) {
	got := citedRules("[LIST-ORDER-1][ENGINE-EXIT-1] text [not-a-rule] [PUT-10]")
	if want := []string{"LIST-ORDER-1", "ENGINE-EXIT-1", "PUT-10"}; !slices.Equal(got, want) {
		t.Errorf("citedRules = %v, want %v", got, want)
	}
}

func TestNaturalCompare(t *testing.T) {
	ordered := []string{"", "1", "1F0C-b", "1f0c-a", "2", "9", "10", "100", "a2", "a10", "z"}
	for i := range ordered {
		for j := range ordered {
			got := naturalCompare(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("naturalCompare(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}
