package testjson

import (
	"slices"
	"strings"
	"testing"
)

func TestReadAndCount(t *testing.T) {
	in := strings.Join([]string{
		`go: downloading example.com/x v1.0.0`,
		`{"Action":"start","Package":"p"}`,
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"skip","Package":"p","Test":"TestB"}`,
		`{"Action":"fail","Package":"p","Test":"TestC/sub"}`,
		`{"Action":"fail","Package":"p","Test":"TestC"}`,
		`{"Action":"fail","Package":"p"}`,
		`{not json`,
	}, "\n") // no final newline: the last line must still be seen
	var c Counts
	var raws []string
	var actions []string
	err := Read(strings.NewReader(in), func(e Event) {
		actions = append(actions, e.Action)
		c.Add(e)
	}, func(s string) { raws = append(raws, s) })
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counts{Passed: 1, Failed: 2, Skipped: 1}); c != want {
		t.Errorf("counts = %+v, want %+v", c, want)
	}
	if want := []string{"go: downloading example.com/x v1.0.0", "{not json"}; !slices.Equal(raws, want) {
		t.Errorf("raw lines = %q, want %q", raws, want)
	}
	if len(actions) != 8 {
		t.Errorf("got %d events, want 8", len(actions))
	}
}
