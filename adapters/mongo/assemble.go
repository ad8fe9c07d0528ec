package mongo

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// maxReassemble bounds how often assemble re-reads a checkpoint that was
// replaced while it was being read.
const maxReassemble = 3

// assemble builds the tuples of the visible checkpoints among docs, in
// order, with a fixed number of queries whatever their number: one for
// the chunks of large records, one for channel values and one for pending
// writes (sent concurrently), one for the chunks of large values and
// writes.
//
// A checkpoint is visible when no fence hides it (see ops.go) and its
// record, its metadata and every value its own Put stored (Own) are there,
// chunks included: a Put writes its checkpoint document before those, so a Put in
// flight, or one that failed half-way, shows nothing. A checkpoint that
// reads a value it did not store itself and finds it missing is checked
// again: if it was deleted meanwhile (DeleteThread racing this read) it is
// left out, and if it was replaced it is read again, so a reader never
// sees a checkpoint torn by a concurrent delete or replace.
func (s *Saver) assemble(ctx context.Context, docs []checkpointDoc, fs fences) ([]*spec.Tuple, error) {
	out := make([]*spec.Tuple, len(docs))
	pending := make([]int, len(docs))
	for i := range docs {
		pending[i] = i
	}
	for round := 0; len(pending) > 0; round++ {
		suspects, err := s.assembleSome(ctx, docs, pending, out, fs)
		if err != nil {
			return nil, err
		}
		if len(suspects) == 0 {
			break
		}
		pending, err = s.recheck(ctx, docs, suspects, out, round == maxReassemble)
		if err != nil {
			return nil, err
		}
	}
	visible := make([]*spec.Tuple, 0, len(out))
	for _, t := range out {
		if t != nil {
			visible = append(visible, t)
		}
	}
	return visible, nil
}

