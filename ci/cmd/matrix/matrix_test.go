package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// ginkgoOutput is Ginkgo's verbose output for a passed, a skipped and a
// failed spec, as seen through go test -json (chunks may split lines).
const ginkgoOutput = `Will run 3 of 4 specs
------------------------------
checkpointkit conformance: x Put [PUT-1] stores it [put]
/src/harness.go:143
• [0.012 seconds]
------------------------------
checkpointkit conformance: x CopyThread [COPY-1] copies [copy_thread]
/src/harness.go:143
  [SKIPPED] in [It] - /src/harness.go:143
S [SKIPPED] [0.000 seconds]
checkpointkit conformance: x CopyThread [It] [COPY-1] copies [copy_thread]
------------------------------
checkpointkit conformance: x List [LIST-1] lists [list, slow]
/src/harness.go:143
  [FAILED] in [It] - /src/harness.go:143
• [FAILED] [0.100 seconds]
checkpointkit conformance: x List [It] [LIST-1] lists [list, slow]
------------------------------
`

func TestProgressCountsSpecs(t *testing.T) {
	var out strings.Builder
	clock := time.Unix(0, 0)
	p := newProgress(&out, "x", time.Hour)
	p.now = func() time.Time { clock = clock.Add(2 * time.Second); return clock }
	for i := 0; i < len(ginkgoOutput); i += 7 { // odd chunk sizes
		p.write(ginkgoOutput[i:min(i+7, len(ginkgoOutput))])
	}
	if p.total != 3 || p.done != 3 || p.passed != 1 || p.skipped != 1 || p.failed != 1 {
		t.Errorf("total %d done %d passed %d skipped %d failed %d, want 3 3 1 1 1", p.total, p.done, p.passed, p.skipped, p.failed)
	}
	got := out.String()
	for _, want := range []string{"suite started", "copy_thread", "FAILED: checkpointkit conformance: x List [LIST-1] lists [list, slow]", "list "} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output lacks %q:\n%s", want, got)
		}
	}
}

func TestProgressHeartbeatBeforeSuite(t *testing.T) {
	var out strings.Builder
	clock := time.Unix(0, 0)
	p := newProgress(&out, "pg", 10*time.Second)
	p.now = func() time.Time { return clock }
	p.start, p.lastPrint = clock, clock
	p.tick()
	if out.Len() != 0 {
		t.Errorf("heartbeat before the interval: %q", out.String())
	}
	clock = clock.Add(11 * time.Second)
	p.tick()
	if !strings.Contains(out.String(), "building and starting") {
		t.Errorf("no heartbeat while building: %q", out.String())
	}
}

func TestGroupOf(t *testing.T) {
	for header, want := range map[string]string{
		"a b [PUT-1] c [slow, put]": "put",
		"a b [X-1] c [engine]":      "engine",
		"a b [X-1] c [other]":       "other",
		"a b c":                     "",
	} {
		if got := groupOf(header); got != want {
			t.Errorf("groupOf(%q) = %q, want %q", header, got, want)
		}
	}
}

func TestParseBackends(t *testing.T) {
	t.Setenv("CHECKPOINTKIT_POSTGRES_DSN", "")
	t.Setenv("CHECKPOINTKIT_PGBOUNCER_DSN", "")
	t.Setenv("CHECKPOINTKIT_MONGO_URI", "mongodb://x/")
	bs, err := parseBackends("")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bs {
		names = append(names, b.name)
	}
	if got := strings.Join(names, ","); got != "memory,sqlite,mongo" {
		t.Errorf("default backends %s, want memory,sqlite,mongo (postgres has no DSN)", got)
	}
	bs, err = parseBackends("postgres, redis=./x")
	if err != nil || len(bs) != 2 || bs[0].env != "CHECKPOINTKIT_POSTGRES_DSN" || bs[1].pkg != "./x" {
		t.Errorf("parseBackends = %+v, %v", bs, err)
	}
	for _, bad := range []string{"oracle", "memory,memory", " , "} {
		if _, err := parseBackends(bad); err == nil {
			t.Errorf("parseBackends(%q) accepted", bad)
		}
	}
}

