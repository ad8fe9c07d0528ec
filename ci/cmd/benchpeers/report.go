package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

const (
	beginMarker = "<!-- bench-peers:begin -->"
	endMarker   = "<!-- bench-peers:end -->"
)

// saverOrder is the order of the table's rows.
var saverOrder = []string{"memory", "sqlite", "postgres", "mongo", "mongo-pg"}

// sideOrder is the order of each saver's rows: the Go adapter, then its
// LangGraph.js counterpart, then LangGraph Python's, sync and async API.
var sideOrder = []string{"go", "js", "py", "py-async"}

// peerLabel names a peer side in the ratio rows.
var peerLabel = map[string]string{"js": "LangGraph.js", "py": "LangGraph Python", "py-async": "LangGraph Python async"}

func reportCmd(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "", "directory holding the *.json results of ci/bench-peers")
	doc := fs.String("doc", "", "Markdown file whose bench-peers section is replaced with the table")
	note := fs.String("note", "", "a line printed above the table (how and where it was measured)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("report: -in is required")
	}
	files, err := filepath.Glob(filepath.Join(*in, "*.json"))
	if err != nil {
		return err
	}
	var results []result
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r result
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		// Files are named ROUND-SIDE-SAVER.json by ci/bench-peers.
		r.round, _, _ = strings.Cut(filepath.Base(f), "-")
		results = append(results, r)
	}
	if len(results) == 0 {
		return fmt.Errorf("report: no result in %s", *in)
	}
	table := render(combine(results), *note)
	os.Stdout.WriteString(table)
	if *doc != "" {
		return writeSection(*doc, table)
	}
	return nil
}

// summary is the median over the rounds of one side's figures on one saver.
type summary struct {
	result
	rounds int
	// byRound holds the results of each round, for ratios taken within a
	// round (both sides of a saver run back to back; load drifts between
	// rounds).
	byRound map[string]result
}

// combine groups results by side and saver and takes the median of every
// figure over the rounds.
func combine(results []result) map[string]*summary {
	groups := map[string][]result{}
	for _, r := range results {
		k := r.Side + "/" + r.Saver
		groups[k] = append(groups[k], r)
	}
	out := map[string]*summary{}
	for k, rs := range groups {
		s := &summary{result: rs[0], rounds: len(rs), byRound: map[string]result{}}
		for _, r := range rs {
			s.byRound[r.round] = r
		}
		s.PutMS = med(rs, func(r result) float64 { return r.PutMS })
		s.GetMS = make([]float64, len(s.Depths))
		s.ListMS = make([]float64, len(s.Depths))
		for i := range s.Depths {
			s.GetMS[i] = med(rs, func(r result) float64 { return at(r.GetMS, i) })
			s.ListMS[i] = med(rs, func(r result) float64 { return at(r.ListMS, i) })
		}
		if s.Allocs != nil {
			a := *s.Allocs
			op := func(f func(allocs) opAllocs) opAllocs {
				return opAllocs{
					Count: med(rs, func(r result) float64 { return f(allocsOf(r)).Count }),
					Bytes: med(rs, func(r result) float64 { return f(allocsOf(r)).Bytes }),
				}
			}
			a.Put = op(func(a allocs) opAllocs { return a.Put })
			a.Get = op(func(a allocs) opAllocs { return a.Get })
			a.List = op(func(a allocs) opAllocs { return a.List })
			s.Allocs = &a
		}
		out[k] = s
	}
	return out
}

func allocsOf(r result) allocs {
	if r.Allocs == nil {
		return allocs{}
	}
	return *r.Allocs
}

