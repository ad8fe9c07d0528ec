package mongo

import (
	"context"
	"math"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The delta walk reads the parent links it follows a page at a time, never
// the whole thread and namespace: checkpoint IDs of a chain usually sort
// like the chain (a parent's ID below its child's), so the ancestors of a
// target are among the checkpoints whose IDs sort just below it. The first
// page holds the target and the checkpoints below it, as many as the
// counters in the target's metadata (spec.DeltaCountersKey: supersteps
// since each channel's last snapshot) say the chain needs, plus a margin
// for checkpoints of other branches in between. When the walk leaves the
// pages read before every channel met its seed (counters missing or
// wrong, many forks), a second, larger page follows, then the rest of the
// range in one find. A parent whose ID sorts above the target (IDs that do
// not follow the chain) brings one find of every checkpoint above it. So a
// call costs at most three finds below the target and one above, however
// long the chain, and in the common case one. Has flags are read for the
// ancestors the counters promise first, for the others only if the
// counters were wrong.

const (
	// deltaMargin is added to the counters' chain length: the target itself
	// and a few checkpoints of other branches between its ancestors.
	deltaMargin = 16
	// deltaFirstPage is the first page when the counters say nothing.
	deltaFirstPage = 32
)

// chainWalk is one discovery of a target's delta chain.
type chainWalk struct {
	s          *Saver
	thread, ns string
	targetID   string
	sk         map[string]*skelDoc // every checkpoint read, by ID
	low        string              // the lowest ID read so far
	pages      int                 // pages read below the target
	belowDone  bool                // every checkpoint with an ID up to targetID is in sk
	aboveDone  bool                // every checkpoint with an ID above targetID is in sk
	has        map[string]bool     // has flags read, by value _id
	asked      map[string]bool     // value _ids whose flag has been asked for
}

// skelProj is the projection of the walk's pages; withMeta adds the
// metadata, read for the target's counters.
func skelProj(withMeta bool) bson.D {
	p := bson.D{{Key: "id", Value: 1}, {Key: "parent", Value: 1}, {Key: "refs", Value: 1}, {Key: "thread", Value: 1}, {Key: "ns", Value: 1}}
	if withMeta {
		p = append(p, bson.E{Key: "meta", Value: 1})
	}
	return p
}

// deltaWalk finds the ancestors of checkpoint targetID of thread and ns
// that the history of want visits, nearest first (the seed's ancestor
// included), reading parent links a page at a time (see above). hint is
// the number of ancestors the target's counters promise, -1 when unknown:
// the target's metadata is then read with the first page. It returns the
// target's skeleton (nil when no such checkpoint exists), the chain and
// the fences read with the first page.
func (s *Saver) deltaWalk(ctx context.Context, thread, ns, targetID string, want []string, hint int) (*skelDoc, []*skelDoc, fences, error) {
	w := &chainWalk{s: s, thread: thread, ns: ns, targetID: targetID, sk: map[string]*skelDoc{},
		has: map[string]bool{}, asked: map[string]bool{}}
	limit := deltaFirstPage
	if hint >= 0 {
		limit = hint + deltaMargin
	}
	fs, err := s.withFences(ctx, func() error { return w.below(ctx, limit, hint < 0) })
	if err != nil {
		return nil, nil, nil, err
	}
	target := w.sk[targetID]
	if target == nil {
		return nil, nil, fs, nil
	}
	if hint < 0 {
		if hint = s.counterHint(target.Meta, want); hint < 0 {
			hint = deltaFirstPage - deltaMargin
		}
	}
	// reach bounds the ancestors whose has flags the first round reads to
	// those the counters promise; later rounds read them all.
	reach := hint + deltaMargin
	for {
		path, next := ancestorsUntil(w.sk, target)
		if len(path) > reach {
			path, next = path[:reach], path[reach].ID
		}
		if err := w.readHas(ctx, path, want); err != nil {
			return nil, nil, nil, err
		}
		chain, complete := cutChain(path, want, w.has)
		if complete || next == "" {
			return target, chain, fs, nil
		}
		if reach = math.MaxInt; w.sk[next] != nil {
			continue // the counters fell short: read the rest of the path
		}
		switch {
		case next < w.low && !w.belowDone:
			// Past the pages read: a larger page, then all the rest.
			limit = max(4*limit, 2*(hint-len(path))+deltaMargin)
			if w.pages >= 2 {
				limit = 0
			}
			err = w.below(ctx, limit, false)
		case next > targetID && !w.aboveDone:
			err = w.above(ctx)
		default:
			return target, chain, fs, nil // the parent does not exist
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}
}

// below reads the next page of checkpoints with IDs below those read (up
// to the target's for the first page), in descending ID order; limit 0
// reads all of them.
func (w *chainWalk) below(ctx context.Context, limit int, withMeta bool) error {
	idCond := bson.D{{Key: "$lte", Value: w.targetID}}
	if w.pages > 0 {
		idCond = bson.D{{Key: "$lt", Value: w.low}}
	}
	o := mopts.Find().SetSort(bson.D{{Key: "id", Value: -1}}).SetProjection(skelProj(withMeta)).SetBatchSize(deltaBatch)
	if limit > 0 {
		o.SetLimit(int64(limit)).SetBatchSize(int32(min(limit+1, deltaBatch)))
	}
	docs, err := w.find(ctx, bson.D{{Key: "id", Value: idCond}}, o)
	if err != nil {
		return err
	}
	w.pages++
	if len(docs) > 0 {
		w.low = docs[len(docs)-1].ID
	}
	if limit == 0 || len(docs) < limit {
		w.belowDone = true
	}
	return nil
}

// above reads every checkpoint with an ID above the target's.
func (w *chainWalk) above(ctx context.Context) error {
	_, err := w.find(ctx, bson.D{{Key: "id", Value: bson.D{{Key: "$gt", Value: w.targetID}}}},
		mopts.Find().SetProjection(skelProj(false)).SetBatchSize(deltaBatch))
	w.aboveDone = true
	return err
}

// find reads the skeletons of the checkpoints of the walk's thread and
// namespace matching idq into sk.
func (w *chainWalk) find(ctx context.Context, idq bson.D, o *mopts.FindOptionsBuilder) ([]skelDoc, error) {
	q := append(bson.D{{Key: "thread", Value: w.thread}, {Key: "ns", Value: w.ns}}, idq...)
	cur, err := w.s.checkpoints.Find(ctx, q, o)
	if err != nil {
		return nil, err
	}
	var docs []skelDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	for i := range docs {
		w.sk[docs[i].ID] = &docs[i]
	}
	return docs, nil
}

// readHas reads the has flags of the values of want that path references
// and that no earlier round asked for.
func (w *chainWalk) readHas(ctx context.Context, path []*skelDoc, want []string) error {
	var fresh []*skelDoc
	for _, d := range path {
		for _, r := range d.Refs {
			k := valueKey(d.Thread, d.NS, r.Channel, spec.Version(r.Version))
			if slices.Contains(want, r.Channel) && !w.asked[k] {
				fresh = append(fresh, d)
				break
			}
		}
	}
	has, err := w.s.hasValues(ctx, fresh, want)
	if err != nil {
		return err
	}
	for _, d := range fresh {
		for _, r := range d.Refs {
			w.asked[valueKey(d.Thread, d.NS, r.Channel, spec.Version(r.Version))] = true
		}
	}
	for k, v := range has {
		w.has[k] = v
	}
	return nil
}

// ancestorsUntil returns the ancestors of from in sk, nearest first, as
// far as the parent links lead, and the ID of the first parent missing
// from sk ("" when the chain ends or its links loop).
func ancestorsUntil(sk map[string]*skelDoc, from *skelDoc) ([]*skelDoc, string) {
	var path []*skelDoc
	seen := map[string]bool{from.ID: true}
	for cur := from.Parent; cur != ""; {
		if seen[cur] {
			return path, "" // the parent links loop: the walk ends, as spec.WalkDeltaHistory's
		}
		seen[cur] = true
		d := sk[cur]
		if d == nil {
			return path, cur
		}
		path = append(path, d)
		cur = d.Parent
	}
	return path, ""
}

// counterHint returns the largest counter that the metadata record meta
// holds under spec.DeltaCountersKey for a channel of want (LangGraph's
// engines store [updates, supersteps] since the last snapshot; the
// supersteps are the ancestors back to the seed), or -1 when it names none
// of them or cannot be read without another query.
func (s *Saver) counterHint(meta payload, want []string) int {
	data, ok := payloadBytes(meta, nil)
	if !ok || len(data) == 0 {
		return -1
	}
	md, err := decodeRecord(data, s.serde)
	if err != nil {
		return -1
	}
	return hintOf(spec.Metadata(md), want)
}

// knownHint is hintOf for a target whose metadata is at hand: when it
// names none of want, the first page is deltaFirstPage, with no metadata
// read.
func knownHint(md spec.Metadata, want []string) int {
	if h := hintOf(md, want); h >= 0 {
		return h
	}
	return deltaFirstPage - deltaMargin
}

// hintOf is counterHint over decoded metadata.
func hintOf(md spec.Metadata, want []string) int {
	counters, _ := md[spec.DeltaCountersKey].(map[string]any)
	hint := -1
	for _, ch := range want {
		c, ok := counters[ch]
		if !ok {
			continue
		}
		l, _ := c.([]any)
		if len(l) == 0 {
			l = []any{c}
		}
		for _, v := range l {
			var n int64
			switch x := v.(type) {
			case int64:
				n = x
			case int:
				n = int64(x)
			case float64:
				n = int64(x)
			default:
				continue
			}
			if n >= 0 && n < 1<<20 {
				hint = max(hint, int(n))
			}
		}
	}
	return hint
}
