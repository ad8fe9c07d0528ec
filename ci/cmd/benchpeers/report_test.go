package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteSectionReplacesBetweenMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	before := "# Doc\n\nintro\n\n" + beginMarker + "\nold table\n" + endMarker + "\n\nafter\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(path, "new table\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "# Doc\n\nintro\n\n" + beginMarker + "\nnew table\n" + endMarker + "\n\nafter\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Without markers, a section is appended.
	other := filepath.Join(t.TempDir(), "other.md")
	if err := os.WriteFile(other, []byte("# Other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(other, "t\n"); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(other)
	if !strings.HasPrefix(string(got), "# Other\n") || !strings.Contains(string(got), beginMarker+"\nt\n"+endMarker) {
		t.Errorf("appended section:\n%s", got)
	}
}

func TestRatiosAreTakenWithinRounds(t *testing.T) {
	var rs []result
	// Round 2 is slow for both sides: medians of the figures would mix
	// rounds, ratios within a round do not.
	for _, r := range []struct {
		round       string
		goMS, jsMS  float64
		shallow, dp float64
	}{{"1", 1, 3, 1, 1.1}, {"2", 10, 30, 1, 1.0}, {"3", 2, 6, 2, 2.4}} {
		rs = append(rs,
			result{Side: "go", Saver: "memory", Name: "Go memory", Depths: []int{10, 2000}, PutMS: r.goMS,
				GetMS: []float64{r.shallow, r.dp}, ListMS: []float64{1, 1}, round: r.round},
			result{Side: "js", Saver: "memory", Name: "JS", Depths: []int{10, 2000}, PutMS: r.jsMS,
				GetMS: []float64{1, 1}, ListMS: []float64{1, 1}, round: r.round})
	}
	sums := combine(rs)
	g, j := sums["go/memory"], sums["js/memory"]
	if got := roundRatio(j, g, func(r result) float64 { return r.PutMS }, func(r result) float64 { return r.PutMS }); got != 3 {
		t.Errorf("put ratio %v, want 3", got)
	}
	depth := roundRatio(g, g, func(r result) float64 { return r.GetMS[1] }, func(r result) float64 { return r.GetMS[0] })
	if depth < 1.09 || depth > 1.11 {
		t.Errorf("depth ratio %v, want 1.1 (the median of 1.1, 1.0, 1.2)", depth)
	}
	table := render(sums, "note")
	for _, want := range []string{"| Go memory | 10 / 2000 | 2.00 | 1.00 / 1.10 |", "**3.0×**", "| Go memory | 10 / 2000 | 1.10 |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestPythonSidesGetRowsAndRatios(t *testing.T) {
	mk := func(side, name string, put float64) result {
		return result{Side: side, Saver: "sqlite", Name: name, Depths: []int{10, 2000}, PutMS: put,
			GetMS: []float64{put, put}, ListMS: []float64{put, put}, round: "1"}
	}
	table := render(combine([]result{
		mk("go", "Go SQLite", 1), mk("js", "LangGraph.js SqliteSaver", 2),
		mk("py", "LangGraph Python SqliteSaver", 4), mk("py-async", "LangGraph Python AsyncSqliteSaver", 1.5),
	}), "")
	for _, want := range []string{
		"| LangGraph Python SqliteSaver | 10 / 2000 | 4.00 |",
		"| *LangGraph.js time / Go time* | | **2.0×** |",
		"| *LangGraph Python time / Go time* | | **4.0×** |",
		"| *LangGraph Python async time / Go time* | | 1.50× (below 2) |",
		"| LangGraph Python AsyncSqliteSaver | 10 / 2000 | 1.00 | 1.00 |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if i, j := strings.Index(table, "| Go SQLite |"), strings.Index(table, "| LangGraph Python SqliteSaver |"); i < 0 || j < i {
		t.Errorf("Go row should come first:\n%s", table)
	}
}
