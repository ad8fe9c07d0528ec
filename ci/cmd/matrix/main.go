// Command matrix runs checkpointkit's conformance suite against a set of
// backends and prints one matrix: rows are capabilities, columns are
// backends, cells say passed / failed / skipped / not supported with
// counts, and each backend's conformance level closes its column.
//
// For every backend it runs, from the current directory,
//
//	go test -json -count=1 -run '^TestConformance$' ./adapters/<backend>/ \
//	    -ginkgo.v -ginkgo.no-color -ginkgo.junit-report=<out>/<backend>.junit.xml
//
// with CHECKPOINTKIT_REPORT_JSON=<out>/<backend>.report.json, shows its
// progress (backend, capability group, specs done, elapsed), and keeps its
// full output in <out>/<backend>.log. The combined result is written to
// <out>/matrix.json and <out>/matrix.txt. The exit status is non-zero if
// any backend failed.
//
// This program does not start database servers: the postgres and mongo
// backends need CHECKPOINTKIT_POSTGRES_DSN and CHECKPOINTKIT_MONGO_URI, the
// pgbouncer backend (the postgres adapter through PgBouncer) both
// CHECKPOINTKIT_POSTGRES_DSN and CHECKPOINTKIT_PGBOUNCER_DSN. The
// ci/matrix script starts throwaway servers when those are not set and then
// runs this program. A backend may also be given as NAME=PACKAGE (for
// example redis=./ in a third-party adapter's repository).
//
// Usage:
//
//	go run ./ci/cmd/matrix [-backends memory,sqlite,...] [-out DIR] [-label-filter EXPR]
//	    [-focus REGEXP] [-race] [-min-level FULL] [-json] [-- extra go test flags]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/checkpointkit/checkpointkit/ci/internal/testjson"
	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// builtin lists the built-in backends: checkpointkit's four adapters and
// LangGraph.js's four savers, judged through the bridge. env names the
// variable that must hold their server's address.
var builtin = []backend{
	{name: "memory", pkg: "./adapters/memory"},
	{name: "sqlite", pkg: "./adapters/sqlite"},
	{name: "postgres", pkg: "./adapters/postgres", env: "CHECKPOINTKIT_POSTGRES_DSN"},
	// The PostgreSQL adapter through PgBouncer in transaction mode (it
	// also needs CHECKPOINTKIT_POSTGRES_DSN, to empty and drop schemas).
	{name: "pgbouncer", pkg: "./adapters/postgres", env: "CHECKPOINTKIT_PGBOUNCER_DSN", setenv: []string{"CHECKPOINTKIT_PG_VIA=pgbouncer"}},
	{name: "mongo", pkg: "./adapters/mongo", env: "CHECKPOINTKIT_MONGO_URI"},
	lgjs("memory", ""),
	lgjs("sqlite", ""),
	lgjs("postgres", "CHECKPOINTKIT_POSTGRES_DSN"),
	lgjs("mongo", "CHECKPOINTKIT_MONGO_URI"),
}

// lgjs is the backend that runs the suite on LangGraph.js's saver of the
// given kind through the bridge (package bridge/lgjs). Its spec failures
// are findings about third-party code, so they do not fail the matrix.
func lgjs(kind, env string) backend {
	return backend{
		name: "lgjs-" + kind, pkg: "./bridge/lgjs", env: env,
		setenv: []string{"CHECKPOINTKIT_LGJS_SAVER=" + kind}, thirdParty: true,
	}
}

// options are the command-line flags.
type options struct {
	backends    []backend
	out         string
	labelFilter string
	focus       string
	run         string
	tags        string
	timeout     string
	race        bool
	jsonOut     bool
	verbose     bool
	minLevel    report.Level
	heartbeat   time.Duration
	parallel    int
	suffix      string
	from        string
	markdown    string
	extra       []string // go test flags after "--"
}

