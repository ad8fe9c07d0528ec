package mutants

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

// specRuleIDs returns the rule IDs defined in SPEC.md.
func specRuleIDs() map[string]bool {
	out := map[string]bool{}
	for _, id := range orderedRuleIDs() {
		out[id] = true
	}
	return out
}

func TestRegistry(t *testing.T) {
	all := All()
	if len(all) < 35 {
		t.Errorf("%d mutants registered, want at least 35", len(all))
	}
	rules := specRuleIDs()
	if len(rules) == 0 {
		t.Fatal("no rule IDs found in spec.SpecMarkdown()")
	}
	for _, m := range all {
		if !rules[m.Rule] {
			t.Errorf("mutant %s breaks rule %s, which SPEC.md does not define", m.Name, m.Rule)
		}
		got, ok := Lookup(m.Name)
		if !ok || got.Name != m.Name {
			t.Errorf("Lookup(%q) = %v, %v", m.Name, got.Name, ok)
		}
		if m.Build() == nil {
			t.Errorf("mutant %s: New returned nil", m.Name)
		}
	}
	if _, ok := Lookup(ControlName); ok {
		t.Errorf("a mutant is called %q", ControlName)
	}
}

func TestRegisterRejectsBadEntries(t *testing.T) {
	ok := Mutant{Name: "x-ok", Rule: "PUT-1", Description: "d", New: func() spec.Saver { return memory.New() }}
	for name, m := range map[string]Mutant{
		"bad name":    {Name: "Bad Name", Rule: ok.Rule, Description: ok.Description, New: ok.New},
		"control":     {Name: ControlName, Rule: ok.Rule, Description: ok.Description, New: ok.New},
		"bad rule":    {Name: ok.Name, Rule: "put-1", Description: ok.Description, New: ok.New},
		"no New":      {Name: ok.Name, Rule: ok.Rule, Description: ok.Description},
		"no text":     {Name: ok.Name, Rule: ok.Rule, New: ok.New},
		"duplicate":   All()[0],
		"empty entry": {},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("register(%+v) did not panic", m)
				}
			}()
			register(m)
		})
	}
}

// TestMutantsDeviate runs each mutant's witness scenario against the
// mutant and against the memory adapter, and requires different
// observations: a mutant that behaves like the adapter on its own scenario
// has stopped breaking its rule.
func TestMutantsDeviate(t *testing.T) {
	for _, m := range All() {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			if m.Witness == nil {
				t.Skipf("%s has no witness scenario (its flaw shows only under concurrency or through an engine)", m.Name)
			}
			ctx := context.Background()
			want := m.Witness(ctx, memory.New())
			got := m.Witness(ctx, m.Build())
			if reflect.DeepEqual(got, want) {
				t.Errorf("%s (%s) behaves like the memory adapter on its witness scenario:\n%v", m.Name, m.Rule, show(got))
			} else {
				t.Logf("memory: %v\nmutant: %v", show(want), show(got))
			}
		})
	}
}

func show(v any) string { return fmt.Sprintf("%#v", v) }

// TestWrapperForwards checks that a Wrapper without hooks behaves exactly
// like the memory adapter on every witness scenario.
func TestWrapperForwards(t *testing.T) {
	ctx := context.Background()
	for _, m := range All() {
		if m.Witness == nil {
			continue
		}
		want := m.Witness(ctx, memory.New())
		got := m.Witness(ctx, plain())
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s scenario: plain wrapper %v, memory %v", m.Name, show(got), show(want))
		}
	}
}

// TestRuleCoverage requires a mutant for every ENGINE-* rule of SPEC.md:
// the engine group is the only place those rules are checked, so a rule
// without a mutant is a rule nothing proves the suite can catch. Other
// rules without a mutant are only logged: rules are added to SPEC.md ahead
// of their specs and mutants, and the gap should stay visible without
// breaking the build in between.
func TestRuleCoverage(t *testing.T) {
	covered := map[string]int{}
	for _, m := range All() {
		covered[m.Rule]++
	}
	var missing, engine []string
	for _, id := range orderedRuleIDs() {
		if covered[id] > 0 {
			continue
		}
		if strings.HasPrefix(id, "ENGINE-") {
			engine = append(engine, id)
		} else {
			missing = append(missing, id)
		}
	}
	t.Logf("%d mutants cover %d of %d SPEC.md rules", len(All()), len(covered), len(orderedRuleIDs()))
	if len(missing) > 0 {
		t.Logf("rules no mutant breaks yet: %v", missing)
	}
	if len(engine) > 0 {
		t.Errorf("ENGINE rules no mutant breaks: %v (add one to engine_mutants*.go)", engine)
	}
}

// orderedRuleIDs returns the rule IDs of SPEC.md in document order.
func orderedRuleIDs() []string {
	re := regexp.MustCompile(`(?m)^- \*\*([A-Z]+(?:-[A-Z]+)*-[0-9]+)\*\*`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(spec.SpecMarkdown(), -1) {
		out = append(out, m[1])
	}
	return out
}
