package refengine

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// The golden traces in testdata/ record the saver traffic of the
// deterministic enginetest scenarios, run on the in-memory adapter with
// SequentialIDs and sequential versions. They are embedded so that any
// adapter can replay them (see Replay); TestGoldenTraces keeps them current
// (go test ./refengine -run TestGoldenTraces -update).
//
//go:embed testdata/*.json
var goldenFS embed.FS

// GoldenTrace is one embedded golden trace.
type GoldenTrace struct {
	// Name is the scenario's name.
	Name  string
	Calls []Call
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
		calls, err := UnmarshalTrace(data)
		if err != nil {
			return nil, fmt.Errorf("golden trace %s: %w", n, err)
		}
		out = append(out, GoldenTrace{Name: strings.TrimSuffix(path.Base(n), ".json"), Calls: calls})
	}
	return out, nil
}
