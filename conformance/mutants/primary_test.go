package mutants

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

var (
	explainFile  = flag.String("mutants.explain", "", "with -mutants.full (TestKillMatrix) or TestEngineEvidence: add what the run observed to the explain table of the conformance package, e.g. ../explain.json")
	explainFresh = flag.Bool("mutants.explain-fresh", false, "with -mutants.explain: replace the table instead of adding to it")
)

// expectedRoots returns the root causes the report should name for a
// saver carrying the faults of ms, and the rules it should report as
// differing: a mutant caught as differing adds to the second.
func expectedRoots(verdicts map[string]string, ms ...Mutant) (roots, differs []string) {
	for _, m := range ms {
		if verdicts[m.Name] == verdictDiffers {
			differs = append(differs, m.Rule)
		} else {
			roots = append(roots, m.Rule)
		}
	}
	slices.Sort(roots)
	slices.Sort(differs)
	return slices.Compact(roots), slices.Compact(differs)
}

// checkRootCauses checks, after a full kill matrix, that each mutant's
// report names exactly its rule as root cause (or, for a mutant that
// behaves like a LangGraph saver, as differing), and writes the explain
// table when asked.
func checkRootCauses(t *testing.T, results []killResult) {
	verdicts := map[string]string{}
	for _, r := range results {
		verdicts[r.Mutant] = r.Verdict
	}
	var wrong []string
	for _, r := range results {
		m, ok := Lookup(r.Mutant)
		if !ok || r.Verdict == verdictNeedsRace {
			continue
		}
		roots, _ := expectedRoots(verdicts, m)
		got := slices.Sorted(slices.Values(r.PrimaryRules))
		if !slices.Equal(raceRoots(got, m), roots) {
			wrong = append(wrong, fmt.Sprintf("%s (%s): root causes %v, want %v", r.Mutant, r.Rule, got, roots))
		}
	}
	t.Logf("root causes: %d of %d mutants named exactly", len(results)-1-len(wrong), len(results)-1)
	if len(wrong) > 0 {
		t.Errorf("root causes that do not match the mutant's fault:\n%s", strings.Join(wrong, "\n"))
	}
	if *explainFile != "" {
		writeExplain(t, results)
	}
}

// writeExplain adds to the explain table: per broad spec group, the rules
// of the mutants that made a spec of the group fail; per rule, the rules of
// the mutants that made a focused spec citing it fail.
func writeExplain(t *testing.T, results []killResult) {
	broad, focused := map[string][]string{}, map[string][]string{}
	sigs := map[string]map[string][]string{}
	for _, r := range results {
		if r.Rule == "" {
			continue
		}
		for _, g := range r.BroadFailed {
			addRule(broad, g, r.Rule)
		}
		for _, id := range r.NarrowFailed {
			if id != r.Rule {
				addRule(focused, id, r.Rule)
				if sigs[id] == nil {
					sigs[id] = map[string][]string{}
				}
				for _, sig := range r.NarrowSignatures[id] {
					addRule(sigs[id], r.Rule, sig)
				}
			}
		}
	}
	mergeExplain(t, broad, focused, sigs)
}

func addRule(m map[string][]string, k, rule string) {
	if !slices.Contains(m[k], rule) {
		m[k] = append(m[k], rule)
	}
}

// explainTables is the layout of conformance/explain.json.
type explainTables struct {
	Broad      map[string][]string            `json:"broad"`
	Focused    map[string][]string            `json:"focused"`
	Signatures map[string]map[string][]string `json:"signatures"`
}

