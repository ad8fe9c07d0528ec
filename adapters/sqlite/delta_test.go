package sqlite

import (
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
)

// TestDelta runs the adapters' shared delta-history scenarios (package
// savertest) on fresh file databases.
func TestDelta(t *testing.T) {
	savertest.RunDelta(t, func(t *testing.T) savertest.DeltaSaver { s, _ := openFile(t); return s })
}
