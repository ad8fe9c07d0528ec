package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const (
	beginMarker = "<!-- bench-delta:begin -->"
	endMarker   = "<!-- bench-delta:end -->"
)

var (
	saverOrder = []string{"memory", "sqlite", "postgres", "mongo"}
	sideOrder  = []string{"go", "py"}
	modeOrder  = []string{"list", "delta100", "delta50"}
	modeNames  = map[string]string{"list": "list", "delta100": "delta (100)", "delta50": "delta (50)"}
)

func reportCmd(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "", "directory of *.jsonl results")
	doc := fs.String("doc", "", "Markdown file whose bench-delta section to replace")
	note := fs.String("note", "", "a line printed under the tables")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pts, err := readPoints(*in)
	if err != nil {
		return err
	}
	table := render(pts, *note)
	fmt.Print(table)
	if *doc == "" {
		return nil
	}
	return replaceSection(*doc, table)
}

func readPoints(dir string) ([]point, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []point
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var p point
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				fh.Close()
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			out = append(out, p)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no results under %q", dir)
	}
	return out, nil
}

// row is the points of one saver, side and mode, by step.
type row struct {
	name, mode string
	at         map[int]point
}

func rows(pts []point) ([]row, []int) {
	var steps []int
	idx := map[[3]string]*row{}
	for _, p := range pts {
		k := [3]string{p.Saver, p.Side, p.Mode}
		r := idx[k]
		if r == nil {
			r = &row{name: p.Name, mode: p.Mode, at: map[int]point{}}
			idx[k] = r
		}
		r.at[p.Step] = p
		if !slices.Contains(steps, p.Step) {
			steps = append(steps, p.Step)
		}
	}
	slices.Sort(steps)
	var out []row
	for _, s := range saverOrder {
		for _, d := range sideOrder {
			for _, m := range modeOrder {
				if r := idx[[3]string{s, d, m}]; r != nil {
					out = append(out, *r)
				}
			}
		}
	}
	return out, steps
}

func render(pts []point, note string) string {
	rs, steps := rows(pts)
	var b strings.Builder
	b.WriteString("Bytes stored by the thread after each step (growth: the ratio over the row's last tenfold of steps; 10 is linear, 100 quadratic):\n\n| Saver | Channel |")
	for _, s := range steps {
		fmt.Fprintf(&b, " step %d |", s)
	}
	b.WriteString(" growth |\n|---|---|" + strings.Repeat("---:|", len(steps)+1) + "\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %s |", r.name, modeNames[r.mode])
		for _, s := range steps {
			fmt.Fprintf(&b, " %s |", cellBytes(r.at, s))
		}
		first, last := r.span()
		growth := "–"
		if _, ok := r.at[last/10]; ok && last/10 >= first {
			growth = ratio(r.at, last/10, last, func(p point) float64 { return float64(p.Bytes) })
		}
		fmt.Fprintf(&b, " %s |\n", growth)
	}
	b.WriteString("\nOne read of the latest state, median ms; in brackets the writes the delta history replayed (and the statements or commands one read sent, where counted); `snap`: the checkpoint held a snapshot, no history was read. The last two columns divide the row's last step, and its slowest step, by its first:\n\n| Saver | Channel |")
	for _, s := range steps {
		fmt.Fprintf(&b, " step %d |", s)
	}
	b.WriteString(" last ÷ first | slowest ÷ first |\n|---|---|" + strings.Repeat("---:|", len(steps)+2) + "\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %s |", r.name, modeNames[r.mode])
		first, last := r.span()
		worst := 0.0
		for _, s := range steps {
			p, ok := r.at[s]
			if !ok {
				b.WriteString(" – |")
				continue
			}
			if f := r.at[first]; f.ReadMS > 0 && s != first {
				worst = max(worst, p.ReadMS/f.ReadMS)
			}
			fmt.Fprintf(&b, " %s%s |", fmtMS(p.ReadMS), readDetail(p))
		}
		fmt.Fprintf(&b, " %s | %s |\n", ratio(r.at, first, last, func(p point) float64 { return p.ReadMS }), fmtRatio(worst))
	}
	writeOverhead(&b, rs, steps)
	if note != "" {
		b.WriteString("\n" + note + "\n")
	}
	return b.String()
}

// writeOverhead prints, per delta row, its read latency minus that of the
// same side's list row at the same step: what reading through the delta
// history costs on top of loading a value of the same size.
func writeOverhead(b *strings.Builder, rs []row, steps []int) {
	lists := map[string]row{}
	for _, r := range rs {
		if r.mode == "list" {
			lists[r.name] = r
		}
	}
	b.WriteString("\nThe cost of the history: a delta read minus the list read of the same saver at the same step (median ms; the value loaded is the same size):\n\n| Saver | Channel |")
	for _, s := range steps {
		fmt.Fprintf(b, " step %d |", s)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(steps)) + "\n")
	for _, r := range rs {
		l, ok := lists[r.name]
		if r.mode == "list" || !ok {
			continue
		}
		fmt.Fprintf(b, "| %s | %s |", r.name, modeNames[r.mode])
		for _, s := range steps {
			p, ok1 := r.at[s]
			q, ok2 := l.at[s]
			if !ok1 || !ok2 {
				b.WriteString(" – |")
				continue
			}
			d := p.ReadMS - q.ReadMS
			sign := "+"
			if d < 0 {
				sign, d = "−", -d
			}
			fmt.Fprintf(b, " %s%s%s |", sign, fmtMS(d), readDetail(p))
		}
		b.WriteString("\n")
	}
}

// span returns the first and last steps measured in r.
func (r row) span() (first, last int) {
	first = -1
	for s := range r.at {
		if first < 0 || s < first {
			first = s
		}
		last = max(last, s)
	}
	return first, last
}

func readDetail(p point) string {
	switch {
	case p.Mode == "list":
		return ""
	case !p.History:
		return " (snap)"
	case p.Queries >= 0:
		return fmt.Sprintf(" (%d; %d q)", p.Replayed, p.Queries)
	default:
		return fmt.Sprintf(" (%d)", p.Replayed)
	}
}

func cellBytes(at map[int]point, s int) string {
	p, ok := at[s]
	if !ok {
		return "–"
	}
	return fmtBytes(p.Bytes)
}

func ratio(at map[int]point, a, b int, f func(point) float64) string {
	pa, ok1 := at[a]
	pb, ok2 := at[b]
	if !ok1 || !ok2 || f(pa) <= 0 {
		return "–"
	}
	return fmtRatio(f(pb) / f(pa))
}

func fmtRatio(x float64) string {
	if x <= 0 {
		return "–"
	}
	if x >= 10 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func fmtBytes(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func fmtMS(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 1:
		return fmt.Sprintf("%.2f", ms)
	}
	return fmt.Sprintf("%.3f", ms)
}

// replaceSection puts table between the bench-delta markers of path,
// appending a section with the markers when they are missing.
func replaceSection(path, table string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(data)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	body := beginMarker + "\n" + table + endMarker
	if i < 0 || j < i {
		s = strings.TrimRight(s, "\n") + "\n\n## Storage growth of a delta channel (`ci/bench-delta`)\n\n" + body + "\n"
	} else {
		s = s[:i] + body + s[j+len(endMarker):]
	}
	return os.WriteFile(path, []byte(s), 0o644)
}
