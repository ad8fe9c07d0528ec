package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// Result is the outcome of one backend's conformance run.
type Result struct {
	// Backend is the name given with -backends, Package the Go package
	// whose conformance test ran.
	Backend string `json:"backend"`
	Package string `json:"package"`
	// Passed is false when the run failed: go test failed or skipped the
	// conformance test, no report was written, no spec ran, or a harness
	// is below the required level.
	Passed bool `json:"passed"`
	// Problems says why Passed is false.
	Problems []string `json:"problems,omitempty"`
	// ThirdParty marks a saver checkpointkit does not maintain (the
	// lgjs-* backends): its failed specs are Findings, not Problems, and
	// its specs are counted in Matrix.ThirdPartySpecs.
	ThirdParty bool `json:"third_party,omitempty"`
	// Findings lists the failures of a third-party saver's run.
	Findings []string `json:"findings,omitempty"`
	// Command is the go test command line, for reproducing the run.
	Command        string  `json:"command"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// JUnit, ReportJSON and Log are the paths of the files the run wrote.
	JUnit      string `json:"junit"`
	ReportJSON string `json:"report_json"`
	Log        string `json:"log"`
	// Report is the conformance report; nil when none was written.
	Report *report.Report `json:"report,omitempty"`
}

// Matrix is the combined outcome of every backend, as printed by -json and
// written to matrix.json.
type Matrix struct {
	Passed bool `json:"passed"`
	// Capabilities are the row names: base capabilities, optional ones,
	// then any other group (such as "engine") that some report has.
	Capabilities []string `json:"capabilities"`
	Backends     []Result `json:"backends"`
	// Specs totals the specs of every harness of checkpointkit's backends,
	// ThirdPartySpecs those of the third-party ones.
	Specs           report.Counts `json:"specs"`
	ThirdPartySpecs report.Counts `json:"third_party_specs"`
}

// column is one column of the printed matrix: one harness of one backend.
type column struct {
	title  string
	result *Result
	h      *report.HarnessReport // nil if the run wrote no report
}

// newMatrix combines the results of the backends.
func newMatrix(results []Result) Matrix {
	m := Matrix{Passed: true, Backends: results}
	seen := map[string]bool{}
	var extra []string
	for _, r := range results {
		m.Passed = m.Passed && r.Passed
		if r.Report == nil {
			continue
		}
		for _, h := range r.Report.Harnesses {
			for _, c := range h.Capabilities {
				if !seen[c.Name] && !slices.Contains(report.BaseCapabilities, c.Name) && !slices.Contains(report.OptionalCapabilities, c.Name) {
					extra = append(extra, c.Name)
				}
				seen[c.Name] = true
			}
			counts := &m.Specs
			if r.ThirdParty {
				counts = &m.ThirdPartySpecs
			}
			for _, s := range h.Specs {
				switch s.Status {
				case report.StatusPassed:
					counts.Passed++
				case report.StatusFailed:
					counts.Failed++
				case report.StatusDiffers:
					counts.Differs++
				case report.StatusSkipped:
					counts.Skipped++
				case report.StatusNotSupported:
					counts.NotSupported++
				}
			}
		}
	}
	slices.Sort(extra)
	m.Capabilities = append(append(slices.Clone(report.BaseCapabilities), report.OptionalCapabilities...), extra...)
	return m
}

func (m Matrix) columns() []column {
	var cols []column
	for i := range m.Backends {
		r := &m.Backends[i]
		if r.Report == nil || len(r.Report.Harnesses) == 0 {
			cols = append(cols, column{title: r.Backend, result: r})
			continue
		}
		for j := range r.Report.Harnesses {
			h := &r.Report.Harnesses[j]
			// Backend "sqlite@3" with harness "sqlite (file)" gives
			// "sqlite (file)@3"; "memory" with "memory" gives "memory".
			base, version, _ := strings.Cut(r.Backend, "@")
			if version != "" {
				version = "@" + version
			}
			title := h.Name + version
			if !strings.HasPrefix(h.Name, base) {
				title = r.Backend + ": " + h.Name
			}
			cols = append(cols, column{title: title, result: r, h: h})
		}
	}
	return cols
}

// cell renders one capability of one harness.
func cell(h *report.HarnessReport, capability string) string {
	if h == nil {
		return "-"
	}
	var c *report.CapabilityResult
	for i := range h.Capabilities {
		if h.Capabilities[i].Name == capability {
			c = &h.Capabilities[i]
		}
	}
	if c == nil {
		return "-"
	}
	ran := c.Passed + c.Failed + c.Differs + c.Skipped + c.NotSupported
	switch c.Status {
	case report.StatusPassed:
		return fmt.Sprintf("passed %d", c.Passed)
	case report.StatusDiffers:
		return fmt.Sprintf("differs %d/%d", c.Differs, ran)
	case report.StatusFailed:
		return fmt.Sprintf("FAILED %d/%d", c.Failed, ran)
	case report.StatusSkipped:
		return fmt.Sprintf("skipped %d/%d", c.Skipped, ran)
	case report.StatusNotSupported:
		return fmt.Sprintf("not supported %d", c.NotSupported)
	case report.StatusNotRun:
		return "not run"
	}
	return string(c.Status)
}

// rows returns the cells of the matrix: a header row, one row per
// capability, a nil separator, then level, spec totals, time and verdict.
func (m Matrix) rows() [][]string {
	cols := m.columns()
	rows := [][]string{append([]string{"capability"}, titles(cols)...)}
	for _, name := range m.Capabilities {
		label := name
		if slices.Contains(report.OptionalCapabilities, name) {
			label += "*"
		}
		row := []string{label}
		for _, c := range cols {
			row = append(row, cell(c.h, name))
		}
		rows = append(rows, row)
	}
	level, core, strict := []string{"LEVEL"}, []string{"core"}, []string{"strict"}
	specs, took, verdict := []string{"specs"}, []string{"time"}, []string{"result"}
	for _, c := range cols {
		if c.h == nil {
			level = append(level, "-")
			core = append(core, "-")
			strict = append(strict, "-")
			specs = append(specs, "-")
		} else {
			level = append(level, string(c.h.Level))
			core = append(core, string(c.h.CoreLevel))
			strict = append(strict, string(c.h.StrictLevel))
			var n report.Counts
			for _, s := range c.h.Specs {
				switch s.Status {
				case report.StatusPassed:
					n.Passed++
				case report.StatusFailed:
					n.Failed++
				case report.StatusSkipped, report.StatusNotSupported, report.StatusDiffers:
					n.Skipped++
				}
			}
			specs = append(specs, fmt.Sprintf("%d/%d/%d", n.Passed, n.Failed, n.Skipped))
		}
		took = append(took, fmt.Sprintf("%.1fs", c.result.ElapsedSeconds))
		if c.result.Passed {
			verdict = append(verdict, "ok")
		} else {
			verdict = append(verdict, "FAIL")
		}
	}
	rows = append(rows, nil, level, core, strict, specs)
	if f := faultsRow(cols); f != nil {
		rows = append(rows, f)
	}
	return append(rows, took, verdict)
}

// faultsRow is the row "faults injected/cut/partial" of the columns whose
// faults group ran, or nil when none did.
func faultsRow(cols []column) []string {
	row := []string{"faults i/c/p"}
	ran := false
	for _, c := range cols {
		if c.h == nil || c.h.Faults == nil {
			row = append(row, "-")
			continue
		}
		f := c.h.Faults
		row = append(row, fmt.Sprintf("%d/%d/%d", f.Injected, f.Cut, f.Partial))
		ran = true
	}
	if !ran {
		return nil
	}
	return row
}

const legend = "* optional capability; cells: passed N | FAILED failed/run | differs differing/run (a LangGraph saver's behaviour on a strict rule) | skipped skipped/run | not supported N | not run (filtered out); LEVEL is the lower of the core and strict levels; faults i/c/p: network faults injected / calls cut / partial outcomes"

// WriteMarkdown prints the matrix as a GitHub-flavoured Markdown table
// (for $GITHUB_STEP_SUMMARY), followed by the failures.
func (m Matrix) WriteMarkdown(w io.Writer) {
	esc := strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`)
	fmt.Fprintln(w, "### checkpointkit conformance matrix")
	fmt.Fprintln(w)
	for i, row := range m.rows() {
		if row == nil {
			continue
		}
		var cells []string
		for _, c := range row {
			c = esc.Replace(c)
			if strings.HasPrefix(c, "FAIL") || row[0] == "LEVEL" {
				c = "**" + c + "**"
			}
			cells = append(cells, c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(row)))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, esc.Replace(legend))
	var problems strings.Builder
	m.writeProblems(&problems)
	if problems.Len() > 0 {
		fmt.Fprintf(w, "\n```\n%s\n```\n", strings.TrimSpace(problems.String()))
	}
}

