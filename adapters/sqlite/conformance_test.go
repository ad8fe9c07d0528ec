package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestConformance runs the whole conformance suite against SQLite. By
// default each spec gets a fresh temporary database file, which exercises
// WAL, the connection pool and cross-connection locking; with
// CHECKPOINTKIT_SQLITE_MEMORY=1 each spec gets a private in-memory database
// instead (faster, single connection).
func TestConformance(t *testing.T) {
	memory := os.Getenv("CHECKPOINTKIT_SQLITE_MEMORY") == "1"
	name := "sqlite (file)"
	if memory {
		name = "sqlite (memory)"
	}
	conformance.Run(t, conformance.Harness{
		Name: name,
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			dsn := ":memory:"
			var dir string
			if !memory {
				var err error
				if dir, err = os.MkdirTemp("", "checkpointkit-sqlite-"); err != nil {
					return nil, nil, err
				}
				dsn = filepath.Join(dir, "conformance.db")
			}
			s, err := sqlite.Open(ctx, dsn)
			if err != nil {
				if dir != "" {
					os.RemoveAll(dir)
				}
				return nil, nil, err
			}
			return s, func() {
				s.Close()
				if dir != "" {
					os.RemoveAll(dir)
				}
			}, nil
		},
	})
}
