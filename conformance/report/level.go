package report

import "slices"

// Level summarises a harness's results, overall or for one tier.
type Level string

// Conformance levels, from best to worst:
//
//   - FULL: every capability, optional ones included, passed; nothing
//     skipped, unsupported, differing or filtered out. A harness capability
//     (see HarnessCapabilities) that is not supported does not count, nor,
//     for the core tier, one the engines do without (FallbackCapabilities).
//   - BASE: every base capability passed or differs from a strict rule the
//     way a LangGraph saver does; each optional capability passed, differs,
//     is not supported or was skipped by the harness; nothing failed.
//   - PARTIAL: something failed, or a base capability was skipped or not
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

// Levels lists the levels from worst to best.
var Levels = []Level{LevelNone, LevelPartial, LevelBase, LevelFull}

// Rank orders levels: NONE 0, PARTIAL 1, BASE 2, FULL 3, unknown -1.
func (l Level) Rank() int { return slices.Index(Levels, l) }

// capStatus is the status of one capability, within a tier or overall.
type capStatus struct {
	optional bool
	status   Status
}

// levelOf computes a level from capability statuses.
func levelOf(caps []capStatus, selfTestOK bool) Level {
	basePassed, allBase, allPassed, anyFailed := 0, true, true, false
	for _, c := range caps {
		st := c.status
		if st == StatusExplained {
			st = StatusPassed
		}
		if st == StatusFailed {
			anyFailed = true
		}
		if st != StatusPassed {
			allPassed = false
		}
		if !c.optional {
			// A rule not judged keeps BASE, like one that differs: it is
			// not judged because a prerequisite failed (and that failure
			// makes the level PARTIAL) or because the transport between
			// the suite and the saver cannot carry what it checks.
			if st == StatusPassed || st == StatusDiffers || st == StatusNotJudged {
				basePassed++
			} else {
				allBase = false
			}
		}
	}
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

// worse returns the worse of two statuses for a tier's capability row.
func worse(a, b Status) Status {
	order := []Status{StatusFailed, StatusNotJudged, StatusSkipped, StatusNotRun, StatusDiffers, StatusPassed, StatusExplained, StatusNotSupported}
	ia, ib := slices.Index(order, a), slices.Index(order, b)
	if ia < 0 {
		return b
	}
	if ib < 0 || ia < ib {
		return a
	}
	return b
}

// TierLevel computes the level of tier t from the rules of h: each
// capability's status within the tier is the worst status of its rules of
// that tier (explained counting as passed), and capabilities without rules
// of the tier do not count. An empty tier argument computes over every rule.
func (h HarnessReport) TierLevel(t Tier) Level {
	byCap := map[string]Status{}
	var order []string
	for _, r := range h.Rules {
		if t != "" && r.Tier != t {
			continue
		}
		st := r.Status
		if st == StatusExplained {
			st = StatusPassed
		}
		prev, seen := byCap[r.Capability]
		if !seen {
			order = append(order, r.Capability)
			byCap[r.Capability] = st
			continue
		}
		byCap[r.Capability] = worse(prev, st)
	}
	// A capability whose rules are partly not supported and partly
	// passed (not possible for one interface, but cheap to handle) counts
	// as passed; one entirely not supported stays not supported.
	// A harness capability that is not supported does not count at all,
	// nor, in the core tier, one the engines do without.
	caps := make([]capStatus, 0, len(order))
	for _, c := range order {
		if byCap[c] == StatusNotSupported && slices.Contains(HarnessCapabilities, c) {
			continue
		}
		if byCap[c] == StatusNotSupported && t == TierCore && slices.Contains(FallbackCapabilities, c) {
			continue
		}
		caps = append(caps, capStatus{optional: IsOptional(c), status: byCap[c]})
	}
	return levelOf(caps, len(h.UncitedRules) == 0 && len(h.UnknownRules) == 0)
}

// SetLevels fills CoreLevel, StrictLevel and Level from the rules.
func (h *HarnessReport) SetLevels() {
	h.CoreLevel = h.TierLevel(TierCore)
	h.StrictLevel = h.TierLevel(TierStrict)
	h.Level = h.CoreLevel
	if h.StrictLevel.Rank() < h.Level.Rank() {
		h.Level = h.StrictLevel
	}
}
