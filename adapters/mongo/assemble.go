package mongo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/checkpointkit/checkpointkit/spec"
)

// assembled is a tuple being built from its checkpoint document.
type assembled struct {
	doc   *checkpointDoc
	tuple *spec.Tuple
}

// assemble builds the tuples of docs with a fixed number of queries
// whatever the number of checkpoints: one for their channel values and one
// for their pending writes, sent concurrently, then one for the chunks of
// any large payload among those.
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
	// The values and the writes queries are independent: run them at the
	// same time, saving a round trip per tuple or page.
	var vals []valueDoc
	valsErr := make(chan error, 1)
	go func() {
		var err error
		if len(valueKeys) > 0 {
			vals, err = s.findValues(ctx, valueKeys)
		}
		valsErr <- err
	}()
	writes, byCP, err := s.findWrites(ctx, out)
	if verr := <-valsErr; verr != nil {
		return nil, verr
	}
	if err != nil {
		return nil, err
	}
	var payloads []payload
	for _, v := range vals {
		if v.Has {
			payloads = append(payloads, v.V)
		}
	}
	for _, w := range writes {
		payloads = append(payloads, w.V)
	}
	blobs, err := s.loadBlobs(ctx, payloads)
	if err != nil {
		return nil, err
	}

	for _, v := range vals {
		if !v.Has {
			continue
		}
		data := payloadBytes(v.V, blobs)
		for _, r := range refs[v.Key] {
			// Decode once per reference: tuples never share mutable values.
			val, err := s.serde.Decode(data)
			if err != nil {
				return nil, fmt.Errorf("mongo: decode value of channel %q in thread %q: %w", r.channel, v.Thread, err)
			}
			out[r.tuple].tuple.Checkpoint.ChannelValues[r.channel] = val
		}
	}
	for _, w := range writes {
		i, ok := byCP[cpRef{w.Thread, w.NS, w.CID}]
		if !ok {
			continue
		}
		v, err := s.serde.Decode(payloadBytes(w.V, blobs))
		if err != nil {
			return nil, fmt.Errorf("mongo: decode pending write to %q in thread %q: %w", w.Channel, w.Thread, err)
		}
		pw := spec.PendingWrite{TaskID: w.Task, Channel: w.Channel, Value: v}
		out[i].tuple.PendingWrites = append(out[i].tuple.PendingWrites, pw)
	}
	return out, nil
}

// payloadBytes returns the bytes of p, taking large payloads from blobs.
func payloadBytes(p payload, blobs map[string][]byte) []byte {
	if p.Blob == "" {
		return p.Data
	}
	return blobs[p.Blob]
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

// cpRef names a checkpoint.
type cpRef struct{ thread, ns, id string }

// findWrites reads the pending writes of every tuple in ts with one query.
// It returns them ordered by task ID (byte-wise), then index, with the
// position in ts of each checkpoint.
func (s *Saver) findWrites(ctx context.Context, ts []assembled) ([]writeDoc, map[cpRef]int, error) {
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
	if len(or) == 0 {
		return nil, byCP, nil
	}
	var q bson.D
	if len(or) == 1 {
		q = or[0].(bson.D)
	} else {
		q = bson.D{{Key: "$or", Value: or}}
	}
	cur, err := s.writes.Find(ctx, q)
	if err != nil {
		return nil, nil, wrapErr(ctx, "read pending writes", err)
	}
	var docs []writeDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, nil, wrapErr(ctx, "read pending writes", err)
	}
	// Sort here rather than in the server: the order must be byte-wise on
	// task IDs whatever collation or backend the server uses.
	slices.SortFunc(docs, func(a, b writeDoc) int {
		return cmp.Or(strings.Compare(a.Task, b.Task), cmp.Compare(a.Idx, b.Idx))
	})
	return docs, byCP, nil
}

// loadBlobs reads the chunks of every large payload in ps with one query
// and returns each blob's bytes by blob ID.
func (s *Saver) loadBlobs(ctx context.Context, ps []payload) (map[string][]byte, error) {
	want := map[string]payload{}
	var keys bson.A
	for _, p := range ps {
		if p.Blob == "" {
			continue
		}
		if _, dup := want[p.Blob]; dup {
			continue
		}
		want[p.Blob] = p
		for n := range p.Chunks {
			keys = append(keys, chunkKey(p.Blob, n))
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	cur, err := s.blobs.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}})
	if err != nil {
		return nil, wrapErr(ctx, "read blob chunks", err)
	}
	var docs []blobDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrapErr(ctx, "read blob chunks", err)
	}
	return joinChunks(want, docs)
}

// joinChunks reassembles the blobs in want from their chunk documents,
// checking that no chunk is missing.
func joinChunks(want map[string]payload, docs []blobDoc) (map[string][]byte, error) {
	slices.SortFunc(docs, func(a, b blobDoc) int { return cmp.Or(strings.Compare(a.Blob, b.Blob), a.N-b.N) })
	out := make(map[string][]byte, len(want))
	for _, d := range docs {
		p, ok := want[d.Blob]
		if !ok {
			continue
		}
		buf := out[d.Blob]
		if buf == nil {
			buf = make([]byte, 0, p.Size)
		}
		out[d.Blob] = append(buf, d.Data...)
	}
	for id, p := range want {
		if int64(len(out[id])) != p.Size {
			return nil, fmt.Errorf("mongo: blob %s: read %d bytes, want %d (a chunk is missing)", id, len(out[id]), p.Size)
		}
	}
	return out, nil
}
