//go:build !race

package conformance

// raceEnabled is set when the race detector is on; see race_on.go.
const raceEnabled = false