func at(v []float64, i int) float64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func med(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// figure formats a latency in milliseconds with three significant digits.
func figure(v float64) string {
	switch {
	case v <= 0:
		return "—"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// roundRatio returns the median over the rounds both a and b ran of
// num(round of a) / den(round of b), or 0 when there is none.
func roundRatio(a, b *summary, num, den func(result) float64) float64 {
	var rs []result
	for round, ra := range a.byRound {
		rb, ok := b.byRound[round]
		if !ok || num(ra) <= 0 || den(rb) <= 0 {
			continue
		}
		rs = append(rs, result{PutMS: num(ra) / den(rb)})
	}
	if len(rs) == 0 {
		return 0
	}
	return med(rs, func(r result) float64 { return r.PutMS })
}

// speedup formats a ratio of a LangGraph saver's time over Go's, bold when
// it reaches the 2x target.
func speedup(r float64) string {
	if r <= 0 {
		return "—"
	}
	if r >= 2 {
		return fmt.Sprintf("**%.1f×**", r)
	}
	return fmt.Sprintf("%.2f× (below 2)", r)
}

func ratio(r float64) string {
	if r <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", r)
}

func pair(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = figure(x)
	}
	return strings.Join(parts, " / ")
}

func depthLabel(d []int) string {
	parts := make([]string, len(d))
	for i, x := range d {
		parts[i] = fmt.Sprintf("%d", x)
	}
	return strings.Join(parts, " / ")
}

func render(sums map[string]*summary, note string) string {
	var b bytes.Buffer
	if note != "" {
		fmt.Fprintf(&b, "%s\n\n", note)
	}
	b.WriteString("| saver | depths | put ms | get latest ms (by depth) | list(10) ms (by depth) | rounds |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, name := range saverOrder {
		for _, side := range sideOrder {
			if s := sums[side+"/"+name]; s != nil {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d |\n", s.Name, depthLabel(s.Depths),
					figure(s.PutMS), pair(s.GetMS), pair(s.ListMS), s.rounds)
			}
		}
		g := sums["go/"+name]
		for _, side := range sideOrder[1:] {
			j := sums[side+"/"+name]
			if g == nil || j == nil || !slices.Equal(g.Depths, j.Depths) {
				continue
			}
			get := make([]string, len(g.Depths))
			lst := make([]string, len(g.Depths))
			for i := range g.Depths {
				get[i] = speedup(roundRatio(j, g, func(r result) float64 { return at(r.GetMS, i) }, func(r result) float64 { return at(r.GetMS, i) }))
				lst[i] = speedup(roundRatio(j, g, func(r result) float64 { return at(r.ListMS, i) }, func(r result) float64 { return at(r.ListMS, i) }))
			}
			put := speedup(roundRatio(j, g, func(r result) float64 { return r.PutMS }, func(r result) float64 { return r.PutMS }))
			fmt.Fprintf(&b, "| *%s time / Go time* | | %s | %s | %s | |\n",
				peerLabel[side], put, strings.Join(get, " / "), strings.Join(lst, " / "))
		}
	}

	b.WriteString("\nLatencies are medians over the rounds; every ratio is the median of the ratios measured within each round.\n")
	b.WriteString("\nDepth ratios (time at the deepest history / time at depth 10; target at most 1.2):\n\n")
	b.WriteString("| saver | depths | get latest | list(10) |\n| --- | --- | ---: | ---: |\n")
	for _, name := range saverOrder {
		for _, side := range sideOrder {
			s := sums[side+"/"+name]
			if s == nil || len(s.Depths) < 2 {
				continue
			}
			last := len(s.Depths) - 1
			get := roundRatio(s, s, func(r result) float64 { return at(r.GetMS, last) }, func(r result) float64 { return at(r.GetMS, 0) })
			lst := roundRatio(s, s, func(r result) float64 { return at(r.ListMS, last) }, func(r result) float64 { return at(r.ListMS, 0) })
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.Name, depthLabel(s.Depths), ratio(get), ratio(lst))
		}
	}

	b.WriteString("\nAllocations of the Go adapters per call (depth 10; runtime.MemStats around a loop of their own):\n\n")
	b.WriteString("| adapter | put allocs | put KB | get allocs | get KB | list allocs | list KB | list payload KB | list KB / payload |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, name := range saverOrder {
		s := sums["go/"+name]
		if s == nil || s.Allocs == nil {
			continue
		}
		a := s.Allocs
		per := "—"
		if a.ListPayload > 0 {
			per = fmt.Sprintf("%.2f", a.List.Bytes/float64(a.ListPayload))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.1f | %.0f | %.1f | %.0f | %.1f | %.1f | %s |\n", s.Name,
			a.Put.Count, a.Put.Bytes/1024, a.Get.Count, a.Get.Bytes/1024,
			a.List.Count, a.List.Bytes/1024, float64(a.ListPayload)/1024, per)
	}
	return b.String()
}

// writeSection puts table between the markers of the file at path, or
// appends a section holding the markers and the table.
func writeSection(path, table string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	s := string(old)
	block := beginMarker + "\n" + table + endMarker
	i := strings.Index(s, beginMarker)
	j := strings.Index(s, endMarker)
	if i >= 0 && j > i {
		s = s[:i] + block + s[j+len(endMarker):]
	} else {
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += "\n## Side by side with LangGraph.js\n\n" + block + "\n"
	}
	return os.WriteFile(path, []byte(s), 0o644)
}
