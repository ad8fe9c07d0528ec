package mongo_test

import (
	"context"
	"testing"

	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestConformance runs the full conformance suite, every optional
// capability included and nothing skipped, against the server named by
// CHECKPOINTKIT_MONGO_URI. Each spec gets a fresh database, dropped in its
// cleanup.
//
// On FerretDB the suite's client uses a single connection. FerretDB's
// SQLite backend lets one writer in at a time and makes the others wait in
// SQLite's sleeping busy handler, which turned the concurrency specs into
// minutes of back-off; with one connection the saver's goroutines still
// race inside the driver and the saver, while the server sees one command
// at a time. Server-side races (E11000 on concurrent upserts) are exercised
// with the default pool by TestConcurrentUpserts.
//
// The faults group routes savers of its own through the suite's fault
// proxy; see faultHarness.
func TestConformance(t *testing.T) {
	c := client(t)
	ferret := isFerretDB(t, c.Database("admin"))
	if ferret {
		single, err := mongodrv.Connect(options.Client().ApplyURI(testURI(t)).SetMaxPoolSize(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = single.Disconnect(context.Background()) })
		c = single
	}
	conformance.Run(t, conformance.Harness{
		Name: "mongo",
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			s, cleanup, err := newSaver(ctx, c)
			if err != nil {
				return nil, nil, err
			}
			return s, cleanup, nil
		},
		Faults: faultHarness(t, ferret),
	})
}
