package mutants

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/conformance/report"
)

var (
	mutantFilter   = flag.String("mutants", "", "run the kill matrix only for mutants whose name matches this regexp (the control always runs)")
	mutantParallel = flag.Int("mutants.parallel", 2, "number of suite subprocesses the kill matrix runs at once")
	matrixFile     = flag.String("mutants.matrix", "", "also write the kill matrix as JSON to this file")
	fullRuns       = flag.Bool("mutants.full", false, "run every spec against every mutant instead of skipping the specs that start after its kill")
)

// subprocessTimeout bounds one run of the suite against one saver.
const subprocessTimeout = 5 * time.Minute

// focusedAttempts is how many focused runs a mutant gets before the kill
// test falls back to the whole suite.
const focusedAttempts = 3

// citation matches a rule ID cited in a spec text, as "[LIST-ORDER-1]".
var citation = regexp.MustCompile(`\[([A-Z]+(?:-[A-Z]+)*-[0-9]+)\]`)

// Verdicts of the kill matrix.
const (
	verdictPassed    = "passed"          // control: zero failures
	verdictKilled    = "killed"          // a failing spec cites the mutant's rule
	verdictDiffers   = "differs"         // a spec citing the mutant's strict rule recognises a LangGraph saver's behaviour
	verdictModelOnly = "killed by model" // only the model-based specs, which cite many rules, failed citing it
	verdictWrongRule = "wrong rule"      // caught, but no failing spec cites its rule
	verdictSurvived  = "SURVIVED"        // no spec failed
	verdictNeedsRace = "needs -race"     // race-only mutant in a build without -race
	verdictBroken    = "error"           // the subprocess produced no usable report
)

// killResult is one row of the kill matrix.
type killResult struct {
	Mutant      string   `json:"mutant"`
	Rule        string   `json:"rule"`
	Verdict     string   `json:"verdict"`
	FailedRules []string `json:"failed_rules"`
	// FocusedRules are the rules cited by failing specs other than the
	// model-based ones (label "model"), which cite dozens of rules each.
	FocusedRules []string `json:"focused_rules"`
	// DiffersRules are the rules whose specs reported differs.
	DiffersRules []string `json:"differs_rules,omitempty"`
	// PrimaryRules are the report's root causes.
	PrimaryRules []string `json:"primary_rules"`
	// BroadFailed lists the groups of the failed broad specs (model, List
	// matrix, engine scenarios and traces); NarrowFailed the rules cited by
	// the failed focused specs, which are all the others.
	BroadFailed  []string `json:"broad_failed,omitempty"`
	NarrowFailed []string `json:"narrow_failed,omitempty"`
	// NarrowSignatures maps each rule of NarrowFailed to how its focused
	// specs failed (report.Evidence.Signature).
	NarrowSignatures map[string][]string `json:"narrow_signatures,omitempty"`
	FailedSpecs      int                 `json:"failed_specs"`
	Races            []string            `json:"races,omitempty"` // rules cited by specs during which a race was reported
	Duration         time.Duration       `json:"duration_ns"`
	Detail           string              `json:"detail,omitempty"`
}

// ok reports whether the row is acceptable.
func (r killResult) ok() bool {
	switch r.Verdict {
	case verdictPassed, verdictKilled, verdictDiffers, verdictModelOnly, verdictNeedsRace:
		return true
	}
	return false
}

