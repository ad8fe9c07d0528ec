package mongo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// indexInfo is one entry of listIndexes.
type indexInfo struct {
	Name   string `bson:"name"`
	Key    bson.D `bson:"key"`
	Unique bool   `bson:"unique"`
}

func listIndexes(t *testing.T, c *mongodrv.Collection) map[string]indexInfo {
	t.Helper()
	cur, err := c.Indexes().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var idx []indexInfo
	if err := cur.All(context.Background(), &idx); err != nil {
		t.Fatal(err)
	}
	out := map[string]indexInfo{}
	for _, i := range idx {
		out[i.Name] = i
	}
	return out
}

func keyString(d bson.D) string {
	parts := make([]string, len(d))
	for i, e := range d {
		parts[i] = fmt.Sprintf("%s:%v", e.Key, e.Value)
	}
	return strings.Join(parts, ",")
}

// TestIndexes checks the unique compound indexes exist after Setup, that
// Setup is idempotent, and that it also works on collections that already
// hold data and were created without the indexes.
func TestIndexes(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	name := uniqueName("ckk_idx_")
	db := c.Database(name)
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	// Collections created (and filled) before Setup ever ran.
	if _, err := db.Collection(mongo.CheckpointsCollection).InsertOne(ctx, bson.D{{Key: "thread", Value: "old"}, {Key: "ns", Value: ""}, {Key: "id", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	s, err := mongo.New(ctx, c, mongo.WithDatabase(name))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Setup(ctx); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	want := map[string]map[string]string{
		mongo.CheckpointsCollection: {"thread_ns_id": "thread:1,ns:1,id:1 unique", "thread_id_ns": "thread:1,id:-1,ns:1", "id_thread_ns": "id:-1,thread:1,ns:1", "mdx": "mdx:1"},
		mongo.WritesCollection:      {"thread_ns_cid_task_seq": "thread:1,ns:1,cid:1,task:1,seq:1 unique"},
		mongo.ValuesCollection:      {"thread_ns_channel_version": "thread:1,ns:1,channel:1,version:1 unique"},
		mongo.BlobsCollection:       {"thread_blob_n": "thread:1,blob:1,n:1 unique"},
	}
	for coll, idx := range want {
		got := listIndexes(t, db.Collection(coll))
		for name, spec := range idx {
			i, ok := got[name]
			if !ok {
				t.Errorf("%s: index %s missing (have %v)", coll, name, got)
				continue
			}
			desc := keyString(i.Key)
			if i.Unique {
				desc += " unique"
			}
			if desc != spec {
				t.Errorf("%s: index %s = %s, want %s", coll, name, desc, spec)
			}
		}
	}
	// The unique index is enforced on the fields, not only through _id.
	_, err = db.Collection(mongo.CheckpointsCollection).InsertOne(ctx, bson.D{{Key: "thread", Value: "old"}, {Key: "ns", Value: ""}, {Key: "id", Value: "x"}})
	if !mongodrv.IsDuplicateKeyError(err) {
		t.Errorf("duplicate (thread, ns, id) insert: %v, want E11000", err)
	}
}

// explain runs the explain command for a find and returns its result.
func explain(t *testing.T, db *mongodrv.Database, coll string, filter, sort bson.D, limit int64) bson.M {
	t.Helper()
	cmd := bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: filter}}
	if len(sort) > 0 {
		cmd = append(cmd, bson.E{Key: "sort", Value: sort})
	}
	if limit > 0 {
		cmd = append(cmd, bson.E{Key: "limit", Value: limit})
	}
	var out bson.M
	err := db.RunCommand(context.Background(), bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&out)
	if err != nil {
		t.Fatalf("explain %v: %v", cmd, err)
	}
	return out
}

// planFacts collects every "stage" and "indexName" in a MongoDB winning
// plan, however it is nested (classic and SBE explain formats differ).
func planFacts(v any, stages, indexes *[]string) {
	switch x := v.(type) {
	case bson.M:
		for k, e := range x {
			switch k {
			case "stage":
				if s, ok := e.(string); ok {
					*stages = append(*stages, s)
				}
			case "indexName":
				if s, ok := e.(string); ok {
					*indexes = append(*indexes, s)
				}
			case "rejectedPlans":
				continue
			}
			planFacts(e, stages, indexes)
		}
	case bson.D:
		m := bson.M{}
		for _, e := range x {
			m[e.Key] = e.Value
		}
		planFacts(m, stages, indexes)
	case bson.A:
		for _, e := range x {
			planFacts(e, stages, indexes)
		}
	}
}

// field returns v[key] for a document decoded as bson.M or bson.D (the
// driver decodes nested documents as bson.D).
func field(v any, key string) any {
	switch x := v.(type) {
	case bson.M:
		return x[key]
	case bson.D:
		for _, e := range x {
			if e.Key == key {
				return e.Value
			}
		}
	}
	return nil
}

// isFerretDB reports whether the server is FerretDB (its buildInfo carries
// a ferretdbVersion field).
func isFerretDB(t *testing.T, db *mongodrv.Database) bool {
	t.Helper()
	var info bson.M
	if err := db.RunCommand(context.Background(), bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	_, ok := info["ferretdbVersion"]
	return ok
}

// TestExplain checks the query plans of the saver's hot reads.
//
// On MongoDB: GetTuple(latest) and List (one namespace, with Before and a
// limit; one thread across namespaces; every thread) must be index scans
// whose order is the index order (an IXSCAN on the expected index, no SORT
// stage, no COLLSCAN).
//
// On FerretDB v1 with SQLite the explain output has another shape
// (queryPlanner.Plan holds SQLite's EXPLAIN QUERY PLAN rows, plus
// filterPushdown/sortPushdown/limitPushdown flags), and FerretDB pushes down
// only a filter that is exactly {_id: <string>}; every other filter, sort
// and limit is applied in FerretDB's memory. The test pins that: point
// lookups by _id (GetTuple by ID, every upsert) are pushed down, and the
// rest is reported as not pushed down, as the package doc describes. If a
// FerretDB upgrade starts pushing more down, this test fails and the doc
// should be revisited.
func TestExplain(t *testing.T) {
	s := saverT(t)
	for i := range 50 {
		put(t, s, fmt.Sprintf("t%d", i%3), []string{"", "sub:1"}[i%2], "", fmt.Sprintf("%04d", i), map[string]any{"c": int64(i)}, spec.Metadata{"step": int64(i)})
	}
	db := s.Database()
	latestQ, latestSort := mongo.LatestQuery("t1", "")
	type query struct {
		name        string
		filter      bson.D
		sort        bson.D
		limit       int64
		wantIndexes []string // any one of them
	}
	queries := []query{
		{"GetTuple latest", latestQ, latestSort, 1, []string{"thread_ns_id", "thread_id_ns"}},
	}
	for _, c := range []struct {
		name string
		opts spec.ListOptions
		want []string
	}{
		{"List one namespace before+limit", spec.ListOptions{ThreadID: "t1", Before: "0030", Limit: 5}, []string{"thread_ns_id", "thread_id_ns"}},
		{"List one thread, all namespaces", spec.ListOptions{ThreadID: "t1", AllNamespaces: true, Limit: 5}, []string{"thread_id_ns"}},
		{"List all threads", spec.ListOptions{AllNamespaces: true, Before: "0030", Limit: 5}, []string{"id_thread_ns"}},
		{"List all threads, one namespace", spec.ListOptions{Limit: 5}, []string{"id_thread_ns"}},
	} {
		q, sort := mongo.ListQuery(c.opts, nil)
		queries = append(queries, query{c.name, q, sort, int64(c.opts.Limit), c.want})
	}

	if isFerretDB(t, db) {
		byID := explain(t, db, mongo.CheckpointsCollection, bson.D{{Key: "_id", Value: mongo.CheckpointKey("t1", "", "0001")}}, nil, 0)
		if byID["filterPushdown"] != true {
			t.Errorf("FerretDB: _id point lookup not pushed down: %v", byID)
		}
		t.Logf("FerretDB plan of an _id lookup: %v", byID["queryPlanner"])
		for _, q := range queries {
			ex := explain(t, db, mongo.CheckpointsCollection, q.filter, q.sort, q.limit)
			if ex["filterPushdown"] != false || ex["sortPushdown"] != false {
				t.Errorf("FerretDB %s: pushdown flags changed (filter %v, sort %v); revisit the package doc", q.name, ex["filterPushdown"], ex["sortPushdown"])
			}
			t.Logf("FerretDB %s: filterPushdown=%v sortPushdown=%v limitPushdown=%v plan=%v", q.name, ex["filterPushdown"], ex["sortPushdown"], ex["limitPushdown"], ex["queryPlanner"])
		}
		return
	}

	for _, q := range queries {
		ex := explain(t, db, mongo.CheckpointsCollection, q.filter, q.sort, q.limit)
		var stages, indexes []string
		planFacts(field(ex["queryPlanner"], "winningPlan"), &stages, &indexes)
		if slices.Contains(stages, "COLLSCAN") || slices.Contains(stages, "SORT") {
			t.Errorf("%s: plan has a collection scan or an in-memory sort: stages %v", q.name, stages)
		}
		if !slices.ContainsFunc(stages, func(s string) bool { return strings.HasSuffix(s, "IXSCAN") }) {
			t.Errorf("%s: no index scan: stages %v", q.name, stages)
		}
		// Either of two indexes may win where both give the order.
		if !slices.ContainsFunc(q.wantIndexes, func(w string) bool { return slices.Contains(indexes, w) }) {
			t.Errorf("%s: none of the indexes %v used (used %v)", q.name, q.wantIndexes, indexes)
		}
		t.Logf("%s: stages %v indexes %v", q.name, stages, indexes)
	}
}

// TestPlanFacts checks the plan walker TestExplain relies on against
// explain output in the shapes MongoDB produces (classic and SBE), since
// the test server here is FerretDB.
func TestPlanFacts(t *testing.T) {
	for _, c := range []struct {
		name, json string
		stages     []string
		indexes    []string
	}{
		{"classic", `{"queryPlanner": {"winningPlan": {"stage": "LIMIT", "inputStage": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "thread_ns_id", "direction": "backward"}}}, "rejectedPlans": [{"stage": "SORT", "inputStage": {"stage": "COLLSCAN"}}]}}`,
			[]string{"LIMIT", "FETCH", "IXSCAN"}, []string{"thread_ns_id"}},
		{"sbe", `{"queryPlanner": {"winningPlan": {"queryPlan": {"stage": "LIMIT", "inputStage": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "id_thread_ns"}}}, "slotBasedPlan": {"slots": "...", "stages": "[1] limit 5"}}}}`,
			[]string{"LIMIT", "FETCH", "IXSCAN"}, []string{"id_thread_ns"}},
		{"sort", `{"queryPlanner": {"winningPlan": {"stage": "SORT", "inputStage": {"stage": "COLLSCAN"}}}}`,
			[]string{"SORT", "COLLSCAN"}, nil},
	} {
		var ex bson.M
		if err := bson.UnmarshalExtJSON([]byte(c.json), false, &ex); err != nil {
			t.Fatal(err)
		}
		var stages, indexes []string
		planFacts(field(ex["queryPlanner"], "winningPlan"), &stages, &indexes)
		slices.Sort(stages)
		want := slices.Sorted(slices.Values(c.stages))
		if !slices.Equal(stages, want) || !slices.Equal(indexes, c.indexes) {
			t.Errorf("%s: stages %v indexes %v, want %v %v", c.name, stages, indexes, want, c.indexes)
		}
	}
}
