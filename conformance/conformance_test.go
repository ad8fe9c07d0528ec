package conformance

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// minimal hides the optional capabilities of the memory saver.
type minimal struct{ s spec.Saver }

func (m minimal) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	return m.s.Put(ctx, cfg, cp, md, nv)
}
func (m minimal) PutWrites(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
	return m.s.PutWrites(ctx, cfg, ws, task, path)
}
func (m minimal) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	return m.s.GetTuple(ctx, cfg)
}
func (m minimal) List(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return m.s.List(ctx, o)
}
func (m minimal) DeleteThread(ctx context.Context, th string) error { return m.s.DeleteThread(ctx, th) }

func newMemory(context.Context) (spec.Saver, func(), error) { return memory.New(), nil, nil }

// TestSuite runs the suite on four harnesses at once, through both entry
// points: the memory saver (must be FULL), the memory saver with skips
// (PARTIAL, skips reported), the memory saver without its optional
// interfaces (BASE, not supported) and the memory saver whose DeltaHistory
// fails with errors.ErrUnsupported, as a bridged one's may (BASE).
// It also checks the JSON report.
func TestSuite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	t.Setenv("CHECKPOINTKIT_REPORT_JSON", path)
	Describe(Harness{Name: "memory-skips", New: newMemory, Skip: map[string]string{"prune": "no pruning here", "LIST-FILTER-3": "numbers differ"}})
	Describe(Harness{Name: "memory-minimal", NotSupported: []string{"list_threads"}, New: func(ctx context.Context) (spec.Saver, func(), error) {
		return minimal{memory.New()}, nil, nil
	}})
	Describe(Harness{Name: deltaUnsupportedHarness, New: newDeltaUnsupported})
	Describe(Harness{Name: predatesDeltaHarness, New: newMemory, Skip: map[string]string{DeltaChannels: "no delta channels in this LangGraph"}})
	rec := &listRecorder{used: map[string]map[string]string{}}
	Run(t, Harness{Name: "memory-run", New: rec.new})
	checkPrerequisitesDeclared(t, rec)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Seed != seed() || len(rep.Harnesses) != 5 {
		t.Fatalf("report: seed %d, %d harnesses", rep.Seed, len(rep.Harnesses))
	}
	for _, name := range []string{"memory-run"} {
		h := rep.Harness(name)
		if h.Level != LevelFull || h.CoreLevel != LevelFull || h.StrictLevel != LevelFull || len(h.FailedRules)+len(h.PrimaryFailedRules) != 0 || len(h.UncitedRules)+len(h.UnknownRules) != 0 {
			t.Errorf("%s: levels %s/%s/%s, failed %v, primary %v, uncited %v, unknown %v", name, h.Level, h.CoreLevel, h.StrictLevel, h.FailedRules, h.PrimaryFailedRules, h.UncitedRules, h.UnknownRules)
		}
		if len(h.Rules) != len(Rules()) || len(h.Specs) < 150 {
			t.Errorf("%s: %d rules, %d specs", name, len(h.Rules), len(h.Specs))
		}
		// Every rule passes but the network-fault ones, which a saver
		// without connections cannot opt into: they are not supported,
		// and the level stays FULL.
		for _, r := range h.Rules {
			want := report.StatusPassed
			if r.Capability == "faults" {
				want = report.StatusNotSupported
			}
			if r.Status != want {
				t.Errorf("%s: rule %s is %s, want %s", name, r.ID, r.Status, want)
			}
		}
	}

	sk := rep.Harness("memory-skips")
	// LIST-FILTER-3 is a core rule of the base capability list, prune is
	// optional and strict.
	if sk.CoreLevel != LevelPartial || sk.StrictLevel != LevelBase || sk.Level != LevelPartial {
		t.Errorf("memory-skips: levels core %s, strict %s, overall %s, want PARTIAL, BASE, PARTIAL", sk.CoreLevel, sk.StrictLevel, sk.Level)
	}
	for _, c := range sk.Capabilities {
		switch c.Name {
		case "prune":
			if c.Status != report.StatusSkipped || c.Passed != 0 || !slices.ContainsFunc(c.SkipReasons, func(r string) bool { return strings.Contains(r, "no pruning here") }) {
				t.Errorf("memory-skips: prune row %+v", c)
			}
		case "list":
			if c.Status != report.StatusSkipped || c.Skipped != 1 {
				t.Errorf("memory-skips: list row %+v", c)
			}
		case "model":
			if c.Status != report.StatusSkipped || c.Skipped != 1 {
				t.Errorf("memory-skips: model row %+v", c)
			}
		}
	}
	for _, r := range sk.Rules {
		// The hand-written spec and the base random spec cite LIST-FILTER-3.
		if r.ID == "LIST-FILTER-3" && (r.Status != report.StatusSkipped || r.Skipped != 2) {
			t.Errorf("memory-skips: rule %+v", r)
		}
	}

	mn := rep.Harness("memory-minimal")
	// Without its optional interfaces (versions is core) and with List
	// across threads declared unsupported.
	if mn.CoreLevel != LevelBase || mn.StrictLevel != LevelBase {
		t.Errorf("memory-minimal: levels core %s, strict %s, want BASE, BASE", mn.CoreLevel, mn.StrictLevel)
	}
	for _, c := range mn.Capabilities {
		if c.Optional != (c.Status == report.StatusNotSupported) {
			t.Errorf("memory-minimal: capability %+v", c)
		}
	}
	checkDeltaUnsupported(t, rep)
	checkPredatesDelta(t, rep)
}

