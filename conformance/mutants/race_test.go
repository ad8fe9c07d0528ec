//go:build race

package mutants

// raceEnabled reports whether this test binary was built with -race, which
// the data-race mutant needs to be caught.
const raceEnabled = true
