//go:build race

package conformance

// raceEnabled is set when the race detector is on. The model-based specs
// then run fewer random sequences: they check logic, not data races, and
// the race detector slows them down several times.
const raceEnabled = true
