//go:build race

package postgres

// raceEnabled is set when the race detector is on, under which the read
// path's allocations are not those of a normal build: see pgRaceSlack.
const raceEnabled = true
