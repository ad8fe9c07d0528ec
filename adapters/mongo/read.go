package mongo

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// GetTuple returns the checkpoint named by cfg, or the latest of its thread
// and namespace. A lookup by ID is an _id point lookup; the latest is the
// first entry of the (thread, ns, id) index read backwards. See
// [spec.Saver.GetTuple].
func (s *Saver) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := spec.ValidateGetTuple(cfg); err != nil {
		return nil, err
	}
	var res *mongo.SingleResult
	if cfg.CheckpointID != "" {
		res = s.checkpoints.FindOne(ctx, bson.D{{Key: "_id", Value: checkpointKey(cfg.ThreadID, cfg.Namespace, cfg.CheckpointID)}})
	} else {
		q, sort := latestQuery(cfg.ThreadID, cfg.Namespace)
		res = s.checkpoints.FindOne(ctx, q, mopts.FindOne().SetSort(sort))
	}
	var doc checkpointDoc
	if err := res.Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, fmt.Errorf("mongo: get thread %q namespace %q checkpoint %q: %w",
				cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, spec.ErrNotFound)
		}
		return nil, wrapErr(ctx, fmt.Sprintf("get thread %q namespace %q", cfg.ThreadID, cfg.Namespace), err)
	}
	tuples, err := s.assemble(ctx, []checkpointDoc{doc})
	if err != nil {
		return nil, err
	}
	return tuples[0].tuple, nil
}

// latestQuery returns the filter and sort that find the latest checkpoint
// of a thread and namespace: the (thread, ns, id) index read backwards,
// limited to one document.
func latestQuery(thread, ns string) (bson.D, bson.D) {
	return bson.D{{Key: "thread", Value: thread}, {Key: "ns", Value: ns}}, bson.D{{Key: "id", Value: -1}}
}

// listQuery builds the filter and sort of List. The sort always starts with
// id descending and leaves out the keys pinned by equality, so that it is
// the order of one of the checkpoint indexes.
func listQuery(opts spec.ListOptions, filter spec.Metadata) (bson.D, bson.D) {
	q := bson.D{}
	sort := bson.D{{Key: "id", Value: -1}}
	if opts.ThreadID != "" {
		q = append(q, bson.E{Key: "thread", Value: opts.ThreadID})
	}
	if !opts.AllNamespaces {
		q = append(q, bson.E{Key: "ns", Value: opts.Namespace})
	}
	switch {
	case opts.ThreadID != "" && opts.AllNamespaces:
		sort = append(sort, bson.E{Key: "ns", Value: 1})
	case opts.ThreadID == "" && opts.AllNamespaces:
		sort = append(sort, bson.E{Key: "thread", Value: 1}, bson.E{Key: "ns", Value: 1})
	case opts.ThreadID == "":
		sort = append(sort, bson.E{Key: "thread", Value: 1})
	}
	idCond := bson.D{}
	if opts.CheckpointID != "" {
		idCond = append(idCond, bson.E{Key: "$eq", Value: opts.CheckpointID})
	}
	if opts.Before != "" {
		idCond = append(idCond, bson.E{Key: "$lt", Value: opts.Before})
	}
	if len(idCond) > 0 {
		q = append(q, bson.E{Key: "id", Value: idCond})
	}
	if len(filter) > 0 {
		toks := make(bson.A, 0, len(filter))
		for k, v := range filter {
			toks = append(toks, filterToken(k, v))
		}
		q = append(q, bson.E{Key: "mdx", Value: bson.D{{Key: "$all", Value: toks}}})
	}
	return q, sort
}

