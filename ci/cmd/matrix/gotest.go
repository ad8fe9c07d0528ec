package main

// Running one backend: its go test command line, the run itself, and
// reading what it left behind (exit status, JSON events, the report).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/checkpointkit/checkpointkit/ci/internal/testjson"
	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// goTestArgs builds the go test command line for backend b.
func goTestArgs(o options, b backend, junit string) []string {
	args := []string{"test", "-json", "-count=1", "-timeout", o.timeout, "-run", o.run}
	// A third-party saver runs in another process (node): the race
	// detector would only slow down the Go client, which the bridge's own
	// tests run under -race.
	if o.race && !b.thirdParty {
		args = append(args, "-race")
	}
	if o.tags != "" {
		args = append(args, "-tags", o.tags)
	}
	args = append(args, b.pkg, "-ginkgo.v", "-ginkgo.no-color", "-ginkgo.junit-report="+junit)
	if o.labelFilter != "" {
		args = append(args, "-ginkgo.label-filter="+o.labelFilter)
	}
	if o.focus != "" {
		args = append(args, "-ginkgo.focus="+o.focus)
	}
	return append(args, o.extra...)
}

// runBackend runs the conformance test of one backend and collects its
// result.
func runBackend(ctx context.Context, o options, b backend, stderr io.Writer) Result {
	name := b.name + o.suffix
	r := Result{
		Backend:    name,
		Package:    b.pkg,
		ThirdParty: b.thirdParty,
		JUnit:      filepath.Join(o.out, name+".junit.xml"),
		ReportJSON: filepath.Join(o.out, name+".report.json"),
		Log:        filepath.Join(o.out, name+".log"),
	}
	for _, f := range []string{r.JUnit, r.ReportJSON, r.Log} {
		_ = os.Remove(f) // never read a previous run's files
	}
	args := goTestArgs(o, b, r.JUnit)
	r.Command = "go " + shellJoin(args)
	fmt.Fprintf(stderr, "\n== %s: CHECKPOINTKIT_REPORT_JSON=%s %s\n", b.name, r.ReportJSON, r.Command)

	start := time.Now()
	problems, goTest := execGoTest(ctx, o, b, args, r, stderr)
	r.ElapsedSeconds = time.Since(start).Seconds()
	r.Problems = problems

	noGinkgo := false
	if data, err := os.ReadFile(r.ReportJSON); err != nil {
		log, _ := os.ReadFile(r.Log)
		noGinkgo = bytes.Contains(log, []byte("flag provided but not defined: -ginkgo."))
		if noGinkgo {
			r.Problems = append(r.Problems, "the test binary has no Ginkgo flags: this build of "+b.pkg+" has no conformance test (behind a build tag? see -tags)")
		} else {
			r.Problems = append(r.Problems, "no conformance report was written ("+r.ReportJSON+")")
		}
	} else {
		var rep report.Report
		if err := json.Unmarshal(data, &rep); err != nil {
			r.Problems = append(r.Problems, "unreadable conformance report: "+err.Error())
		} else {
			r.Report = &rep
			if b.thirdParty && reportComplete(rep) {
				// The run completed: what it found is about the saver,
				// and go test's failure only repeats that.
				r.Findings = reportProblems(rep, o.minLevel)
				r.Problems = slices.DeleteFunc(r.Problems, isSpecFailure)
			} else {
				r.Problems = append(r.Problems, reportProblems(rep, o.minLevel)...)
			}
		}
	}
	switch {
	case noGinkgo:
	case goTest.ran == 0 && goTest.skipped == 0:
		r.Problems = append(r.Problems, fmt.Sprintf("go test ran no test matching %q in %s", o.run, b.pkg))
	case goTest.skipped > 0:
		r.Problems = append(r.Problems, "the conformance test was skipped: "+goTest.skipReason)
	}
	r.Passed = len(r.Problems) == 0
	if !r.Passed && r.Report == nil && !noGinkgo {
		tail(stderr, r.Log, 40)
	}
	verdict := "passed"
	if r.Passed && len(r.Findings) > 0 {
		verdict = "completed (third-party saver: " + strings.Join(r.Findings, "; ") + ")"
	}
	if !r.Passed {
		verdict = "FAILED: " + strings.Join(r.Problems, "; ")
	}
	fmt.Fprintf(stderr, "== %s: %s in %.1fs\n", b.name, verdict, r.ElapsedSeconds)
	return r
}