func harness(name string, level report.Level, caps ...report.CapabilityResult) report.HarnessReport {
	h := report.HarnessReport{Name: name, Level: level, Capabilities: caps}
	for _, c := range caps {
		for range c.Passed {
			h.Specs = append(h.Specs, report.SpecResult{Status: report.StatusPassed})
		}
		for range c.Failed {
			h.Specs = append(h.Specs, report.SpecResult{Text: "[PUT-1] fails", Status: report.StatusFailed, Message: "boom"})
		}
		for range c.NotSupported {
			h.Specs = append(h.Specs, report.SpecResult{Status: report.StatusNotSupported})
		}
	}
	return h
}

func TestMatrixText(t *testing.T) {
	ok := report.Report{Harnesses: []report.HarnessReport{harness("memory", report.LevelBase,
		report.CapabilityResult{Name: "put", Status: report.StatusPassed, Counts: report.Counts{Passed: 25}},
		report.CapabilityResult{Name: "prune", Optional: true, Status: report.StatusNotSupported, Counts: report.Counts{NotSupported: 7}},
		report.CapabilityResult{Name: "engine", Status: report.StatusPassed, Counts: report.Counts{Passed: 3}},
	)}}
	bad := report.Report{Harnesses: []report.HarnessReport{harness("sqlite (file)", report.LevelPartial,
		report.CapabilityResult{Name: "put", Status: report.StatusFailed, Counts: report.Counts{Passed: 23, Failed: 2}},
	)}}
	m := newMatrix([]Result{
		{Backend: "memory", Passed: true, Report: &ok, ElapsedSeconds: 1},
		{Backend: "sqlite", Passed: false, Problems: reportProblems(bad, ""), Report: &bad, ElapsedSeconds: 2},
		{Backend: "mongo", Passed: false, Problems: []string{"go test failed: exit status 1"}},
	})
	if m.Passed {
		t.Error("matrix passed with failed backends")
	}
	if want := (report.Counts{Passed: 51, Failed: 2, NotSupported: 7}); m.Specs != want {
		t.Errorf("spec totals %+v, want %+v", m.Specs, want)
	}
	if last := m.Capabilities[len(m.Capabilities)-1]; last != "engine" {
		t.Errorf("last row %q, want the engine group", last)
	}
	var b strings.Builder
	m.WriteText(&b)
	text := b.String()
	for _, want := range []string{
		"capability        memory           sqlite (file)  mongo",
		"put               passed 25        FAILED 2/25    -",
		"prune*            not supported 7  -              -",
		"engine            passed 3",
		"LEVEL             BASE             PARTIAL        -",
		"result            ok               FAIL           FAIL",
		"sqlite (file): 2 specs failed",
		"[sqlite (file)] [PUT-1] fails\n      boom",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("matrix lacks %q:\n%s", want, text)
		}
	}
}

func TestReportProblems(t *testing.T) {
	full := report.Report{Harnesses: []report.HarnessReport{harness("m", report.LevelBase,
		report.CapabilityResult{Name: "put", Status: report.StatusPassed, Counts: report.Counts{Passed: 1}})}}
	if p := reportProblems(full, ""); len(p) != 0 {
		t.Errorf("problems without a level requirement: %v", p)
	}
	if p := reportProblems(full, report.LevelFull); len(p) != 1 || !strings.Contains(p[0], "level BASE, required FULL") {
		t.Errorf("level requirement not enforced: %v", p)
	}
	empty := report.Report{Harnesses: []report.HarnessReport{{Name: "m", Level: report.LevelNone}}}
	if p := reportProblems(empty, ""); len(p) != 1 || !strings.Contains(p[0], "no spec ran") {
		t.Errorf("a run with no spec must fail: %v", p)
	}
}

func TestShellJoin(t *testing.T) {
	if got, want := shellJoin([]string{"test", "-run", "^TestConformance$", "it's"}), `test -run '^TestConformance$' 'it'\''s'`; got != want {
		t.Errorf("shellJoin = %s, want %s", got, want)
	}
}

func TestRunOrderSlowestFirst(t *testing.T) {
	bs, err := parseBackends("memory,sqlite,postgres,mongo,redis=./r")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range runOrder(bs) {
		got = append(got, bs[i].name)
	}
	if want := "redis,mongo,postgres,sqlite,memory"; strings.Join(got, ",") != want {
		t.Errorf("run order %v, want %s", got, want)
	}
}

