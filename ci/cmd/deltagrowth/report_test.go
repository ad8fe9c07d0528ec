package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testPoints() []point {
	var pts []point
	for _, s := range []int{10, 100} {
		pts = append(pts,
			point{Side: "go", Saver: "sqlite", Name: "Go SQLite", Mode: "list", Step: s, Bytes: int64(s * s * 250), ReadMS: float64(s) / 100},
			point{Side: "go", Saver: "sqlite", Name: "Go SQLite", Mode: "delta100", Step: s, Bytes: int64(s * 500), ReadMS: float64(s)/100 + 0.5, Replayed: s % 100, History: s%100 != 0, Queries: -1},
		)
	}
	return pts
}

func TestRender(t *testing.T) {
	got := render(testPoints(), "a note")
	for _, want := range []string{
		"| Go SQLite | list | 24 KB | 2.4 MB | 100 |",     // quadratic growth
		"| Go SQLite | delta (100) | 5 KB | 49 KB | 10 |", // linear growth
		"| Go SQLite | delta (100) | 0.600 (10) | 1.50 (snap) | 2.5 | 2.5 |",
		"| Go SQLite | delta (100) | +0.500 (10) | +0.500 (snap) |",
		"a note",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("render lacks %q in:\n%s", want, got)
		}
	}
}

func TestReplaceSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte("# Doc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := replaceSection(path, "first\n"); err != nil {
		t.Fatal(err)
	}
	if err := replaceSection(path, "second\n"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if strings.Contains(s, "first") || strings.Count(s, beginMarker) != 1 || !strings.Contains(s, beginMarker+"\nsecond\n"+endMarker) {
		t.Errorf("doc after two replacements:\n%s", s)
	}
}
