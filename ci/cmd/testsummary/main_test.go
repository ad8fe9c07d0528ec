package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/ci/internal/testjson"
)

// run feeds a recorded `go test -json` stream through a summary.
func run(t *testing.T, file string, noSkip *regexp.Regexp) (string, bool) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	s := newSummary(&out, noSkip, false)
	if err := testjson.Read(f, s.event, s.raw); err != nil {
		t.Fatal(err)
	}
	ok := s.finish()
	return out.String(), ok
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestBuildFailureAndSkip(t *testing.T) {
	out, ok := run(t, "testdata/mixed.json", nil)
	if ok {
		t.Error("a build failure must fail the run")
	}
	if got, want := lastLine(out), "tests: 3 passed, 1 failed, 1 skipped"; got != want {
		t.Errorf("closing line %q, want %q", got, want)
	}
	for _, want := range []string{"undefined: undefined", "FAILED PACKAGE: example.com/gk/broken", "ok  \texample.com/gk\t"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SKIPPED (not allowed here)") || strings.Contains(out, "no server") {
		t.Errorf("skip reported without -no-skip:\n%s", out)
	}

	out, _ = run(t, "testdata/mixed.json", regexp.MustCompile(`/gk$`))
	if !strings.Contains(out, "SKIPPED (not allowed here): example.com/gk.TestSkip") || !strings.Contains(out, "no server") {
		t.Errorf("forbidden skip not reported with its reason:\n%s", out)
	}
}

func TestFailedTestOutputShown(t *testing.T) {
	out, ok := run(t, "testdata/ginkgo-fail.json", nil)
	if ok {
		t.Error("a failed test must fail the run")
	}
	for _, want := range []string{"FAIL! -- 2 Passed | 1 Failed", "FAILED TEST: example.com/gk.TestX", "FAIL\texample.com/gk\t"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got, want := lastLine(out), "tests: 0 passed, 1 failed, 0 skipped"; got != want {
		t.Errorf("closing line %q, want %q", got, want)
	}
}

func TestPassingRunIsQuiet(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"noise\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}
`
	var out strings.Builder
	s := newSummary(&out, regexp.MustCompile("p"), false)
	if err := testjson.Read(strings.NewReader(in), s.event, s.raw); err != nil {
		t.Fatal(err)
	}
	if !s.finish() {
		t.Error("passing run reported as failed")
	}
	if want := "ok  \tp\t0.1s\ntests: 1 passed, 0 failed, 0 skipped\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}