func TestReadResultsCombinesArtifacts(t *testing.T) {
	dir := t.TempDir()
	write := func(sub string, backends ...string) {
		var m Matrix
		for _, b := range backends {
			m.Backends = append(m.Backends, Result{Backend: b, Passed: true})
		}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sub, "matrix.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("conformance-postgres-17", "postgres@17")
	write("conformance-mongo-6.0", "mongo@6.0")
	write("conformance-postgres-13", "postgres@13")
	write("conformance-memory", "memory")
	write("combined", "memory", "postgres@13") // the output folder of an earlier -from
	results, err := readResults(dir, filepath.Join(dir, "combined"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range results {
		got = append(got, r.Backend)
	}
	if want := "memory,postgres@13,postgres@17,mongo@6.0"; strings.Join(got, ",") != want {
		t.Errorf("combined columns %v, want %s", got, want)
	}
	if _, err := readResults(t.TempDir(), ""); err == nil {
		t.Error("a folder without matrix.json must be an error")
	}
}

func TestThirdPartyBackends(t *testing.T) {
	bs, err := parseBackends("memory,lgjs-memory,lgjs-postgres")
	if err != nil {
		t.Fatal(err)
	}
	if !bs[1].thirdParty || bs[1].pkg != "./bridge/lgjs" || !slices.Contains(bs[1].setenv, "CHECKPOINTKIT_LGJS_SAVER=memory") {
		t.Errorf("lgjs-memory = %+v", bs[1])
	}
	if bs[2].env != "CHECKPOINTKIT_POSTGRES_DSN" || bs[0].thirdParty {
		t.Errorf("backends = %+v", bs)
	}
	t.Setenv("CHECKPOINTKIT_POSTGRES_DSN", "x")
	t.Setenv("CHECKPOINTKIT_MONGO_URI", "x")
	def, _ := parseBackends("")
	for _, b := range def {
		if b.thirdParty {
			t.Errorf("default backends include third-party %s", b.name)
		}
	}

	// A completed third-party run with failed specs is a finding: the
	// matrix passes and its specs are counted apart.
	rep := report.Report{Harnesses: []report.HarnessReport{harness("lgjs-memory", report.LevelPartial,
		report.CapabilityResult{Name: "put", Status: report.StatusFailed, Counts: report.Counts{Passed: 3, Failed: 2}},
	)}}
	if !reportComplete(rep) {
		t.Fatal("complete report judged incomplete")
	}
	m := newMatrix([]Result{{Backend: "lgjs-memory", ThirdParty: true, Passed: true, Findings: reportProblems(rep, ""), Report: &rep}})
	if !m.Passed || m.Specs != (report.Counts{}) || m.ThirdPartySpecs != (report.Counts{Passed: 3, Failed: 2}) {
		t.Errorf("matrix passed=%v specs=%+v third-party=%+v", m.Passed, m.Specs, m.ThirdPartySpecs)
	}
	if !isSpecFailure("go test failed: exit status 1") || isSpecFailure("no conformance report was written") {
		t.Error("isSpecFailure misjudges go test problems")
	}
	rep.Harnesses[0].Capabilities[0].Status = report.StatusNotRun
	if reportComplete(rep) {
		t.Error("a report with a capability not run is complete")
	}
}

// TestLangGraphPythonBackends: the lgpy-* columns run package bridge/lgpy
// with the saver kind set, need their server's address, are third-party
// (findings, no -race), and are not among the default backends.
func TestLangGraphPythonBackends(t *testing.T) {
	bs, err := parseBackends("lgpy-memory,lgpy-sqlite,lgpy-postgres,lgpy-mongo")
	if err != nil {
		t.Fatal(err)
	}
	envs := []string{"", "", "CHECKPOINTKIT_POSTGRES_DSN", "CHECKPOINTKIT_MONGO_URI"}
	for i, kind := range []string{"memory", "sqlite", "postgres", "mongo"} {
		b := bs[i]
		if b.name != "lgpy-"+kind || b.pkg != "./bridge/lgpy" || !b.thirdParty || b.env != envs[i] ||
			!slices.Equal(b.setenv, []string{"CHECKPOINTKIT_LGPY_SAVER=" + kind}) {
			t.Errorf("lgpy-%s = %+v", kind, b)
		}
		if slices.Contains(goTestArgs(options{race: true, run: "^TestConformance$", timeout: "1m"}, b, "j.xml"), "-race") {
			t.Errorf("lgpy-%s runs with -race", kind)
		}
	}
	t.Setenv("CHECKPOINTKIT_POSTGRES_DSN", "x")
	t.Setenv("CHECKPOINTKIT_MONGO_URI", "x")
	def, _ := parseBackends("")
	for _, b := range def {
		if strings.HasPrefix(b.name, "lgpy-") {
			t.Errorf("default backends include %s", b.name)
		}
	}
	if _, err := parseBackends("lgpy-redis"); err == nil || !strings.Contains(err.Error(), "lgpy-mongo") {
		t.Errorf("unknown lgpy backend: err = %v, want one listing the lgpy backends", err)
	}
}

func TestThirdPartyRunsWithoutRace(t *testing.T) {
	o := options{race: true, run: "^TestConformance$", timeout: "1m"}
	ours, _ := parseBackends("memory")
	theirs, _ := parseBackends("lgjs-memory")
	if !slices.Contains(goTestArgs(o, ours[0], "j.xml"), "-race") {
		t.Error("memory runs without -race")
	}
	if slices.Contains(goTestArgs(o, theirs[0], "j.xml"), "-race") {
		t.Error("lgjs-memory runs with -race")
	}
}

// TestParseBackendsPgBouncer: with a pooler's DSN set, the default
// backends include the PostgreSQL adapter through PgBouncer, which runs
// the postgres package with CHECKPOINTKIT_PG_VIA=pgbouncer.
func TestParseBackendsPgBouncer(t *testing.T) {
	t.Setenv("CHECKPOINTKIT_POSTGRES_DSN", "postgres://x/")
	t.Setenv("CHECKPOINTKIT_PGBOUNCER_DSN", "postgres://y/")
	t.Setenv("CHECKPOINTKIT_MONGO_URI", "")
	bs, err := parseBackends("")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bs {
		names = append(names, b.name)
	}
	if got := strings.Join(names, ","); got != "memory,sqlite,postgres,pgbouncer" {
		t.Fatalf("default backends %s, want memory,sqlite,postgres,pgbouncer", got)
	}
	if b := bs[3]; b.pkg != "./adapters/postgres" || !slices.Contains(b.setenv, "CHECKPOINTKIT_PG_VIA=pgbouncer") {
		t.Errorf("pgbouncer backend %+v", b)
	}
}

// TestMatrixFaultsRow: the row of the faults group's counts appears when a
// column ran it, with "-" for the others.
func TestMatrixFaultsRow(t *testing.T) {
	pg := report.Report{Harnesses: []report.HarnessReport{harness("postgres", report.LevelFull,
		report.CapabilityResult{Name: "faults", Optional: true, Status: report.StatusPassed, Counts: report.Counts{Passed: 10}},
	)}}
	pg.Harnesses[0].Faults = &report.FaultCounts{Injected: 45, Cut: 46, Failed: 46, Checked: 44}
	mem := report.Report{Harnesses: []report.HarnessReport{harness("memory", report.LevelFull,
		report.CapabilityResult{Name: "faults", Optional: true, Status: report.StatusNotSupported, Counts: report.Counts{NotSupported: 10}},
	)}}
	var b strings.Builder
	newMatrix([]Result{{Backend: "memory", Passed: true, Report: &mem}, {Backend: "postgres", Passed: true, Report: &pg}}).WriteText(&b)
	if !strings.Contains(b.String(), "faults i/c/p      -                 45/46/0") {
		t.Errorf("no faults row:\n%s", b.String())
	}
	b.Reset()
	newMatrix([]Result{{Backend: "memory", Passed: true, Report: &mem}}).WriteText(&b)
	if strings.Contains(b.String(), "\nfaults i/c/p ") {
		t.Errorf("a faults row without any faults run:\n%s", b.String())
	}
}
