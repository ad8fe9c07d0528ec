// Command testsummary reads `go test -json` output on stdin and prints what
// plain `go test` would print (the ok/FAIL line of each package and the
// output of failed tests), then one closing line:
//
//	tests: N passed, N failed, N skipped
//
// It exits non-zero if a test or package failed, or if a test was skipped
// in a package matched by -no-skip: in CI, a skipped backend test means a
// backend that was not tested.
//
// Usage:
//
//	go test -json ./... | go run ./ci/cmd/testsummary [-no-skip REGEXP] [-v]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/checkpointkit/checkpointkit/ci/internal/testjson"
)

func main() {
	fs := flag.NewFlagSet("testsummary", flag.ExitOnError)
	noSkip := fs.String("no-skip", "", "regexp of package import paths in which a skipped test is a failure")
	verbose := fs.Bool("v", false, "print the output of every test, not only of failed ones")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go test -json ./... | testsummary [-no-skip REGEXP] [-v]")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	var re *regexp.Regexp
	if *noSkip != "" {
		var err error
		if re, err = regexp.Compile(*noSkip); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary: -no-skip:", err)
			os.Exit(2)
		}
	}
	s := newSummary(os.Stdout, re, *verbose)
	if err := testjson.Read(os.Stdin, s.event, s.raw); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary: reading stdin:", err)
		os.Exit(2)
	}
	if !s.finish() {
		os.Exit(1)
	}
}

// summary turns the event stream into go test's plain output.
type summary struct {
	w       io.Writer
	noSkip  *regexp.Regexp
	verbose bool

	counts testjson.Counts
	// out buffers the output of running tests and of packages outside
	// any test, keyed by package + "\x00" + test.
	out map[string][]string
	// failedTests and forbiddenSkips are "package.Test" names.
	failedTests    []string
	forbiddenSkips []string
	// testFailedIn is the set of packages in which a test failed.
	testFailedIn map[string]bool
	// failedPackages lists packages that failed without a failing test
	// (build failures, panics outside tests, TestMain exits).
	failedPackages []string
}

func newSummary(w io.Writer, noSkip *regexp.Regexp, verbose bool) *summary {
	return &summary{w: w, noSkip: noSkip, verbose: verbose, out: map[string][]string{}, testFailedIn: map[string]bool{}}
}

func key(e testjson.Event) string { return e.Package + "\x00" + e.Test }

func (s *summary) raw(line string) {
	fmt.Fprintln(s.w, line)
}

func (s *summary) event(e testjson.Event) {
	switch e.Action {
	case testjson.ActionBuildOutput:
		fmt.Fprint(s.w, e.Output)
		return
	case testjson.ActionOutput:
		if s.verbose {
			fmt.Fprint(s.w, e.Output)
			return
		}
		if e.Test == "" && isPackageResult(e.Output) {
			fmt.Fprint(s.w, e.Output)
			return
		}
		s.out[key(e)] = append(s.out[key(e)], e.Output)
		return
	}
	s.counts.Add(e)
	k := key(e)
	switch e.Action {
	case testjson.ActionFail:
		if e.Test != "" {
			s.failedTests = append(s.failedTests, e.Package+"."+e.Test)
			s.testFailedIn[e.Package] = true
		} else if !s.testFailedIn[e.Package] {
			s.failedPackages = append(s.failedPackages, e.Package)
		}
		s.flush(k)
	case testjson.ActionSkip:
		if e.Test != "" && s.noSkip != nil && s.noSkip.MatchString(e.Package) {
			s.forbiddenSkips = append(s.forbiddenSkips, e.Package+"."+e.Test)
			s.flush(k)
		}
	}
	if e.Action == testjson.ActionPass || e.Action == testjson.ActionSkip || e.Action == testjson.ActionFail {
		delete(s.out, k)
	}
}

// flush prints the buffered output of k.
func (s *summary) flush(k string) {
	for _, line := range s.out[k] {
		fmt.Fprint(s.w, line)
	}
	delete(s.out, k)
}

// isPackageResult reports whether line is go test's closing line of a
// package ("ok  \tpkg\t0.1s", "FAIL\tpkg\t0.1s", "?   \tpkg\t[no test files]").
func isPackageResult(line string) bool {
	return strings.HasPrefix(line, "ok  \t") || strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "?   \t")
}

// finish prints the failures and the closing line, and reports whether the
// run passed.
func (s *summary) finish() bool {
	// Output left over belongs to tests that never ended (the binary
	// crashed or timed out): show it.
	var left []string
	for k := range s.out {
		left = append(left, k)
	}
	sort.Strings(left)
	for _, k := range left {
		if pkg, test, _ := strings.Cut(k, "\x00"); test != "" && !s.testFailedIn[pkg] {
			s.failedTests = append(s.failedTests, pkg+"."+test+" (did not finish)")
		}
		s.flush(k)
	}
	failed := s.counts.Failed + len(s.failedPackages)
	if len(s.failedTests) > 0 || len(s.failedPackages) > 0 || len(s.forbiddenSkips) > 0 {
		fmt.Fprintln(s.w)
	}
	for _, t := range s.failedTests {
		fmt.Fprintln(s.w, "FAILED TEST:", t)
	}
	for _, p := range s.failedPackages {
		fmt.Fprintln(s.w, "FAILED PACKAGE:", p)
	}
	for _, t := range s.forbiddenSkips {
		fmt.Fprintln(s.w, "SKIPPED (not allowed here):", t)
	}
	fmt.Fprintf(s.w, "tests: %d passed, %d failed, %d skipped\n", s.counts.Passed, failed, s.counts.Skipped)
	return failed == 0 && len(s.failedTests) == 0 && len(s.forbiddenSkips) == 0
}
