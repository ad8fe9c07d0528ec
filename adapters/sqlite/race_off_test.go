//go:build !race

package sqlite_test

// raceEnabled is set when the race detector is on (see race_on_test.go).
const raceEnabled = false
