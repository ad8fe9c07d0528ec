package mongo_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/bridge/internal/conftest"
)

func TestMain(m *testing.M) { os.Exit(bridgetest.Main(m)) }

// TestConformanceOverBridge runs the suite through a real child process, a
// fresh database per saver; it must fail no rule and leave no database
// behind. What is under test here is the bridge, which the memory, SQLite
// and PostgreSQL packages run the whole suite over, maintenance
// capabilities included; over MongoDB it proves the saver process's
// wiring (a database per saver, errors mapped to the bridge's codes) on
// the core contract, the engine and the listing of threads. The groups
// skipped below judge the adapter, which its own conformance run (the
// matrix's mongo column) does directly; on FerretDB, where every saver is
// a new database, they took most of this test's minutes.
func TestConformanceOverBridge(t *testing.T) {
	const why = "judged directly in the mongo adapter's conformance run; over the bridge on FerretDB it takes minutes and tests the adapter, not the bridge"
	uri := bridgetest.Env(t, "CHECKPOINTKIT_MONGO_URI", "mongodb://127.0.0.1:27017/")
	before := databases(t, uri)
	t.Cleanup(func() { // after the server's Close, registered later
		for _, db := range databases(t, uri) {
			if !slices.Contains(before, db) {
				t.Errorf("database %s was left behind", db)
			}
		}
	})
	skip := map[string]string{
		"concurrency": why, "model": why, "CTX-5": why,
		"copy_thread": why, "delete_for_runs": why, "prune": why,
	}
	conftest.RunSkipping(t, "mongo", skip, "-adapter", "mongo", "-mongo-uri", uri)
}

// databases lists the databases cmd/checkpointkit-saver names.
func databases(t *testing.T, uri string) []string {
	t.Helper()
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	names, err := client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, "ckbridge_") })
}
