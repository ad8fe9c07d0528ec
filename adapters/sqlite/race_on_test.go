//go:build race

package sqlite_test

// raceEnabled is set when the race detector is on. Its sync.Pool drops a
// random quarter of what is put back, so the read path allocates again
// the buffers it would recycle: the allocation budgets get raceSlack.
const raceEnabled = true
