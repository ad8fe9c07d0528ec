//go:build ignore

// This is a template for the authors of third-party checkpointkit adapters
// (here, an imagined Redis saver). Copy it into your adapter's package as
// conformance_test.go, delete the go:build line above (it keeps the
// template out of checkpointkit's own build), and adapt the lines marked
// TEMPLATE. ci/templates/conformance.yml is the matching GitHub workflow.

package redis_test // TEMPLATE: your package name + _test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"

	redissaver "example.com/checkpointkit-redis" // TEMPLATE: your adapter
)

// TestConformance runs checkpointkit's conformance suite against the Redis
// saver. Run it with plain go test, from the package directory:
//
//	go test -run '^TestConformance$' .                                     # everything
//	go test -run '^TestConformance$' . -ginkgo.label-filter=list           # one capability
//	go test -run '^TestConformance$' . -ginkgo.focus='LIST-BEFORE-2'       # one rule
//	CHECKPOINTKIT_REPORT_JSON=report.json go test -run '^TestConformance$' . # JSON report
//
// or through checkpointkit's matrix runner, which adds progress, JUnit XML
// and the capability matrix (in out/matrix/):
//
//	go run github.com/checkpointkit/checkpointkit/ci/cmd/matrix -backends redis=.
func TestConformance(t *testing.T) {
	url := os.Getenv("REDIS_URL") // TEMPLATE: your server's connection string
	if url == "" {
		// In CI a missing server must fail the run, not skip it silently.
		if os.Getenv("CI") != "" {
			t.Fatal("REDIS_URL is not set, and CI is: start a server or set REDIS_URL")
		}
		t.Skip("REDIS_URL is not set")
	}
	var specs atomic.Int64
	conformance.Run(t, conformance.Harness{
		// Name is the column title in the matrix and the report.
		Name: "redis",
		// New returns a saver over empty storage that no other spec sees;
		// the suite calls it once per spec (and per model-based sequence).
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			// TEMPLATE: isolate each spec, e.g. with a key prefix of its own.
			prefix := fmt.Sprintf("checkpointkit-conformance:%d:%d:", os.Getpid(), specs.Add(1))
			s, err := redissaver.Open(ctx, url, redissaver.WithKeyPrefix(prefix))
			if err != nil {
				return nil, nil, err
			}
			cleanup := func() {
				_ = s.DeletePrefix(context.Background(), prefix) // TEMPLATE: drop the spec's data
				_ = s.Close()
			}
			return s, cleanup, nil
		},
		// Skip lists rule IDs or capability labels you knowingly fail or
		// do not support yet, with the reason shown in the report. Optional
		// capabilities your saver does not implement are reported as "not
		// supported" without being listed here.
		Skip: map[string]string{
			// "LIST-FILTER-3": "nested filter values are not supported yet",
		},
	})
}