// List streams the checkpoints selected by opts, newest first, from one
// cursor. It reads a page of checkpoints at a time and loads the values
// and pending writes of the whole page with one query each. The metadata
// filter runs in the server on filter tokens; each candidate is then
// checked exactly with [spec.MatchFilter], and the limit counts what
// passes. Breaking out of the loop closes the cursor. See [spec.Saver.List].
func (s *Saver) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if err := spec.ValidateList(opts); err != nil {
			yield(nil, err)
			return
		}
		filter, err := spec.NormalizeFilter(opts.Filter)
		if err != nil {
			yield(nil, fmt.Errorf("mongo: list: filter: %w", err))
			return
		}
		op := fmt.Sprintf("list thread %q namespace %q", opts.ThreadID, opts.Namespace)
		if opts.AllNamespaces {
			op = fmt.Sprintf("list thread %q, all namespaces", opts.ThreadID)
		}
		q, sort := listQuery(opts, filter)
		pageSize := s.pageSize
		if opts.Limit > 0 {
			pageSize = min(pageSize, opts.Limit)
		}
		fo := mopts.Find().SetSort(sort).SetBatchSize(int32(pageSize))
		if opts.Limit > 0 && len(filter) == 0 {
			fo.SetLimit(int64(opts.Limit))
		}
		cur, err := s.checkpoints.Find(ctx, q, fo)
		if err != nil {
			yield(nil, wrapErr(ctx, op, err))
			return
		}
		defer func() {
			cctx, cancel := cleanupContext(ctx)
			defer cancel()
			_ = cur.Close(cctx)
		}()

		yielded := 0
		page := make([]checkpointDoc, 0, pageSize)
		for {
			page = page[:0]
			for len(page) < pageSize && cur.Next(ctx) {
				var d checkpointDoc
				if err := cur.Decode(&d); err != nil {
					yield(nil, wrapErr(ctx, op+": decode checkpoint", err))
					return
				}
				page = append(page, d)
			}
			if err := cur.Err(); err != nil {
				yield(nil, wrapErr(ctx, op, err))
				return
			}
			if len(page) == 0 {
				return
			}
			tuples, err := s.assemble(ctx, page)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, t := range tuples {
				if len(filter) > 0 && !spec.MatchFilter(t.tuple.Metadata, filter) {
					continue
				}
				if !yield(t.tuple, nil) {
					return
				}
				yielded++
				if opts.Limit > 0 && yielded == opts.Limit {
					return
				}
			}
			if len(page) < pageSize {
				return
			}
		}
	}
}

// decodeCheckpoint builds a tuple, without values and writes, from d.
func (s *Saver) decodeCheckpoint(ctx context.Context, d *checkpointDoc) (*spec.Tuple, error) {
	fail := func(what string, err error) (*spec.Tuple, error) {
		return nil, fmt.Errorf("mongo: decode %s of thread %q checkpoint %q: %w", what, d.Thread, d.ID, err)
	}
	cpBytes, err := s.load(ctx, d.CP)
	if err != nil {
		return nil, err
	}
	m, err := decodeRecord(cpBytes, s.serde)
	if err != nil {
		return fail("checkpoint", err)
	}
	cp := spec.Checkpoint{
		ID:              d.ID,
		ChannelValues:   map[string]any{},
		ChannelVersions: toVersions(m["versions"]),
		VersionsSeen:    map[string]spec.Versions{},
	}
	if v, ok := m["v"].(int64); ok {
		cp.V = int(v)
	}
	cp.TS, _ = m["ts"].(string)
	if seen, ok := m["seen"].(map[string]any); ok {
		for node, vs := range seen {
			cp.VersionsSeen[node] = toVersions(vs)
		}
	}
	if l, ok := m["updated"].([]any); ok {
		cp.UpdatedChannels = make([]string, 0, len(l))
		for _, ch := range l {
			s, _ := ch.(string)
			cp.UpdatedChannels = append(cp.UpdatedChannels, s)
		}
	}

	metaBytes, err := s.load(ctx, d.Meta)
	if err != nil {
		return nil, err
	}
	md, err := decodeRecord(metaBytes, s.serde)
	if err != nil {
		return fail("metadata", err)
	}
	t := &spec.Tuple{
		Config:        spec.Config{ThreadID: d.Thread, Namespace: d.NS, CheckpointID: d.ID},
		Checkpoint:    cp,
		Metadata:      spec.Metadata(md),
		PendingWrites: []spec.PendingWrite{},
	}
	if d.Parent != "" {
		t.Parent = &spec.Config{ThreadID: d.Thread, Namespace: d.NS, CheckpointID: d.Parent}
	}
	return t, nil
}

func toVersions(v any) spec.Versions {
	m, _ := v.(map[string]any)
	out := make(spec.Versions, len(m))
	for ch, ver := range m {
		s, _ := ver.(string)
		out[ch] = spec.Version(s)
	}
	return out
}