// mergeExplain adds broad and focused to the table in *explainFile (unless
// -mutants.explain-fresh) and writes it back, one entry a line.
func mergeExplain(t *testing.T, broad, focused map[string][]string, sigs map[string]map[string][]string) {
	t.Helper()
	old := explainTables{Broad: map[string][]string{}, Focused: map[string][]string{}, Signatures: map[string]map[string][]string{}}
	if data, err := os.ReadFile(*explainFile); err == nil && !*explainFresh {
		if err := json.Unmarshal(data, &old); err != nil {
			t.Fatalf("%s: %v", *explainFile, err)
		}
	}
	for k, ids := range broad {
		for _, id := range ids {
			addRule(old.Broad, k, id)
		}
	}
	for k, ids := range focused {
		for _, id := range ids {
			addRule(old.Focused, k, id)
		}
	}
	if old.Signatures == nil {
		old.Signatures = map[string]map[string][]string{}
	}
	for k, byRule := range sigs {
		if old.Signatures[k] == nil {
			old.Signatures[k] = map[string][]string{}
		}
		for r, ss := range byRule {
			for _, sig := range ss {
				addRule(old.Signatures[k], r, sig)
			}
		}
	}
	var b strings.Builder
	b.WriteString("{\n")
	writeTable(&b, "broad", old.Broad)
	b.WriteString(",\n")
	writeTable(&b, "focused", old.Focused)
	b.WriteString(",\n")
	writeSignatures(&b, old.Signatures)
	b.WriteString("\n}\n")
	if err := os.WriteFile(*explainFile, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// writeTable writes one table of the explain file, one key a line.
func writeTable(b *strings.Builder, name string, m map[string][]string) {
	fmt.Fprintf(b, "  %q: {\n", name)
	for i, k := range slices.Sorted(maps.Keys(m)) {
		slices.Sort(m[k])
		line, _ := json.Marshal(m[k])
		key, _ := json.Marshal(k)
		fmt.Fprintf(b, "    %s: %s", key, line)
		if i < len(m)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  }")
}

// writeSignatures writes the signatures table of the explain file, one
// rule a line.
func writeSignatures(b *strings.Builder, m map[string]map[string][]string) {
	b.WriteString("  \"signatures\": {\n")
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		for _, ss := range m[k] {
			slices.Sort(ss)
		}
		line, _ := json.Marshal(m[k])
		key, _ := json.Marshal(k)
		fmt.Fprintf(b, "    %s: %s", key, line)
		if i < len(keys)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  }")
}

// rootCauseCases are savers with several faults at once, stacked from
// mutants whose rules do not explain one another's failures (see
// conformance/explain.json): for each, the report must name exactly their
// rules as root causes, and the rules of mutants that behave like a
// LangGraph saver as differing.
var rootCauseCases = []struct {
	name    string
	mutants []string
	roots   []string
	differs []string
}{
	{"one fault", []string{"before-inclusive"}, []string{"LIST-BEFORE-1"}, nil},
	{"two faults", []string{"regular-write-last-wins", "engine-null-resume-dropped"}, []string{"WRITES-2", "ENGINE-INTERRUPT-1"}, nil},
	{"five faults", []string{"negative-zero-lost", "special-batch-first-wins", "filter-string-fold", "delete-missing-thread-error", "parents-keys-recast"},
		[]string{"VALUE-2", "WRITES-4", "LIST-FILTER-5", "DELETE-5", "NS-4"}, nil},
	{"a fault and a LangGraph behaviour", []string{"filter-true-is-one", "before-inclusive"}, []string{"LIST-BEFORE-1"}, []string{"LIST-FILTER-4"}},
	// Tangles modelled on savers written without checkpointkit in mind.
	// An unknown Before ignored, with a correct Limit: LIST-LIMIT-2 must
	// not be accused.
	{"unknown Before mishandled, Limit correct", []string{"before-must-exist"}, []string{"LIST-BEFORE-3"}, nil},
	// The same with the filter applied after the limit and the oldest
	// checkpoint first: none of the three may hide another.
	// (Listed innermost first: list-ascending sorts what the memory saver
	// lists, limit-before-filter limits that, before-must-exist drops an
	// unknown Before on the way in.) LIST-ORDER-2 differs: equal IDs come
	// in reverse.
	{"unknown Before, filter after limit, oldest first", []string{"list-ascending", "limit-before-filter", "before-must-exist"},
		[]string{"LIST-BEFORE-3", "LIST-LIMIT-1", "LIST-ORDER-1"}, []string{"LIST-ORDER-2"}},
	// Writes of different tasks in a random order on every read (free for
	// LangGraph, WRITES-9 for the strict tier) next to a fault.
	{"free write order across tasks", []string{"free-task-order", "before-must-exist"}, []string{"LIST-BEFORE-3", "WRITES-9"}, nil},
	// A put-versus-delete race next to an input fault: the race must not
	// read as a consequence of the input rule.
	{"put-versus-delete race and an input fault", []string{"delete-thread-metadata-later", "unsupported-value-accepted"}, []string{"CONC-6", "VALUE-4"}, nil},
	// Metadata that List and GetTuple return differently.
	{"metadata differing between List and GetTuple", []string{"list-metadata-nul-kept"}, []string{"VALUE-7"}, nil},
	// LangGraph's list(None), next to a fault.
	{"list(None) and a fault", []string{"list-none-ignores-id", "before-inclusive"}, []string{"LIST-BEFORE-1"}, []string{"LIST-SCOPE-6"}},
	// Delta channels: a prune that breaks the chain and a history in
	// stored order, stacked over a List fault (innermost, so that the delta
	// mutants keep their DeltaHistory). Neither may hide the other.
	{"delta prune, delta write order and a List fault", []string{"before-inclusive", "delta-prune-head-only", "delta-writes-as-stored"},
		[]string{"LIST-BEFORE-1", "DELTA-4", "DELTA-12"}, nil},
}

// TestRootCauses runs the whole suite on savers carrying one, two and five
// faults at once and checks that primary_failed_rules names exactly the
// broken rules.
func TestRootCauses(t *testing.T) {
	if os.Getenv(envMutant) != "" {
		t.Skip("inside a kill-test subprocess")
	}
	if testing.Short() {
		t.Skip("runs the suite once per case; skipped with -short")
	}
	dir := t.TempDir()
	for _, c := range rootCauseCases {
		t.Run(c.name, func(t *testing.T) {
			name := strings.Join(c.mutants, "+")
			_, rep, _, err := runSuite(t.Context(), dir, name, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			h := rep.Harness(name)
			if h == nil {
				t.Fatalf("no report for %s", name)
			}
			var differs []string
			for _, r := range h.Rules {
				if r.Status == report.StatusDiffers {
					differs = append(differs, r.ID)
				}
			}
			var ms []Mutant
			for _, n := range c.mutants {
				if m, ok := Lookup(n); ok {
					ms = append(ms, m)
				}
			}
			got, want := raceRoots(h.PrimaryFailedRules, ms...), slices.Sorted(slices.Values(c.roots))
			falseAccused := slices.DeleteFunc(slices.Clone(got), func(id string) bool { return slices.Contains(want, id) })
			hidden := slices.DeleteFunc(slices.Clone(want), func(id string) bool { return slices.Contains(got, id) })
			t.Logf("%s: %d root causes, %d false accusations %v, %d hidden faults %v", name, len(got), len(falseAccused), falseAccused, len(hidden), hidden)
			if !slices.Equal(got, want) {
				t.Errorf("primary_failed_rules %v, want %v (failed rules %v)", got, want, h.FailedRules)
			}
			if wantD := slices.Sorted(slices.Values(c.differs)); !slices.Equal(differs, wantD) && !(len(differs) == 0 && len(wantD) == 0) {
				t.Errorf("differing rules %v, want %v", differs, wantD)
			}
			t.Logf("%s: core %s, strict %s, root causes %v, differing %v, %d rules failed in all", name, h.CoreLevel, h.StrictLevel, h.PrimaryFailedRules, differs, len(h.FailedRules))
		})
	}
}

// raceRoots returns got with each rule that a mutant of ms lists under
// AlsoRaces read as that mutant's own rule, sorted and without repeats:
// which spec of a race fails in a run is the scheduler's choice.
func raceRoots(got []string, ms ...Mutant) []string {
	out := slices.Clone(got)
	for i, id := range out {
		for _, m := range ms {
			if slices.Contains(m.AlsoRaces, id) {
				out[i] = m.Rule
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