// TestKillMatrix runs the whole conformance suite against the unmutated
// memory adapter (the control, which must pass with zero failures) and
// against every registered mutant, each in its own subprocess, and fails
// unless every mutant is caught by at least one failing spec that cites the
// rule the mutant breaks.
func TestKillMatrix(t *testing.T) {
	if os.Getenv(envMutant) != "" {
		t.Skip("inside a kill-test subprocess")
	}
	if testing.Short() {
		t.Skip("the kill matrix runs the suite once per mutant; skipped with -short")
	}
	jobs := []Mutant{{Name: ControlName, Description: "the memory adapter, unmutated"}}
	var filter *regexp.Regexp
	if *mutantFilter != "" {
		filter = regexp.MustCompile(*mutantFilter)
	}
	for _, m := range All() {
		if filter == nil || filter.MatchString(m.Name) {
			jobs = append(jobs, m)
		}
	}

	start := time.Now()
	dir := t.TempDir()
	results := make([]killResult, len(jobs))
	sem := make(chan struct{}, max(*mutantParallel, 1))
	var wg sync.WaitGroup
	for i, m := range jobs {
		if m.NeedsRace && !raceEnabled {
			results[i] = killResult{Mutant: m.Name, Rule: m.Rule, Verdict: verdictNeedsRace,
				Detail: "only the race detector can catch it: run go test -race"}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runMutant(t.Context(), dir, m)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	t.Log("kill matrix\n" + formatMatrix(results, elapsed))
	if *matrixFile != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err == nil {
			err = os.WriteFile(*matrixFile, append(data, '\n'), 0o644)
		}
		if err != nil {
			t.Errorf("writing %s: %v", *matrixFile, err)
		}
	}
	for _, r := range results {
		if !r.ok() {
			t.Errorf("%s (breaks %s): %s; failing rules %v; %s", r.Mutant, r.Rule, r.Verdict, r.FailedRules, r.Detail)
		}
	}
	if *fullRuns && filter == nil {
		checkRootCauses(t, results)
	}
}

// runMutant runs the suite against m in a subprocess and judges the
// outcome. Unless -mutants.full is set, it first runs only the specs that
// cite m's rule (model-based specs excepted): that settles most verdicts in
// a fraction of the time. When that first run does not kill the mutant, it
// runs the whole suite.
func runMutant(ctx context.Context, dir string, m Mutant) killResult {
	start := time.Now()
	if m.Name != ControlName && !*fullRuns {
		focus := []string{"-ginkgo.focus=" + regexp.QuoteMeta("["+m.Rule+"]"), "-ginkgo.label-filter=!model"}
		// Mutants that only misbehave under contention depend on the
		// scheduler; a focused run is cheap, so give them a few chances.
		for attempt := 1; attempt <= focusedAttempts; attempt++ {
			res := judge(ctx, dir, m, focus)
			if res.Verdict == verdictKilled || res.Verdict == verdictDiffers {
				res.Duration = time.Since(start)
				res.Detail = strings.TrimSpace(fmt.Sprintf("focused run %d: only specs citing %s; %s", attempt, m.Rule, res.Detail))
				res.Detail = strings.TrimSuffix(res.Detail, ";")
				return res
			}
		}
	}
	res := judge(ctx, dir, m, nil)
	res.Duration = time.Since(start)
	return res
}

// judge runs the suite once against m with extra Ginkgo arguments and
// returns the verdict.
func judge(ctx context.Context, dir string, m Mutant, args []string) killResult {
	res := killResult{Mutant: m.Name, Rule: m.Rule}
	out, rep, passed, err := runSuite(ctx, dir, m.Name, !*fullRuns, args)
	res.Races = racesBySpec(out)
	if err != nil {
		res.Verdict = verdictBroken
		res.Detail = err.Error() + "\n" + tail(out, 40)
		return res
	}
	h := rep.Harness(m.Name)
	if h == nil {
		res.Verdict = verdictBroken
		res.Detail = "the report has no harness " + m.Name
		return res
	}
	res.FailedRules = h.FailedRules
	res.PrimaryRules = h.PrimaryFailedRules
	for _, r := range h.Rules {
		if r.Status == report.StatusDiffers {
			res.DiffersRules = append(res.DiffersRules, r.ID)
		}
	}
	for _, s := range h.Specs {
		if s.Status != report.StatusFailed {
			continue
		}
		res.FailedSpecs++
		if !slices.Contains(s.Labels, "model") {
			res.FocusedRules = append(res.FocusedRules, s.Rules...)
		}
		if s.Broad != "" && !slices.Contains(res.BroadFailed, s.Broad) {
			res.BroadFailed = append(res.BroadFailed, s.Broad)
		}
		if s.Broad == "" {
			res.NarrowFailed = append(res.NarrowFailed, s.Rules...)
			if s.Evidence != nil {
				if res.NarrowSignatures == nil {
					res.NarrowSignatures = map[string][]string{}
				}
				for _, id := range s.Rules {
					addRule(res.NarrowSignatures, id, s.Evidence.Signature())
				}
			}
		}
	}
	slices.Sort(res.NarrowFailed)
	res.NarrowFailed = slices.Compact(res.NarrowFailed)
	slices.Sort(res.FocusedRules)
	res.FocusedRules = slices.Compact(res.FocusedRules)
	switch {
	case m.Name == ControlName:
		res.Verdict = verdictPassed
		if res.FailedSpecs > 0 || len(res.Races) > 0 || !passed {
			res.Verdict = verdictBroken
			res.Detail = fmt.Sprintf("the memory adapter failed %d specs (rules %v), raced during specs citing %v, exit status 0: %v\n%s",
				res.FailedSpecs, h.FailedRules, res.Races, passed, tail(out, 60))
		}
	case slices.Contains(res.NarrowFailed, m.Rule):
		res.Verdict = verdictKilled
	case slices.Contains(res.DiffersRules, m.Rule):
		res.Verdict = verdictDiffers
	case slices.Contains(res.FocusedRules, m.Rule):
		res.Verdict = verdictKilled
	case slices.Contains(h.FailedRules, m.Rule):
		res.Verdict = verdictModelOnly
	case slices.ContainsFunc(m.AlsoRaces, func(id string) bool { return slices.Contains(res.NarrowFailed, id) }):
		res.Verdict = verdictKilled
		res.Detail = "caught by a spec of the same race under another concurrency rule"
	case m.NeedsRace && slices.Contains(res.Races, m.Rule):
		res.Verdict = verdictKilled
		res.Detail = "caught by the race detector"
	case m.NeedsRace && slices.ContainsFunc(m.AlsoRaces, func(id string) bool { return slices.Contains(res.Races, id) }):
		res.Verdict = verdictKilled
		res.Detail = "caught by the race detector in a spec of the same race under another concurrency rule"
	case res.FailedSpecs > 0:
		res.Verdict = verdictWrongRule
		res.Detail = "no failing spec cites " + m.Rule
	default:
		res.Verdict = verdictSurvived
		if len(res.Races) > 0 {
			res.Detail = fmt.Sprintf("races reported during specs citing %v", res.Races)
		}
	}
	return res
}

// runSuite re-executes this test binary to run TestMutantSuite for name
// and returns its combined output, its conformance report and whether it
// exited with status 0. With stop, the subprocess skips the specs that
// start after the mutant is killed. A failing exit status is expected for
// mutants and is not an error.
func runSuite(ctx context.Context, dir, name string, stop bool, args []string) ([]byte, report.Report, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, subprocessTimeout)
	defer cancel()
	f, err := os.CreateTemp(dir, name+"-*.json")
	if err != nil {
		return nil, report.Report{}, false, err
	}
	reportPath := f.Name()
	_ = f.Close()
	_ = os.Remove(reportPath) // the subprocess creates it; its absence means no report
	cmd := exec.CommandContext(ctx, os.Args[0],
		append([]string{"-test.run=^TestMutantSuite$", "-test.count=1", "-ginkgo.no-color"}, args...)...)
	cmd.Env = append(os.Environ(), envMutant+"="+name, envReport+"="+reportPath)
	if stop {
		cmd.Env = append(cmd.Env, envStop+"=1")
	}
	if os.Getenv("CHECKPOINTKIT_SEED") == "" {
		// The suite draws a new seed on every run; the matrix judges every
		// mutant on the same sequences.
		cmd.Env = append(cmd.Env, fmt.Sprintf("CHECKPOINTKIT_SEED=%d", conformance.KillMatrixSeed))
	}
	var out bytes.Buffer
	// One buffer for both streams: they share one pipe, so the race
	// detector's reports stay in order with the spec markers.
	cmd.Stdout = &out
	cmd.Stderr = &out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return out.Bytes(), report.Report{}, false, fmt.Errorf("suite subprocess timed out after %v", subprocessTimeout)
	}
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return out.Bytes(), report.Report{}, false, fmt.Errorf("starting the suite subprocess: %w", runErr)
	}
	data, err := os.ReadFile(reportPath)
	if err != nil {
		return out.Bytes(), report.Report{}, false, fmt.Errorf("no conformance report (exit status %v): %w", runErr, err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return out.Bytes(), report.Report{}, false, fmt.Errorf("decoding the conformance report: %w", err)
	}
	return out.Bytes(), rep, runErr == nil, nil
}

