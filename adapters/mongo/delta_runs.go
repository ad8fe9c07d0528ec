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
// DELTA-13). It reads the runs' checkpoints a page at a time, then for
// each thread and namespace they touch only what a surviving chain through
// them can reach (scopeSpare).
func (s *Saver) runsSpare(ctx context.Context, runs []string) ([]string, error) {
	toks := make(bson.A, len(runs))
	for i, r := range runs {
		toks[i] = filterToken("run_id", r)
	}
	type hit struct {
		Key    string `bson:"_id"`
		Thread string `bson:"thread"`
		NS     string `bson:"ns"`
		ID     string `bson:"id"`
	}
	hits, err := findPaged(ctx, s, bson.D{{Key: "mdx", Value: bson.D{{Key: "$in", Value: toks}}}},
		bson.D{{Key: "thread", Value: 1}, {Key: "ns", Value: 1}, {Key: "id", Value: 1}}, func(h *hit) string { return h.Key })
	if err != nil {
		return nil, err
	}
	type scope struct{ thread, ns string }
	lowest := map[scope]string{}
	var order []scope
	for _, h := range hits {
		sc := scope{h.Thread, h.NS}
		lo, ok := lowest[sc]
		if !ok {
			order = append(order, sc)
		}
		if !ok || h.ID < lo {
			lowest[sc] = h.ID
		}
	}
	var spare []string
	for _, sc := range order {
		keys, err := s.scopeSpare(ctx, sc.thread, sc.ns, runs, lowest[sc])
		if err != nil {
			return nil, err
		}
		spare = append(spare, keys...)
	}
	slices.Sort(spare)
	return spare, nil
}

// scopeSpare is runsSpare for one thread and namespace, whose doomed
// checkpoints have IDs from lo up. A surviving chain that needs one of
// them descends from it; as a parent's ID sorts below its child's, such a
// chain lies at and above lo, and only that range is read, a page at a
// time, keeping the parent links and the delta channels of the survivors
// but no metadata. When a checkpoint below lo has its parent at or above
// it (IDs that do not follow the chain), one find tells, and the whole
// scope is read instead.
func (s *Saver) scopeSpare(ctx context.Context, thread, ns string, runs []string, lo string) ([]string, error) {
	from := lo
	cross, err := s.checkpoints.Find(ctx, bson.D{{Key: "thread", Value: thread}, {Key: "ns", Value: ns},
		{Key: "id", Value: bson.D{{Key: "$lt", Value: lo}}}, {Key: "parent", Value: bson.D{{Key: "$gte", Value: lo}}}},
		mopts.Find().SetLimit(1).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var crossing []bson.Raw
	if err := cross.All(ctx, &crossing); err != nil {
		return nil, err
	}
	if len(crossing) > 0 {
		from = ""
	}
	sk := map[string]*skelDoc{}
	doomed := map[string]bool{}
	type survivor struct {
		doc  *skelDoc
		want []string
	}
	var survivors []survivor
	err = s.scopePages(ctx, thread, ns, from, func(page []skelDoc) error {
		metas := make([]payload, len(page))
		for i := range page {
			metas[i] = page[i].Meta
		}
		blobs, err := s.loadBlobs(ctx, metas)
		if err != nil {
			return err
		}
		for i := range page {
			d := &page[i]
			data, ok := payloadBytes(d.Meta, blobs)
			d.Meta = payload{}
			sk[d.ID] = d
			if !ok {
				continue // a Put in flight: neither doomed nor a survivor yet
			}
			md, err := decodeRecord(data, s.serde)
			if err != nil {
				return err
			}
			if r, ok := md["run_id"].(string); ok && slices.Contains(runs, r) {
				doomed[d.ID] = true
			} else if want := spec.DeltaChannels(spec.Metadata(md)); len(want) > 0 {
				survivors = append(survivors, survivor{d, want})
			}
		}
		return nil
	})
	if err != nil || len(survivors) == 0 || len(doomed) == 0 {
		return nil, err
	}
	// Every checkpoint on a survivor's path, once (a walk stops where an
	// earlier one went: the rest of the path is collected already), for one
	// read of the has flags of every channel any survivor wants.
	var onPaths []*skelDoc
	collected := map[string]bool{}
	var allWant []string
	for _, sv := range survivors {
		for cur := sv.doc.Parent; cur != "" && !collected[cur] && sk[cur] != nil; cur = sk[cur].Parent {
			collected[cur] = true
			onPaths = append(onPaths, sk[cur])
		}
		allWant = append(allWant, sv.want...)
	}
	has, err := s.hasValues(ctx, onPaths, slices.Compact(slices.Sorted(slices.Values(allWant))))
	if err != nil {
		return nil, err
	}
	spared := map[string]bool{}
	var out []string
	for _, sv := range survivors {
		path, _ := ancestorsUntil(sk, sv.doc)
		chain, _ := cutChain(path, sv.want, has)
		for _, d := range chain {
			if doomed[d.ID] && !spared[d.ID] {
				spared[d.ID] = true
				out = append(out, d.Key)
			}
		}
	}
	return out, nil
}

// scopePages calls fn with the skeletons (metadata included) of the
// checkpoints of thread and ns with IDs from from up ("": all of them), a
// bounded page at a time in ID order, resuming after the last ID.
func (s *Saver) scopePages(ctx context.Context, thread, ns, from string, fn func([]skelDoc) error) error {
	idCond := bson.D{{Key: "$gte", Value: from}}
	for {
		cur, err := s.checkpoints.Find(ctx, bson.D{{Key: "thread", Value: thread}, {Key: "ns", Value: ns}, {Key: "id", Value: idCond}},
			mopts.Find().SetSort(bson.D{{Key: "id", Value: 1}}).SetLimit(copyBatch).SetBatchSize(copyBatch+1).SetProjection(skelProj(true)))
		if err != nil {
			return err
		}
		var page []skelDoc
		if err := cur.All(ctx, &page); err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if len(page) < copyBatch {
			return nil
		}
		idCond = bson.D{{Key: "$gt", Value: page[len(page)-1].ID}}
	}
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
