package main

// Judging a backend's conformance report against the matrix's demands.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// reportComplete reports whether every harness of rep ran all its
// capabilities and some specs.
func reportComplete(rep report.Report) bool {
	if len(rep.Harnesses) == 0 {
		return false
	}
	for _, h := range rep.Harnesses {
		if !h.Complete() || len(h.Specs) == 0 {
			return false
		}
	}
	return true
}

// isSpecFailure reports whether a problem found by execGoTest only says
// that go test failed, which failed specs cause.
func isSpecFailure(problem string) bool {
	return strings.HasPrefix(problem, "go test failed: ") || strings.HasPrefix(problem, "failed ")
}

// reportProblems checks a conformance report: every harness ran some specs,
// none failed, and each is at least at level min.
func reportProblems(rep report.Report, min report.Level) []string {
	var problems []string
	if len(rep.Harnesses) == 0 {
		return []string{"the conformance report has no harness"}
	}
	for _, h := range rep.Harnesses {
		var ran, failed int
		for _, s := range h.Specs {
			if s.Status != report.StatusNotRun {
				ran++
			}
			if s.Status == report.StatusFailed {
				failed++
			}
		}
		switch {
		case ran == 0:
			problems = append(problems, fmt.Sprintf("%s: no spec ran (check -label-filter / -focus)", h.Name))
		case failed > 0:
			problems = append(problems, fmt.Sprintf("%s: %d specs failed, root causes %s (%d rules failed in all)", h.Name, failed, strings.Join(h.PrimaryFailedRules, " "), len(h.FailedRules)))
		}
		if min != "" && levelRank(h.Level) < levelRank(min) {
			problems = append(problems, fmt.Sprintf("%s: level %s, required %s", h.Name, h.Level, min))
		}
	}
	return problems
}

// levelRank orders levels from worst (0) to best.
func levelRank(l report.Level) int {
	return slices.Index([]report.Level{report.LevelNone, report.LevelPartial, report.LevelBase, report.LevelFull}, l)
}
