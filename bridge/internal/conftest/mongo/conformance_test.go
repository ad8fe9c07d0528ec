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

// TestConformanceOverBridge runs the whole suite through a real child process, a
// fresh database per saver; it must reach level FULL and leave no database
// behind.
func TestConformanceOverBridge(t *testing.T) {
	uri := bridgetest.Env(t, "CHECKPOINTKIT_MONGO_URI", "mongodb://127.0.0.1:27017/")
	before := databases(t, uri)
	t.Cleanup(func() { // after the server's Close, registered later
		for _, db := range databases(t, uri) {
			if !slices.Contains(before, db) {
				t.Errorf("database %s was left behind", db)
			}
		}
	})
	conftest.Run(t, "mongo", "-adapter", "mongo", "-mongo-uri", uri)
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