func TestRulesParse(t *testing.T) {
	rs := Rules()
	if len(rs) < 100 {
		t.Fatalf("only %d rules parsed from SPEC.md", len(rs))
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r.ID] {
			t.Errorf("rule %s defined twice", r.ID)
		}
		seen[r.ID] = true
		if len(r.Text) < 20 {
			t.Errorf("rule %s has a short text %q", r.ID, r.Text)
		}
		if r.Tier != report.TierCore && r.Tier != report.TierStrict {
			t.Errorf("rule %s has no tier: write it as \"- **%s** (core) ...\" or (strict)", r.ID, r.ID)
		}
		if r.Section == "" {
			t.Errorf("rule %s is in no section with a capability label", r.ID)
		}
	}
	// Continuation lines belong to their rule; the next rule starts anew.
	got := parseRules("## A — label `a`\n- **A-1** (core) first line\n  second line\n- **A-2** (strict) other\n\n- not a rule\n## H\n- **B-10** x `y`\n")
	want := []Rule{{"A-1", report.TierCore, "first line second line", "a"}, {"A-2", report.TierStrict, "other", "a"}, {"B-10", "", "x `y`", "a"}}
	if !slices.Equal(got, want) {
		t.Errorf("parseRules: got %q, want %q", got, want)
	}
}

func TestCitations(t *testing.T) {
	if ids := ruleIDsIn("[PUT-1][LIST-BEFORE-2] text [x] [NOPE] [WRITES-10]"); !slices.Equal(ids, []string{"PUT-1", "LIST-BEFORE-2", "WRITES-10"}) {
		t.Errorf("ruleIDsIn: %v", ids)
	}
	var texts []string
	for _, r := range Rules() {
		if r.ID != "PUT-1" {
			texts = append(texts, "["+r.ID+"] spec")
		}
	}
	texts = append(texts, "[PUT-999] spec", "[PUT-999][NS-77] again")
	uncited, unknown := citationProblems(texts)
	if !slices.Equal(uncited, []string{"PUT-1"}) || !slices.Equal(unknown, []string{"NS-77", "PUT-999"}) {
		t.Errorf("citationProblems: uncited %v, unknown %v", uncited, unknown)
	}
}

// TestModelAgreesWithMemory runs many more random sequences than the suite
// does, with every optional operation, to check that the generator only
// produces sequences on which a correct saver and the model agree.
func TestModelAgreesWithMemory(t *testing.T) {
	ctx := context.Background()
	h := Harness{New: newMemory}
	n := uint64(100)
	if testing.Short() || raceEnabled {
		n = 20
	}
	for sd := range n {
		ops := genSequence(sd, 60, caps{copy: true, runs: true, prune: true, listThreads: true})
		if !validSequence(ops) {
			t.Fatalf("seed %d: generated an invalid sequence", sd)
		}
		if at, why := runSequence(ctx, h, ops); at >= 0 {
			t.Fatalf("seed %d: op %d diverges: %s\n%s", sd, at, why, reproduction(ops[:at+1]))
		}
	}
}

// beforeIgnored is a broken saver whose List ignores Before.
type beforeIgnored struct{ minimal }

func (b beforeIgnored) List(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	o.Before = ""
	return b.s.List(ctx, o)
}

// TestShrink checks that a divergence found by a random sequence shrinks to
// a short reproduction that still diverges.
func TestShrink(t *testing.T) {
	ctx := context.Background()
	h := Harness{New: func(context.Context) (spec.Saver, func(), error) {
		return beforeIgnored{minimal{memory.New()}}, nil, nil
	}}
	for sd := range uint64(50) {
		ops := genSequence(sd, randOps, caps{})
		if at, _ := runSequence(ctx, h, ops); at < 0 {
			continue
		}
		small, at, why := shrink(ctx, h, ops)
		if len(small) > 4 || at != len(small)-1 || !validSequence(small) {
			t.Fatalf("seed %d: shrunk to %d ops (divergence at %d): %s\n%s", sd, len(small), at, why, reproduction(small))
		}
		if again, _ := runSequence(ctx, h, small); again != at {
			t.Fatalf("seed %d: the shrunk sequence does not reproduce", sd)
		}
		if last := small[len(small)-1]; last.kind != opList || last.opts.Before == "" {
			t.Errorf("seed %d: last op %s should be a List with Before", sd, last)
		}
		t.Logf("seed %d: %d ops shrunk to %d:\n%s%s", sd, len(ops), len(small), reproduction(small), why)
		return
	}
	t.Fatal("no random sequence caught a saver that ignores Before")
}
