//go:build !race

package postgres

// raceEnabled is set when the race detector is on; see race_on_test.go.
const raceEnabled = false
