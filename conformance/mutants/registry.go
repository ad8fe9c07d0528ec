package mutants

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutant is a deliberately broken saver that the conformance suite must
// catch.
type Mutant struct {
	// Name identifies the mutant: lower-case words joined by hyphens. It is
	// the value of CHECKPOINTKIT_MUTANT in the kill test.
	Name string
	// Rule is the ID (as in spec/SPEC.md) of the one rule the mutant breaks.
	// The suite must fail at least one spec citing it, or report that the
	// saver differs from it the way a LangGraph saver does.
	Rule string
	// Description says what the mutant does wrong, in one sentence.
	Description string
	// New builds the mutant over the saver that wrap returns. Call it only
	// through Build or Stack, which decide what wrap wraps.
	New func() spec.Saver
	// Witness, when set, runs a small scenario directly against a saver and
	// returns what it observed. The package's own tests check that the
	// mutant's observation differs from the memory adapter's, so a mutant
	// that silently stopped deviating is noticed without running the suite.
	// The observation should be printable with %v and comparable with
	// reflect.DeepEqual.
	Witness func(ctx context.Context, s spec.Saver) any
	// AlsoRaces lists the other concurrency rules whose specs observe the
	// same race as Rule's: a race that tears a checkpoint shows wherever a
	// reader meets it, and the scheduler decides in which spec that is. The
	// kill test takes a failing spec citing any of them as a kill (for a
	// NeedsRace mutant, a race reported during one), and in the root causes
	// any of them stands for Rule.
	AlsoRaces []string
	// NeedsRace marks a mutant that only the race detector can catch (a data
	// race with no visible effect). Without -race the kill test reports it
	// as "needs -race" instead of running it.
	NeedsRace bool
}

// ControlName is the name under which the kill test runs the unmutated
// memory adapter. No mutant may use it.
const ControlName = "control"

var (
	regMu    sync.Mutex
	registry []Mutant
	nameRE   = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	ruleRE   = regexp.MustCompile(`^[A-Z]+(-[A-Z]+)*-[0-9]+$`)
)

// register adds m to the registry. Files of this package call it from init
// functions, one call per mutant. It panics on a malformed or duplicate
// entry, so a mistake shows up as soon as the package is loaded.
func register(m Mutant) {
	switch {
	case !nameRE.MatchString(m.Name) || m.Name == ControlName:
		panic(fmt.Sprintf("mutants: bad mutant name %q", m.Name))
	case !ruleRE.MatchString(m.Rule):
		panic(fmt.Sprintf("mutants: %s: bad rule ID %q", m.Name, m.Rule))
	case m.New == nil:
		panic(fmt.Sprintf("mutants: %s: nil constructor", m.Name))
	case strings.TrimSpace(m.Description) == "":
		panic(fmt.Sprintf("mutants: %s: empty description", m.Name))
	}
	regMu.Lock()
	defer regMu.Unlock()
	for _, r := range registry {
		if r.Name == m.Name {
			panic(fmt.Sprintf("mutants: duplicate mutant %q", m.Name))
		}
	}
	registry = append(registry, m)
}

// All returns every registered mutant, sorted by name.
func All() []Mutant {
	regMu.Lock()
	defer regMu.Unlock()
	out := slices.Clone(registry)
	slices.SortFunc(out, func(a, b Mutant) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the mutant called name.
func Lookup(name string) (Mutant, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	for _, m := range registry {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
}
