//go:build !unix

package sqlite_test

import "time"

// processCPUTime is not available on this platform.
func processCPUTime() (time.Duration, bool) { return 0, false }