// racesBySpec returns, sorted and without duplicates, the rule IDs cited
// by the specs during which the race detector reported a data race.
func racesBySpec(out []byte) []string {
	var rules []string
	current := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		// Ginkgo's progress dots may precede a marker on its line.
		line := sc.Text()
		if _, text, ok := strings.Cut(line, markerStart); ok {
			current = text
			continue
		}
		switch {
		case strings.Contains(line, markerEnd):
			current = ""
		case strings.Contains(line, "WARNING: DATA RACE"):
			if current == "" {
				rules = append(rules, "(outside any spec)")
			}
			rules = append(rules, citedRules(current)...)
		}
	}
	slices.Sort(rules)
	return slices.Compact(rules)
}

// formatMatrix renders the kill matrix as an aligned table.
func formatMatrix(rs []killResult, elapsed time.Duration) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tBREAKS\tVERDICT\tFAILED SPECS\tFAILING RULES (+model: model-based specs failed too)\tTIME")
	counts := map[string]int{}
	for _, r := range rs {
		counts[r.Verdict]++
		failing := strings.Join(r.FocusedRules, " ")
		if len(r.FailedRules) > len(r.FocusedRules) {
			failing += " +model"
		}
		if len(r.Races) > 0 {
			failing += " race:" + strings.Join(r.Races, ",")
		}
		rule := r.Rule
		if rule == "" {
			rule = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%.1fs\n", r.Mutant, rule, r.Verdict, r.FailedSpecs, failing, r.Duration.Seconds())
	}
	_ = tw.Flush()
	mutants := len(rs) - 1
	fmt.Fprintf(&b, "%d mutants: %d killed (%d by model-based specs only), %d reported as differing like a LangGraph saver, %d survived, %d caught under another rule, %d need -race, %d errors; control %s; %.1fs wall time\n",
		mutants, counts[verdictKilled]+counts[verdictModelOnly], counts[verdictModelOnly], counts[verdictDiffers], counts[verdictSurvived], counts[verdictWrongRule], counts[verdictNeedsRace],
		counts[verdictBroken], rs[0].Verdict, elapsed.Seconds())
	return b.String()
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