// backend is one column to run.
type backend struct {
	name, pkg, env string
	// setenv holds extra NAME=VALUE pairs for the go test of this backend.
	setenv []string
	// thirdParty marks a saver that checkpointkit does not maintain: its
	// run must complete and write its report, but failed specs and a low
	// level are findings, not failures of the matrix. It runs without
	// -race.
	thirdParty bool
}

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "matrix:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, opts, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "matrix:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var backends, minLevel string
	fs.StringVar(&backends, "backends", "", "comma-separated backends: memory, sqlite, postgres, pgbouncer, mongo, or NAME=PACKAGE (default: memory, sqlite, and postgres/pgbouncer/mongo when their connection string is set)")
	fs.StringVar(&o.out, "out", filepath.Join("out", "matrix"), "output directory for the JUnit XML, JSON reports and logs")
	fs.StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'list' or 'put || get_tuple' (one capability)")
	fs.StringVar(&o.focus, "focus", "", "Ginkgo focus regexp on spec texts, e.g. 'LIST-BEFORE-2' (one rule)")
	fs.StringVar(&o.run, "run", "^TestConformance$", "go test -run pattern selecting the conformance test")
	fs.StringVar(&o.tags, "tags", "", "go build tags")
	fs.StringVar(&o.timeout, "timeout", "10m", "go test -timeout for each backend")
	fs.BoolVar(&o.race, "race", false, "build with the race detector")
	fs.BoolVar(&o.jsonOut, "json", false, "print the combined matrix as JSON on stdout (the table and progress go to stderr)")
	fs.BoolVar(&o.verbose, "v", false, "stream the full test output instead of progress lines")
	fs.StringVar(&minLevel, "min-level", "", "fail a backend whose level is below this: BASE or FULL (default: fail only on failed specs)")
	fs.IntVar(&o.parallel, "parallel", 2, "run this many backends at once (the slowest starts first)")
	fs.StringVar(&o.suffix, "suffix", "", "append this to the backend names in the results, e.g. '@15' for a server version")
	fs.StringVar(&o.from, "from", "", "run nothing: combine the matrix.json files found under this directory (e.g. downloaded CI artifacts) into one matrix")
	fs.StringVar(&o.markdown, "markdown", "", "also append the matrix as a Markdown table to this file (e.g. $GITHUB_STEP_SUMMARY)")
	fs.DurationVar(&o.heartbeat, "heartbeat", 10*time.Second, "print a progress line at least this often")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: matrix [flags] [-- extra go test or test binary flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.extra = fs.Args()
	switch report.Level(minLevel) {
	case "", report.LevelNone:
	case report.LevelPartial, report.LevelBase, report.LevelFull:
		o.minLevel = report.Level(minLevel)
	default:
		return o, fmt.Errorf("-min-level %q: want PARTIAL, BASE or FULL", minLevel)
	}
	var err error
	o.backends, err = parseBackends(backends)
	return o, err
}

