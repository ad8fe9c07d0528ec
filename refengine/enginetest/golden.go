package enginetest

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

// The golden traces in testdata/ record the saver traffic of the
// deterministic scenarios, run on the in-memory adapter with
// trace.SequentialIDs and sequential versions. They are embedded here, in a
// package only tests import, so that the conformance suite can replay them
// against any adapter (see trace.Replay) without every binary that imports
// refengine carrying them; TestGoldenTraces keeps them current
// (go test ./refengine/enginetest -run TestGoldenTraces -update).
//
//go:embed testdata/*.json
var goldenFS embed.FS

// GoldenTrace is one embedded golden trace.
type GoldenTrace struct {
	// Name is the scenario's name.
	Name string
	// Calls are the recorded saver calls, in order.
	Calls []trace.Call
}

// GoldenTraces returns the embedded golden traces, sorted by name.
func GoldenTraces() ([]GoldenTrace, error) {
	names, err := fs.Glob(goldenFS, "testdata/*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]GoldenTrace, 0, len(names))
	for _, n := range names {
		data, err := goldenFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		calls, err := trace.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("golden trace %s: %w", n, err)
		}
		out = append(out, GoldenTrace{Name: strings.TrimSuffix(path.Base(n), ".json"), Calls: calls})
	}
	return out, nil
}
