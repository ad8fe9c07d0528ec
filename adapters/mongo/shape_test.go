package mongo_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestInvalidArguments checks that Open and New reject bad options and
// targets with ErrInvalidArgument before contacting a server (there is
// none at the address used).
func TestInvalidArguments(t *testing.T) {
	ctx := context.Background()
	const nowhere = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100"
	c, err := mongodrv.Connect(options.Client().ApplyURI(nowhere))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	for name, opt := range map[string]mongo.Option{
		"empty database":    mongo.WithDatabase(""),
		"dotted database":   mongo.WithDatabase("a.b"),
		"long database":     mongo.WithDatabase(strings.Repeat("d", 64)),
		"dollar prefix":     mongo.WithCollectionPrefix("$p"),
		"system prefix":     mongo.WithCollectionPrefix("system."),
		"nil serde":         mongo.WithSerde(nil),
		"zero page size":    mongo.WithListPageSize(0),
		"nil option":        nil,
		"page size > int32": mongo.WithListPageSize(1 << 40),
	} {
		if _, err := mongo.New(ctx, c, opt); !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("New with %s: %v, want ErrInvalidArgument", name, err)
		}
		if _, err := mongo.Open(ctx, nowhere, opt); !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("Open with %s: %v, want ErrInvalidArgument", name, err)
		}
	}
	for _, target := range []string{"", "http://localhost", "mongodb://host/?w=bogus&journal=maybe"} {
		if _, err := mongo.Open(ctx, target); !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("Open(%q): %v, want ErrInvalidArgument", target, err)
		}
	}
	if _, err := mongo.New(ctx, nil); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Errorf("New(nil client): %v", err)
	}
}

// TestSetupConcurrent creates one fresh database's indexes from several
// savers at once (each New runs Setup), then runs Setup from several
// goroutines of one saver at once: every call succeeds and the saver
// works.
func TestSetupConcurrent(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	name := uniqueName("ckk_setup_")
	t.Cleanup(func() { _ = c.Database(name).Drop(context.Background()) })
	const n = 4
	savers := make([]*mongo.Saver, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range savers {
		wg.Go(func() { savers[i], errs[i] = mongo.New(ctx, c, mongo.WithDatabase(name)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent New: %v", err)
	}
	for i := range errs {
		wg.Go(func() { errs[i] = savers[0].Setup(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Setup: %v", err)
	}
	if got := listIndexes(t, savers[0].Database().Collection(mongo.CheckpointsCollection)); len(got) != 5 {
		t.Errorf("checkpoint indexes %v, want _id and 4 of the saver's", got)
	}
	put(t, savers[1], "t", "", "", "1", map[string]any{"c": "v"}, nil)
	if got := listIDs(t, savers[2], spec.ListOptions{}); len(got) != 1 {
		t.Errorf("list: %v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := savers[0].Setup(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Setup with a cancelled context: %v", err)
	}
}

// prefixSerde wraps the default serde and marks what it writes, to show
// what WithSerde encodes.
type prefixSerde struct{}

func (prefixSerde) Encode(v any) ([]byte, error) {
	data, err := spec.DefaultSerde().Encode(v)
	return append([]byte("P:"), data...), err
}

func (prefixSerde) Decode(data []byte) (any, error) {
	rest, ok := bytes.CutPrefix(data, []byte("P:"))
	if !ok {
		return nil, errors.New("not written by prefixSerde")
	}
	return spec.DefaultSerde().Decode(rest)
}

// storedPayload is how a payload field looks in a document (inline).
type storedPayload struct {
	D []byte `bson:"d"`
}

// TestWithSerdeCoversValuesAndWrites checks that WithSerde encodes channel
// values and pending-write values, while the checkpoint record and the
// exact metadata copy use the fixed codec and the readable metadata is
// BSON; and that records written with the serde (as earlier versions did)
// still read back.
func TestWithSerdeCoversValuesAndWrites(t *testing.T) {
	s := saverT(t, mongo.WithSerde(prefixSerde{}))
	ctx := context.Background()
	md := spec.Metadata{"source": "input", "n": 1.0, "step": int64(2)}
	cfg := put(t, s, "t", "", "", "1", map[string]any{"c": "value"}, md)
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "w", Value: "write"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	var value struct {
		V storedPayload `bson:"v"`
	}
	var write struct {
		Writes []struct {
			V storedPayload `bson:"v"`
		} `bson:"writes"`
	}
	var cp struct {
		CP       storedPayload `bson:"cp"`
		Meta     storedPayload `bson:"meta"`
		Metadata bson.M        `bson:"metadata"`
	}
	db := s.Database()
	for coll, out := range map[string]any{mongo.ValuesCollection: &value, mongo.WritesCollection: &write, mongo.CheckpointsCollection: &cp} {
		if err := db.Collection(coll).FindOne(ctx, bson.D{}).Decode(out); err != nil {
			t.Fatalf("%s: %v", coll, err)
		}
	}
	if len(write.Writes) != 1 || !bytes.HasPrefix(value.V.D, []byte("P:")) || !bytes.HasPrefix(write.Writes[0].V.D, []byte("P:")) {
		t.Errorf("value %q or writes %+v not encoded by the serde", value.V.D, write.Writes)
	}
	if got, err := spec.DefaultSerde().Decode(cp.Meta.D); err != nil || !reflect.DeepEqual(got, map[string]any(md)) {
		t.Errorf("exact metadata not in the fixed codec: %v, %v", got, err)
	}
	if _, err := spec.DefaultSerde().Decode(cp.CP.D); err != nil {
		t.Errorf("checkpoint record not in the fixed codec: %v", err)
	}
	if cp.Metadata["source"] != "input" {
		t.Errorf("readable metadata %v", cp.Metadata)
	}
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tup.Metadata, md) || tup.Checkpoint.ChannelValues["c"] != "value" || tup.PendingWrites[0].Value != "write" {
		t.Fatalf("round trip: %+v", tup)
	}

	// Records written with the serde, as before the fixed codec.
	legacyMeta, _ := prefixSerde{}.Encode(map[string]any(md))
	legacyCP, _ := prefixSerde{}.Encode(mustDecode(t, cp.CP.D))
	if _, err := db.Collection(mongo.CheckpointsCollection).UpdateOne(ctx, bson.D{},
		bson.D{{Key: "$set", Value: bson.D{{Key: "meta.d", Value: legacyMeta}, {Key: "cp.d", Value: legacyCP}}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tup) {
		t.Errorf("legacy records read back as\n%#v\nwant\n%#v", got, tup)
	}
}

func mustDecode(t *testing.T, data []byte) any {
	t.Helper()
	v, err := spec.DefaultSerde().Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
