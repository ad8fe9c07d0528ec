package mongo

import (
	"context"
	"fmt"
	"iter"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// GetTuple returns the checkpoint named by cfg, or the latest of its thread
// and namespace. A lookup by ID is an _id point lookup; the latest is the
// first visible entry of the (thread, ns, id) index read backwards. See
// [spec.Saver.GetTuple].
func (s *Saver) GetTuple(ctx context.Context, cfg spec.Config) (out *spec.Tuple, err error) {
	defer classify(&err)
	err = retryLost(ctx, func() error {
		out, err = s.getTuple(ctx, cfg)
		return err
	})
	return out, err
}

// getTuple is one attempt of GetTuple.
func (s *Saver) getTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := spec.ValidateGetTuple(cfg); err != nil {
		return nil, err
	}
	var t *spec.Tuple
	var err error
	if cfg.CheckpointID != "" {
		var docs []checkpointDoc
		var fs fences
		fs, err = s.withFences(ctx, func() error {
			var err error
			docs, err = s.findDocs(ctx, bson.D{{Key: "_id", Value: checkpointKey(cfg.ThreadID, cfg.Namespace, cfg.CheckpointID)}})
			return err
		})
		if err == nil {
			var ts []*spec.Tuple
			ts, err = s.assemble(ctx, docs, fs)
			if len(ts) > 0 {
				t = ts[0]
			}
		}
	} else {
		t, err = s.latest(ctx, cfg.ThreadID, cfg.Namespace)
	}
	if err != nil {
		return nil, wrapErr(ctx, fmt.Sprintf("get thread %q namespace %q", cfg.ThreadID, cfg.Namespace), err)
	}
	if t == nil {
		return nil, fmt.Errorf("mongo: get thread %q namespace %q checkpoint %q: %w",
			cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, spec.ErrNotFound)
	}
	return t, nil
}

// latest returns the latest visible checkpoint of a thread and namespace,
// or nil. It reads one document, and more only while the newest ones are
// not visible yet (a Put in flight).
func (s *Saver) latest(ctx context.Context, thread, ns string) (*spec.Tuple, error) {
	q, sort := latestQuery(thread, ns)
	p := &pager{s: s, q: q, sort: sort, size: 1}
	for {
		docs, fs, more, err := p.next(ctx)
		if err != nil {
			return nil, err
		}
		ts, err := s.assemble(ctx, docs, fs)
		if err != nil || len(ts) > 0 || !more {
			if len(ts) > 0 {
				return ts[0], err
			}
			return nil, err
		}
		p.size = min(4*p.size, 64)
	}
}

// findDocs reads the checkpoint documents matching q (a bounded query).
func (s *Saver) findDocs(ctx context.Context, q bson.D) ([]checkpointDoc, error) {
	cur, err := s.checkpoints.Find(ctx, q)
	if err != nil {
		return nil, err
	}
	var docs []checkpointDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	return docs, nil
}

// pager reads checkpoint documents in sort order, one bounded query per
// page, resuming after the last document it returned (keyset paging): no
// server cursor stays open between pages, so a slow consumer never meets
// the server's idle-cursor timeout.
type pager struct {
	s    *Saver
	q    bson.D
	sort bson.D // id descending, then thread and ns ascending where not pinned
	size int
	last *checkpointDoc
}

// next returns the next page, the fences in force, and whether more may
// follow.
func (p *pager) next(ctx context.Context) ([]checkpointDoc, fences, bool, error) {
	q := p.q
	if p.last != nil {
		q = bson.D{{Key: "$and", Value: bson.A{p.q, keysetAfter(p.sort, p.last)}}}
	}
	var docs []checkpointDoc
	fs, err := p.s.withFences(ctx, func() error {
		var err error
		docs, err = p.page(ctx, q)
		return err
	})
	if err != nil {
		return nil, nil, false, err
	}
	if len(docs) > 0 {
		p.last = &docs[len(docs)-1]
	}
	return docs, fs, len(docs) == p.size, nil
}

