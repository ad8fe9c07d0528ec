//go:build ignore

// This is a template for the authors of third-party checkpointkit adapters
// (here, an imagined Redis saver). Copy it into your adapter's package as
// conformance_test.go, delete the go:build line above (it keeps the
// template out of checkpointkit's own build), and adapt the lines marked
// TEMPLATE. ci/templates/conformance.yml is the matching GitHub workflow.
//
// It is written for an adapter shaped like checkpointkit's own adapters
// (see go doc github.com/checkpointkit/checkpointkit/adapters/sqlite):
//
//	func Open(ctx context.Context, target string, opts ...Option) (*Saver, error)
//	func New(ctx context.Context, client *redis.Client, opts ...Option) (*Saver, error) // if the backend has a client type
//	func (s *Saver) Setup(ctx context.Context) error // idempotent, safe to call concurrently
//	func (s *Saver) Close() error                    // io.Closer; releases what Open opened, never New's client
//	type Option func(*options)                       // validated by Open and New: spec.ErrInvalidArgument
//
// Open and New return a ready saver: they run Setup (schema, indexes), so
// the suite's specs never see storage half set up.

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
			// Open returns a ready saver (it has run Setup).
			s, err := redissaver.Open(ctx, url, redissaver.WithKeyPrefix(prefix))
			if err != nil {
				return nil, nil, err
			}
			cleanup := func() {
				_ = s.DeletePrefix(context.Background(), prefix) // TEMPLATE: drop the spec's data
				_ = s.Close()                                    // releases what Open opened
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