// goTestOutcome summarises the go-test-level events of a run.
type goTestOutcome struct {
	ran, skipped int
	skipReason   string
	// failures holds the last output lines of each failed test.
	failures []string
}

// execGoTest runs go test, streaming its events into the log file and the
// progress printer. It returns the problems found at the go test level.
func execGoTest(ctx context.Context, o options, b backend, args []string, r Result, stderr io.Writer) ([]string, goTestOutcome) {
	var problems []string
	var outcome goTestOutcome
	logFile, err := os.Create(r.Log)
	if err != nil {
		return []string{err.Error()}, outcome
	}
	defer logFile.Close()

	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(append(os.Environ(), b.setenv...), "CHECKPOINTKIT_REPORT_JSON="+r.ReportJSON)
	// On interrupt, let go test stop its test binary cleanly first.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return []string{err.Error()}, outcome
	}
	cmd.Stderr = io.MultiWriter(logFile, stderr)
	if err := cmd.Start(); err != nil {
		return []string{"starting go test: " + err.Error()}, outcome
	}

	p := newProgress(stderr, b.name, o.heartbeat)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if !o.verbose {
					p.tick()
				}
			}
		}
	}()
	lastOutput := map[string][]string{}
	readErr := testjson.Read(stdout, func(e testjson.Event) {
		switch e.Action {
		case testjson.ActionOutput, testjson.ActionBuildOutput:
			io.WriteString(logFile, e.Output)
			switch {
			case o.verbose:
				io.WriteString(stderr, e.Output)
			case e.Action == testjson.ActionBuildOutput:
				io.WriteString(stderr, e.Output) // compile errors
			default:
				p.write(e.Output)
			}
			if e.Test != "" {
				// Keep the last lines of each test: the reason of a
				// skip or of a failure outside the specs.
				if line := strings.TrimSpace(e.Output); line != "" && !strings.HasPrefix(line, "--- ") && !strings.HasPrefix(line, "=== ") {
					last := append(lastOutput[e.Test], clip(line, 160))
					lastOutput[e.Test] = last[max(0, len(last)-4):]
				}
			}
		case testjson.ActionRun:
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				outcome.ran++
			}
		case testjson.ActionFail:
			if e.Test != "" {
				outcome.failures = append(outcome.failures, e.Test+": "+strings.Join(lastOutput[e.Test], " | "))
			}
		case testjson.ActionSkip:
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				outcome.skipped++
				outcome.skipReason = strings.Join(lastOutput[e.Test], " ")
			}
		}
	}, func(line string) {
		fmt.Fprintln(logFile, line)
		fmt.Fprintln(stderr, line)
	})
	close(done)
	if readErr != nil {
		problems = append(problems, "reading go test output: "+readErr.Error())
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			problems = append(problems, "interrupted")
		} else {
			problems = append(problems, "go test failed: "+err.Error())
			for _, f := range outcome.failures {
				problems = append(problems, "failed "+f)
			}
		}
	}
	return problems, outcome
}

// tail prints the last n lines of a file.
func tail(w io.Writer, path string, n int) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	fmt.Fprintf(w, "-- last %d lines of %s:\n%s\n", len(lines), path, strings.Join(lines, "\n"))
}

// shellJoin quotes args for display as a shell command.
func shellJoin(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}!#~") {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}

// clip shortens s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " [...]"
}