// assembleSome builds the tuples of docs[idx...] into out (nil for those not
// visible) and returns the indexes of the suspects: visible checkpoints
// missing a value they did not store themselves.
func (s *Saver) assembleSome(ctx context.Context, docs []checkpointDoc, idx []int, out []*spec.Tuple, fs fences) ([]int, error) {
	var records []payload
	for _, i := range idx {
		records = append(records, docs[i].CP, docs[i].Meta)
	}
	recBlobs, err := s.loadBlobs(ctx, records)
	if err != nil {
		return nil, err
	}
	var valueKeys bson.A
	seen := map[string]bool{}
	want := func(thread, ns string, r valueRef) {
		k := valueKey(thread, ns, r.Channel, spec.Version(r.Version))
		if !seen[k] {
			seen[k] = true
			valueKeys = append(valueKeys, k)
		}
	}
	live := make([]int, 0, len(idx))
	for _, i := range idx {
		d := &docs[i]
		t, err := s.decodeCheckpoint(d, recBlobs)
		if err != nil {
			return nil, err
		}
		if t == nil || fs.hides(d, t.Metadata) {
			out[i] = nil
			continue
		}
		out[i] = t
		live = append(live, i)
		for ch, ver := range t.Checkpoint.ChannelVersions {
			want(d.Thread, d.NS, valueRef{ch, string(ver)})
		}
		for _, r := range d.Own {
			want(d.Thread, d.NS, r)
		}
	}
	if len(live) == 0 {
		return nil, nil
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
	batches, err := s.findBatches(ctx, docs, live)
	if verr := <-valsErr; verr != nil {
		return nil, verr
	}
	if err != nil {
		return nil, err
	}
	var payloads []payload
	byKey := make(map[string]*valueDoc, len(vals))
	for i := range vals {
		byKey[vals[i].Key] = &vals[i]
		if vals[i].Has {
			payloads = append(payloads, vals[i].V)
		}
	}
	for _, b := range batches {
		for _, w := range b.Writes {
			payloads = append(payloads, w.V)
		}
	}
	blobs, err := s.loadBlobs(ctx, payloads)
	if err != nil {
		return nil, err
	}
	// valueOf reports whether the value of r is complete, and its bytes
	// (nil with ok for a cleared channel).
	valueOf := func(d *checkpointDoc, r valueRef) (data []byte, has, ok bool) {
		v := byKey[valueKey(d.Thread, d.NS, r.Channel, spec.Version(r.Version))]
		if v == nil {
			return nil, false, false
		}
		if !v.Has {
			return nil, false, true
		}
		data, ok = payloadBytes(v.V, blobs)
		return data, true, ok
	}
	byCP := map[cpRef][]batchDoc{}
	for _, b := range batches {
		r := cpRef{b.Thread, b.NS, b.CID}
		byCP[r] = append(byCP[r], b)
	}
	var suspects []int
	for _, i := range live {
		d, t := &docs[i], out[i]
		whole := true
		for _, r := range d.Own {
			if _, _, ok := valueOf(d, r); !ok {
				whole = false
				break
			}
		}
		if !whole {
			out[i] = nil // its Put has not finished (or failed half-way)
			continue
		}
		for ch, ver := range t.Checkpoint.ChannelVersions {
			data, has, ok := valueOf(d, valueRef{ch, string(ver)})
			if !ok {
				if !slices.Contains(suspects, i) {
					suspects = append(suspects, i)
				}
				continue
			}
			if !has {
				continue
			}
			// Decode once per reference: tuples never share mutable values.
			val, err := s.serde.Decode(data)
			if err != nil {
				return nil, fmt.Errorf("mongo: decode value of channel %q in thread %q: %w", ch, d.Thread, err)
			}
			t.Checkpoint.ChannelValues[ch] = val
		}
		pws, err := s.pendingWrites(byCP[cpRef{d.Thread, d.NS, d.ID}], blobs)
		if err != nil {
			return nil, err
		}
		t.PendingWrites = pws
	}
	return suspects, nil
}

// recheck looks at the suspects' documents again: one deleted meanwhile is
// left out, one unchanged keeps its tuple (its missing values are simply
// absent), and one replaced is returned for another round, with its new
// document in docs. On the last round a replaced one keeps the tuple read.
func (s *Saver) recheck(ctx context.Context, docs []checkpointDoc, suspects []int, out []*spec.Tuple, last bool) ([]int, error) {
	keys := make(bson.A, len(suspects))
	for j, i := range suspects {
		keys[j] = docs[i].Key
	}
	cur, err := s.checkpoints.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}},
		mopts.Find().SetProjection(bson.D{{Key: "pin", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var pins []struct {
		Key string `bson:"_id"`
		Pin string `bson:"pin"`
	}
	if err := cur.All(ctx, &pins); err != nil {
		return nil, err
	}
	now := make(map[string]string, len(pins))
	for _, p := range pins {
		now[p.Key] = p.Pin
	}
	var again []int
	var refetch bson.A
	for _, i := range suspects {
		pin, exists := now[docs[i].Key]
		switch {
		case !exists:
			out[i] = nil
		case pin != docs[i].Pin && !last:
			again = append(again, i)
			refetch = append(refetch, docs[i].Key)
		}
	}
	if len(refetch) == 0 {
		return nil, nil
	}
	fresh, err := s.findDocs(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: refetch}}}})
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]checkpointDoc, len(fresh))
	for _, d := range fresh {
		byKey[d.Key] = d
	}
	var next []int
	for _, i := range again {
		d, ok := byKey[docs[i].Key]
		if !ok {
			out[i] = nil
			continue
		}
		docs[i], out[i] = d, nil
		next = append(next, i)
	}
	return next, nil
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

// findBatches reads the write batches of the checkpoints docs[idx...] with
// one query.
func (s *Saver) findBatches(ctx context.Context, docs []checkpointDoc, idx []int) ([]batchDoc, error) {
	seen := make(map[cpRef]bool, len(idx))
	or := make(bson.A, 0, len(idx))
	for _, i := range idx {
		r := cpRef{docs[i].Thread, docs[i].NS, docs[i].ID}
		if seen[r] {
			continue
		}
		seen[r] = true
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
		return nil, wrapErr(ctx, "read pending writes", err)
	}
	var out []batchDoc
	if err := cur.All(ctx, &out); err != nil {
		return nil, wrapErr(ctx, "read pending writes", err)
	}
	return out, nil
}
