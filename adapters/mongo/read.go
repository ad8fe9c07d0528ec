package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// listPageSize is how many checkpoints List reads from its cursor before it
// loads their values and pending writes, one query each for the whole page.
const listPageSize = 32

// GetTuple returns the checkpoint named by cfg, or the latest of its thread
// and namespace. A lookup by ID is an _id point lookup; the latest is the
// first entry of the (thread, ns, id) index read backwards. See
// [spec.Saver.GetTuple].
func (s *Saver) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := spec.ValidateGet(cfg); err != nil {
		return nil, err
	}
	var res *mongo.SingleResult
	if cfg.CheckpointID != "" {
		res = s.checkpoints.FindOne(ctx, bson.D{{Key: "_id", Value: checkpointKey(cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)}})
	} else {
		q, sort := latestQuery(cfg.ThreadID, cfg.CheckpointNS)
		res = s.checkpoints.FindOne(ctx, q, options.FindOne().SetSort(sort))
	}
	var doc checkpointDoc
	if err := res.Decode(&doc); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, fmt.Errorf("mongo: get thread %q namespace %q checkpoint %q: %w",
				cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID, spec.ErrNotFound)
		}
		return nil, wrapErr(ctx, fmt.Sprintf("get thread %q namespace %q", cfg.ThreadID, cfg.CheckpointNS), err)
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
		q, sort := listQuery(opts, filter)
		pageSize := listPageSize
		if opts.Limit > 0 {
			pageSize = min(pageSize, opts.Limit)
		}
		fo := options.Find().SetSort(sort).SetBatchSize(int32(pageSize))
		if opts.Limit > 0 && len(filter) == 0 {
			fo.SetLimit(int64(opts.Limit))
		}
		cur, err := s.checkpoints.Find(ctx, q, fo)
		if err != nil {
			yield(nil, wrapErr(ctx, "list", err))
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
					yield(nil, wrapErr(ctx, "list: decode checkpoint", err))
					return
				}
				page = append(page, d)
			}
			if err := cur.Err(); err != nil {
				yield(nil, wrapErr(ctx, "list", err))
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

// assembled is a tuple being built from its checkpoint document.
type assembled struct {
	doc   *checkpointDoc
	tuple *spec.Tuple
}

// assemble builds the tuples of docs, loading their channel values with
// one query and their pending writes with another.
func (s *Saver) assemble(ctx context.Context, docs []checkpointDoc) ([]assembled, error) {
	out := make([]assembled, len(docs))
	var valueKeys bson.A
	type ref struct {
		tuple   int
		channel string
	}
	refs := map[string][]ref{}
	for i := range docs {
		d := &docs[i]
		t, err := s.decodeCheckpoint(ctx, d)
		if err != nil {
			return nil, err
		}
		out[i] = assembled{doc: d, tuple: t}
		for ch, ver := range t.Checkpoint.ChannelVersions {
			k := valueKey(d.Thread, d.NS, ch, ver)
			if _, seen := refs[k]; !seen {
				valueKeys = append(valueKeys, k)
			}
			refs[k] = append(refs[k], ref{i, ch})
		}
	}
	if len(valueKeys) > 0 {
		vals, err := s.findValues(ctx, valueKeys)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			if !v.Has {
				continue
			}
			data, err := s.load(ctx, v.V)
			if err != nil {
				return nil, err
			}
			for _, r := range refs[v.Key] {
				val, err := s.serde.Decode(data)
				if err != nil {
					return nil, fmt.Errorf("mongo: decode value of channel %q in thread %q: %w", r.channel, v.Thread, err)
				}
				out[r.tuple].tuple.Checkpoint.ChannelValues[r.channel] = val
			}
		}
	}
	if err := s.attachWrites(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// findValues reads the value documents with the given keys.
func (s *Saver) findValues(ctx context.Context, keys bson.A) ([]valueDoc, error) {
	var q bson.D
	if len(keys) == 1 {
		q = bson.D{{Key: "_id", Value: keys[0]}}
	} else {
		q = bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}
	}
	cur, err := s.values.Find(ctx, q)
	if err != nil {
		return nil, wrapErr(ctx, "read channel values", err)
	}
	var vals []valueDoc
	if err := cur.All(ctx, &vals); err != nil {
		return nil, wrapErr(ctx, "read channel values", err)
	}
	return vals, nil
}

// attachWrites loads the pending writes of every tuple in ts with one query
// and attaches them ordered by task ID (byte-wise), then index.
func (s *Saver) attachWrites(ctx context.Context, ts []assembled) error {
	type cpRef struct{ thread, ns, id string }
	byCP := make(map[cpRef]int, len(ts))
	or := make(bson.A, 0, len(ts))
	for i, t := range ts {
		r := cpRef{t.doc.Thread, t.doc.NS, t.doc.ID}
		if _, dup := byCP[r]; dup {
			continue
		}
		byCP[r] = i
		or = append(or, bson.D{{Key: "thread", Value: r.thread}, {Key: "ns", Value: r.ns}, {Key: "cid", Value: r.id}})
	}
	var q bson.D
	if len(or) == 1 {
		q = or[0].(bson.D)
	} else {
		q = bson.D{{Key: "$or", Value: or}}
	}
	cur, err := s.writes.Find(ctx, q)
	if err != nil {
		return wrapErr(ctx, "read pending writes", err)
	}
	var docs []writeDoc
	if err := cur.All(ctx, &docs); err != nil {
		return wrapErr(ctx, "read pending writes", err)
	}
	// Sort here rather than in the server: the order must be byte-wise on
	// task IDs whatever collation or backend the server uses.
	slices.SortFunc(docs, func(a, b writeDoc) int {
		return cmp.Or(strings.Compare(a.Task, b.Task), cmp.Compare(a.Idx, b.Idx))
	})
	for _, w := range docs {
		i, ok := byCP[cpRef{w.Thread, w.NS, w.CID}]
		if !ok {
			continue
		}
		data, err := s.load(ctx, w.V)
		if err != nil {
			return err
		}
		v, err := s.serde.Decode(data)
		if err != nil {
			return fmt.Errorf("mongo: decode pending write to %q in thread %q: %w", w.Channel, w.Thread, err)
		}
		pw := spec.PendingWrite{TaskID: w.Task, Channel: w.Channel, Value: v}
		ts[i].tuple.PendingWrites = append(ts[i].tuple.PendingWrites, pw)
	}
	// A checkpoint listed twice (not possible today) shares the first's writes.
	for i, t := range ts {
		j := byCP[cpRef{t.doc.Thread, t.doc.NS, t.doc.ID}]
		if j != i {
			ts[i].tuple.PendingWrites = slices.Clone(ts[j].tuple.PendingWrites)
		}
	}
	return nil
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
	raw, err := s.serde.Decode(cpBytes)
	if err != nil {
		return fail("checkpoint", err)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return fail("checkpoint", fmt.Errorf("stored checkpoint is a %T", raw))
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
	rawMD, err := s.serde.Decode(metaBytes)
	if err != nil {
		return fail("metadata", err)
	}
	md, ok := rawMD.(map[string]any)
	if !ok {
		return fail("metadata", fmt.Errorf("stored metadata is a %T", rawMD))
	}
	t := &spec.Tuple{
		Config:        spec.Config{ThreadID: d.Thread, CheckpointNS: d.NS, CheckpointID: d.ID},
		Checkpoint:    cp,
		Metadata:      spec.Metadata(md),
		PendingWrites: []spec.PendingWrite{},
	}
	if d.Parent != "" {
		t.Parent = &spec.Config{ThreadID: d.Thread, CheckpointNS: d.NS, CheckpointID: d.Parent}
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