// WriteText prints the matrix: rows are capabilities, columns are
// backends (one per harness), then each column's level, spec totals, time
// and verdict, then the failures.
func (m Matrix) WriteText(w io.Writer) {
	rows := m.rows()
	ncols := len(rows[0])
	widths := make([]int, ncols)
	for _, row := range rows {
		for i, s := range row {
			widths[i] = max(widths[i], len([]rune(s)))
		}
	}
	rule := strings.Repeat("-", sum(widths)+2*(ncols-1))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "checkpointkit conformance matrix")
	fmt.Fprintln(w, rule)
	for i, row := range rows {
		if row == nil {
			fmt.Fprintln(w, rule)
			continue
		}
		var b strings.Builder
		for j, s := range row {
			if j > 0 {
				b.WriteString("  ")
			}
			b.WriteString(s)
			if j < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-len([]rune(s))))
			}
		}
		fmt.Fprintln(w, b.String())
		if i == 0 {
			fmt.Fprintln(w, rule)
		}
	}
	fmt.Fprintln(w, rule)
	fmt.Fprintln(w, legend)
	fmt.Fprintln(w, "specs: passed/failed/skipped (skipped includes not supported)")
	m.writeProblems(w)
}

// writeProblems lists why each failed backend failed, with its failed
// specs.
func (m Matrix) writeProblems(w io.Writer) {
	const maxSpecs = 20
	for _, r := range m.Backends {
		if r.Passed {
			continue
		}
		if r.Log != "" {
			fmt.Fprintf(w, "\n%s FAILED (log: %s):\n", r.Backend, r.Log)
		} else {
			fmt.Fprintf(w, "\n%s FAILED:\n", r.Backend)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  - %s\n", p)
		}
		if r.Report == nil {
			continue
		}
		for _, h := range r.Report.Harnesses {
			if len(h.PrimaryFailedRules) > 0 {
				fmt.Fprintf(w, "  [%s] root causes: %s\n", h.Name, strings.Join(h.PrimaryFailedRules, " "))
			}
			n := 0
			for _, s := range h.Specs {
				if s.Status != report.StatusFailed {
					continue
				}
				if n++; n > maxSpecs {
					continue
				}
				msg, _, _ := strings.Cut(strings.TrimSpace(s.Message), "\n")
				fmt.Fprintf(w, "  [%s] %s\n      %s\n", h.Name, s.Text, msg)
			}
			if n > maxSpecs {
				fmt.Fprintf(w, "  [%s] ... and %d more failed specs (see %s)\n", h.Name, n-maxSpecs, r.ReportJSON)
			}
		}
	}
}

func titles(cols []column) []string {
	var t []string
	for _, c := range cols {
		t = append(t, c.title)
	}
	return t
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
