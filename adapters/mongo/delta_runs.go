package mongo

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// runsSpare returns the _ids of the checkpoints of runs that DeleteForRuns
// must leave in place: those on the delta chain of a checkpoint that
// survives (one not of those runs, in a thread and namespace the runs
// touch), back to the seed of each channel its metadata names (SPEC.md
// DELTA-13). It reads the runs' checkpoints once, then per thread and
// namespace they touch its skeleton with metadata and the has flags of the
// values on the survivors' chains.
func (s *Saver) runsSpare(ctx context.Context, runs []string) ([]string, error) {
	toks := make(bson.A, len(runs))
	for i, r := range runs {
		toks[i] = filterToken("run_id", r)
	}
	type hit struct {
		Key    string `bson:"_id"`
		Thread string `bson:"thread"`
		NS     string `bson:"ns"`
	}
	hits, err := findPaged(ctx, s, bson.D{{Key: "mdx", Value: bson.D{{Key: "$in", Value: toks}}}},
		bson.D{{Key: "thread", Value: 1}, {Key: "ns", Value: 1}}, func(h *hit) string { return h.Key })
	if err != nil {
		return nil, err
	}
	type scope struct{ thread, ns string }
	seen := map[scope]bool{}
	var spare []string
	for _, h := range hits {
		sc := scope{h.Thread, h.NS}
		if seen[sc] {
			continue
		}
		seen[sc] = true
		keys, err := s.scopeSpare(ctx, sc.thread, sc.ns, runs)
		if err != nil {
			return nil, err
		}
		spare = append(spare, keys...)
	}
	slices.Sort(spare)
	return spare, nil
}

// scopeSpare is runsSpare for one thread and namespace.
func (s *Saver) scopeSpare(ctx context.Context, thread, ns string, runs []string) ([]string, error) {
	docs, err := findPaged(ctx, s, bson.D{{Key: "thread", Value: thread}, {Key: "ns", Value: ns}},
		bson.D{{Key: "id", Value: 1}, {Key: "parent", Value: 1}, {Key: "refs", Value: 1}, {Key: "thread", Value: 1},
			{Key: "ns", Value: 1}, {Key: "meta", Value: 1}}, func(d *skelDoc) string { return d.Key })
	if err != nil {
		return nil, err
	}
	sk := make(map[string]*skelDoc, len(docs))
	for i := range docs {
		sk[docs[i].ID] = &docs[i]
	}
	metas := make([]payload, 0, len(sk))
	for _, d := range sk {
		metas = append(metas, d.Meta)
	}
	blobs, err := s.loadBlobs(ctx, metas)
	if err != nil {
		return nil, err
	}
	doomed := map[string]bool{}
	type survivor struct {
		want []string
		path []*skelDoc
	}
	var survivors []survivor
	var onPaths []*skelDoc
	var allWant []string
	for id, d := range sk {
		data, ok := payloadBytes(d.Meta, blobs)
		if !ok {
			continue // a Put in flight: neither doomed nor a survivor yet
		}
		md, err := decodeRecord(data, s.serde)
		if err != nil {
			return nil, err
		}
		if r, ok := md["run_id"].(string); ok && slices.Contains(runs, r) {
			doomed[id] = true
			continue
		}
		want := spec.DeltaChannels(spec.Metadata(md))
		if len(want) == 0 {
			continue
		}
		path, err := ancestors(sk, d)
		if err != nil {
			return nil, err
		}
		survivors = append(survivors, survivor{want, path})
		onPaths = append(onPaths, path...)
		allWant = append(allWant, want...)
	}
	if len(survivors) == 0 || len(doomed) == 0 {
		return nil, nil
	}
	has, err := s.hasValues(ctx, onPaths, slices.Compact(slices.Sorted(slices.Values(allWant))))
	if err != nil {
		return nil, err
	}
	spared := map[string]bool{}
	var out []string
	for _, sv := range survivors {
		for _, id := range cutChain(sv.path, sv.want, has) {
			if doomed[id] && !spared[id] {
				spared[id] = true
				out = append(out, sk[id].Key)
			}
		}
	}
	return out, nil
}

// findPaged reads the checkpoint documents matching q, projected by proj,
// a bounded page at a time in _id order (as runsSweep does), so that no
// find asks for an unbounded result.
func findPaged[T any](ctx context.Context, s *Saver, q, proj bson.D, key func(*T) string) ([]T, error) {
	var out []T
	after := ""
	for {
		pq := q
		if after != "" {
			pq = append(slices.Clip(q), bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}})
		}
		cur, err := s.checkpoints.Find(ctx, pq, mopts.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).
			SetLimit(copyBatch).SetBatchSize(copyBatch+1).SetProjection(proj))
		if err != nil {
			return nil, err
		}
		var page []T
		if err := cur.All(ctx, &page); err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < copyBatch {
			return out, nil
		}
		after = key(&page[len(page)-1])
	}
}
