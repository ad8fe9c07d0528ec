package mutants

import (
	"math/rand/v2"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Free choices. A correct saver may choose where the contract leaves a
// choice free, and choose differently from one call to the next. The savers
// here make such choices at random: the suite must pass them, and give the
// same report twice for the same seed. They are not mutants (they break no
// rule), so the kill matrix does not run them; TestMutantSuite runs them by
// name, alone or stacked with mutants.

// freeSavers are the savers with free but varying choices, by name.
var freeSavers = []Mutant{
	{
		Name:        "free-task-order",
		Description: "Pending writes of different tasks come back in a random order on every read; each task's writes keep their order (WRITES-13).",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) { t.PendingWrites = shuffleTasks(t.PendingWrites) }
			return w
		},
	},
}

// shuffleTasks returns ws with the groups of each task's writes in a random
// order, each group's writes in the order given.
func shuffleTasks(ws []spec.PendingWrite) []spec.PendingWrite {
	var tasks []string
	byTask := map[string][]spec.PendingWrite{}
	for _, w := range ws {
		if _, ok := byTask[w.TaskID]; !ok {
			tasks = append(tasks, w.TaskID)
		}
		byTask[w.TaskID] = append(byTask[w.TaskID], w)
	}
	rand.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
	out := make([]spec.PendingWrite, 0, len(ws))
	for _, t := range tasks {
		out = append(out, byTask[t]...)
	}
	if ws == nil {
		return nil
	}
	return out
}

// lookupAny returns the mutant or free-choice saver called name.
func lookupAny(name string) (Mutant, bool) {
	if m, ok := Lookup(name); ok {
		return m, true
	}
	i := slices.IndexFunc(freeSavers, func(m Mutant) bool { return m.Name == name })
	if i < 0 {
		return Mutant{}, false
	}
	return freeSavers[i], true
}
