package mongo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
)

// uriEnv names the environment variable holding the URI of the server the
// tests run against.
const uriEnv = "CHECKPOINTKIT_MONGO_URI"

// backendRequired reports whether a missing backend is a failure rather
// than a reason to skip.
func backendRequired() bool {
	return os.Getenv("CI") != "" || os.Getenv("CHECKPOINTKIT_REQUIRE_BACKENDS") != ""
}

// testURI returns the server URI, skipping the test when none is configured
// (or failing it under CI).
func testURI(tb testing.TB) string {
	tb.Helper()
	uri := os.Getenv(uriEnv)
	if uri == "" {
		msg := uriEnv + " is not set: no MongoDB-compatible server to test against " +
			"(build and start ci/ferretdb, then export the URI it prints)"
		if backendRequired() {
			tb.Fatal(msg + "; CI or CHECKPOINTKIT_REQUIRE_BACKENDS is set, so this is a failure")
		}
		tb.Skip(msg)
	}
	return uri
}

var (
	sharedOnce   sync.Once
	sharedClient *mongodrv.Client
	sharedErr    error
)

// client returns a client shared by the tests of this package.
func client(tb testing.TB) *mongodrv.Client {
	tb.Helper()
	uri := testURI(tb)
	sharedOnce.Do(func() {
		sharedClient, sharedErr = mongodrv.Connect(options.Client().ApplyURI(uri))
		if sharedErr == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sharedErr = sharedClient.Ping(ctx, nil)
		}
	})
	if sharedErr != nil {
		tb.Fatalf("connect to %s: %v", uri, sharedErr)
	}
	return sharedClient
}

// uniqueName returns a database name no other test uses.
func uniqueName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// newSaver returns a saver over a fresh database (set up by New), and a
// cleanup function that drops the database.
func newSaver(ctx context.Context, c *mongodrv.Client, opts ...mongo.Option) (*mongo.Saver, func(), error) {
	name := uniqueName("ckk_")
	s, err := mongo.New(ctx, c, append([]mongo.Option{mongo.WithDatabase(name)}, opts...)...)
	if err != nil {
		_ = c.Database(name).Drop(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	cleanup := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Database(name).Drop(cctx)
	}
	return s, cleanup, nil
}

// saverT is newSaver for a test: cleanup is registered with t.
func saverT(tb testing.TB, opts ...mongo.Option) *mongo.Saver {
	tb.Helper()
	c := client(tb)
	s, cleanup, err := newSaver(context.Background(), c, opts...)
	if err != nil {
		tb.Fatalf("new saver: %v", err)
	}
	tb.Cleanup(cleanup)
	return s
}
