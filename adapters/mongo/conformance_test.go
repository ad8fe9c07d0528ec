package mongo_test

import (
	"context"
	"testing"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestConformance runs the full conformance suite, every optional
// capability included, against the server named by CHECKPOINTKIT_MONGO_URI.
// Each spec gets a fresh database, dropped in its cleanup.
func TestConformance(t *testing.T) {
	c := client(t)
	conformance.Run(t, conformance.Harness{
		Name: "mongo",
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			s, cleanup, err := newSaver(ctx, c)
			if err != nil {
				return nil, nil, err
			}
			return s, cleanup, nil
		},
	})
}