// page reads one page.
func (p *pager) page(ctx context.Context, q bson.D) ([]checkpointDoc, error) {
	// A batch one larger than the limit: the first reply holds the whole
	// page and the server closes the cursor (FerretDB keeps it open when
	// the batch is exactly full).
	cur, err := p.s.checkpoints.Find(ctx, q, mopts.Find().SetSort(p.sort).SetLimit(int64(p.size)).SetBatchSize(int32(min(p.size+1, math.MaxInt32))))
	if err != nil {
		return nil, err
	}
	docs := make([]checkpointDoc, 0, p.size)
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	return docs, nil
}

// withFences runs fn while it reads the fences in force.
func (s *Saver) withFences(ctx context.Context, fn func() error) (fences, error) {
	var fs fences
	done := make(chan error, 1)
	go func() {
		var err error
		fs, err = s.loadFences(ctx)
		done <- err
	}()
	err := fn()
	if ferr := <-done; err == nil {
		err = ferr
	}
	return fs, err
}

// keysetAfter returns the condition "after d in sort order" for a sort on
// id descending followed by thread and/or ns ascending.
func keysetAfter(sort bson.D, d *checkpointDoc) bson.D {
	val := func(field string) string {
		switch field {
		case "thread":
			return d.Thread
		case "ns":
			return d.NS
		}
		return d.ID
	}
	var or bson.A
	for i, e := range sort {
		branch := bson.D{}
		for _, prev := range sort[:i] {
			branch = append(branch, bson.E{Key: prev.Key, Value: val(prev.Key)})
		}
		op := "$gt"
		if e.Value == -1 {
			op = "$lt"
		}
		branch = append(branch, bson.E{Key: e.Key, Value: bson.D{{Key: op, Value: val(e.Key)}}})
		or = append(or, branch)
	}
	return bson.D{{Key: "$or", Value: or}}
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

// List streams the checkpoints selected by opts, newest first, a page at
// a time: each page is one bounded query resuming after the previous page
// (no server cursor stays open while the loop body runs), and the values
// and pending writes of the whole page are loaded with one query each. The
// metadata filter runs in the server on filter tokens; each candidate is
// then checked exactly with [spec.MatchFilter], and the limit counts what
// passes. See [spec.Saver.List].
func (s *Saver) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return func(yieldRaw func(*spec.Tuple, error) bool) {
		yield := func(t *spec.Tuple, err error) bool {
			classify(&err)
			return yieldRaw(t, err)
		}
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
		size := s.pageSize
		if opts.Limit > 0 && len(filter) == 0 {
			size = min(size, opts.Limit)
		}
		p := &pager{s: s, q: q, sort: sort, size: size}
		yielded := 0
		for {
			docs, fs, more, err := p.next(ctx)
			if err != nil {
				yield(nil, wrapErr(ctx, op, err))
				return
			}
			s.at(hookListPage)
			tuples, err := s.assemble(ctx, docs, fs)
			if err != nil {
				yield(nil, wrapErr(ctx, op, err))
				return
			}
			for _, t := range tuples {
				if len(filter) > 0 && !spec.MatchFilter(t.Metadata, filter) {
					continue
				}
				if !yield(t, nil) {
					return
				}
				yielded++
				if opts.Limit > 0 && yielded == opts.Limit {
					return
				}
			}
			if !more {
				return
			}
		}
	}
}

// decodeCheckpoint builds a tuple, without values and writes, from d, whose
// large payloads are in blobs. It returns nil when a payload's chunks are
// not all there: the checkpoint is still being written (or deleted).
func (s *Saver) decodeCheckpoint(d *checkpointDoc, blobs map[string][]byte) (*spec.Tuple, error) {
	fail := func(what string, err error) (*spec.Tuple, error) {
		return nil, fmt.Errorf("mongo: decode %s of thread %q checkpoint %q: %w", what, d.Thread, d.ID, err)
	}
	cpBytes, ok := payloadBytes(d.CP, blobs)
	if !ok {
		return nil, nil
	}
	metaBytes, ok := payloadBytes(d.Meta, blobs)
	if !ok {
		return nil, nil
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
