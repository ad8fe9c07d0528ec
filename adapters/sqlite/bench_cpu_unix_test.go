//go:build unix

package sqlite_test

import (
	"syscall"
	"time"
)

// processCPUTime returns the CPU time (user + system) this process has used.
// On a shared machine wall-clock ns/op mostly measures the other tenants;
// CPU time per op measures the saver.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
