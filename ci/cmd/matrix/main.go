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
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// builtin lists the built-in backends: checkpointkit's four adapters and
// LangGraph.js's and LangGraph Python's four savers each, judged through
// the bridge. env names the variable that must hold their server's
// address.
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
	lgpy("memory", ""),
	lgpy("sqlite", ""),
	lgpy("postgres", "CHECKPOINTKIT_POSTGRES_DSN"),
	lgpy("mongo", "CHECKPOINTKIT_MONGO_URI"),
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

// lgpy is the backend that runs the suite on LangGraph Python's saver of
// the given kind through the bridge (package bridge/lgpy). Like lgjs, its
// spec failures are findings about third-party code.
func lgpy(kind, env string) backend {
	return backend{
		name: "lgpy-" + kind, pkg: "./bridge/lgpy", env: env,
		setenv: []string{"CHECKPOINTKIT_LGPY_SAVER=" + kind}, thirdParty: true,
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
				return nil, fmt.Errorf("unknown backend %q (want memory, sqlite, postgres, pgbouncer, mongo, lgjs-memory, lgjs-sqlite, lgjs-postgres, lgjs-mongo, lgpy-memory, lgpy-sqlite, lgpy-postgres, lgpy-mongo or NAME=PACKAGE)", n)
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