// parseBackends resolves the -backends list.
func parseBackends(list string) ([]backend, error) {
	var names []string
	if strings.TrimSpace(list) == "" {
		for _, b := range builtin {
			if !b.thirdParty && (b.env == "" || os.Getenv(b.env) != "") {
				names = append(names, b.name)
			}
		}
	} else {
		for _, n := range strings.Split(list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	var out []backend
	for _, n := range names {
		var b backend
		if name, pkg, ok := strings.Cut(n, "="); ok {
			b = backend{name: name, pkg: pkg}
		} else {
			i := slices.IndexFunc(builtin, func(x backend) bool { return x.name == n })
			if i < 0 {
				return nil, fmt.Errorf("unknown backend %q (want memory, sqlite, postgres, pgbouncer, mongo, lgjs-memory, lgjs-sqlite, lgjs-postgres, lgjs-mongo or NAME=PACKAGE)", n)
			}
			b = builtin[i]
		}
		if slices.ContainsFunc(out, func(x backend) bool { return x.name == b.name }) {
			return nil, fmt.Errorf("backend %q given twice", b.name)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, errors.New("no backends to run")
	}
	return out, nil
}

// run runs every backend, prints the matrix and reports whether all
// backends passed.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (bool, error) {
	out, err := filepath.Abs(o.out)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return false, err
	}
	o.out = out
	if o.from != "" {
		results, err := readResults(o.from, out)
		if err != nil {
			return false, err
		}
		return writeResults(o, newMatrix(results), time.Duration(0), stdout, stderr)
	}
	for _, b := range o.backends {
		if b.env != "" && os.Getenv(b.env) == "" {
			return false, fmt.Errorf("backend %s needs %s (ci/matrix starts a throwaway server when it is not set)", b.name, b.env)
		}
	}
	names := make([]string, len(o.backends))
	for i, b := range o.backends {
		names[i] = b.name
	}
	fmt.Fprintf(stderr, "conformance matrix: %s -> %s\n", strings.Join(names, ", "), out)
	start := time.Now()
	results := make([]Result, len(o.backends))
	sem := make(chan struct{}, max(1, o.parallel))
	var wg sync.WaitGroup
	for _, i := range runOrder(o.backends) {
		b := o.backends[i]
		sem <- struct{}{}
		if ctx.Err() != nil {
			results[i] = Result{Backend: b.name, Package: b.pkg, Problems: []string{"interrupted"}}
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = runBackend(ctx, o, b, stderr)
		}()
	}
	wg.Wait()
	m := newMatrix(results)
	if ctx.Err() != nil {
		m.Passed = false
	}
	return writeResults(o, m, time.Since(start), stdout, stderr)
}

// writeResults prints the matrix and writes matrix.txt, matrix.json and the
// Markdown file; it reports whether every backend passed.
func writeResults(o options, m Matrix, took time.Duration, stdout, stderr io.Writer) (bool, error) {
	out := o.out
	var text bytes.Buffer
	m.WriteText(&text)
	fmt.Fprintf(&text, "\nconformance matrix: %d backends in %.1fs, results in %s\n", len(m.Backends), took.Seconds(), out)
	if err := os.WriteFile(filepath.Join(out, "matrix.txt"), text.Bytes(), 0o644); err != nil {
		return false, err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return false, err
	}
	if err := os.WriteFile(filepath.Join(out, "matrix.json"), append(data, '\n'), 0o644); err != nil {
		return false, err
	}
	if o.markdown != "" {
		f, err := os.OpenFile(o.markdown, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return false, err
		}
		m.WriteMarkdown(f)
		if err := f.Close(); err != nil {
			return false, err
		}
	}
	closing := fmt.Sprintf("conformance: %d passed, %d failed, %d skipped\n",
		m.Specs.Passed, m.Specs.Failed, m.Specs.Skipped+m.Specs.NotSupported)
	if tp := m.ThirdPartySpecs; tp != (report.Counts{}) {
		// Printed before the closing line, which counts only
		// checkpointkit's own savers.
		closing = fmt.Sprintf("third-party savers (findings, not failures): %d specs passed, %d failed, %d skipped\n",
			tp.Passed, tp.Failed, tp.Skipped+tp.NotSupported) + closing
	}
	if o.jsonOut {
		fmt.Fprint(stderr, text.String())
		fmt.Fprint(stderr, closing)
		fmt.Fprintln(stdout, string(data))
	} else {
		fmt.Fprint(stdout, text.String())
		fmt.Fprint(stdout, closing)
	}
	return m.Passed, nil
}

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

// readResults collects the backend results of every matrix.json under dir,
// except those in the output directory out, ordered by backend name.
func readResults(dir, out string) ([]Result, error) {
	var results []Result
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if abs, _ := filepath.Abs(path); d.IsDir() && abs == out {
			return filepath.SkipDir // our own previous output
		}
		if d.IsDir() || d.Name() != "matrix.json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var m Matrix
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		results = append(results, m.Backends...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("no matrix.json under %s", dir)
	}
	rank := func(name string) int {
		base, _, _ := strings.Cut(name, "@")
		if i := slices.IndexFunc(builtin, func(x backend) bool { return x.name == base }); i >= 0 {
			return i
		}
		return len(builtin)
	}
	slices.SortStableFunc(results, func(a, b Result) int {
		if d := rank(a.Backend) - rank(b.Backend); d != 0 {
			return d
		}
		return strings.Compare(a.Backend, b.Backend)
	})
	return results, nil
}

// slowFirst lists the built-in backends from the slowest suite to the
// fastest (FerretDB is much slower than the others).
var slowFirst = []string{"mongo", "postgres", "pgbouncer", "sqlite", "memory"}

// runOrder returns the indexes of bs in the order to start them: the
// slowest first, so that with -parallel the others run beside it instead
// of after it. Columns keep the order of -backends.
func runOrder(bs []backend) []int {
	order := make([]int, len(bs))
	for i := range order {
		order[i] = i
	}
	rank := func(i int) int {
		if r := slices.Index(slowFirst, bs[i].name); r >= 0 {
			return r
		}
		return -1 // unknown backends (third-party servers) first too
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(a) - rank(b) })
	return order
}
