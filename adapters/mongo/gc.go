package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// gcBatch is how many candidates one garbage-collection round looks at.
const gcBatch = 512

// Garbage collection without transactions.
//
// A value or chunk may be deleted once no checkpoint needs it. Without a
// transaction, "no checkpoint needs it" can only be read at one moment and
// acted on at a later one, while Puts keep writing. The protocol that makes
// this safe:
//
//  1. read a page of candidates with their pins (a random token every write
//     of a document renews);
//  2. then read the live references of the thread: every value and blob
//     that a checkpoint document names (Refs, Own, Blobs, Next), and the
//     blobs that value documents and write batches point to;
//  3. delete each unreferenced candidate only if its pin is still the one
//     read in 1.
//
// A Put writes its checkpoint document, which names its values and blobs,
// before writing them. If that document exists at 2, its data is
// referenced. If not, the Put wrote its data after 2, hence after 1: a new
// document was no candidate, and a rewritten one carries a new pin, so 3
// does not delete it. Either way no Put in flight loses data, and a
// checkpoint never loses a value it references.

// liveRefs returns the values and blobs thread's documents reference.
func (s *Saver) liveRefs(ctx context.Context, thread string) (values, blobs map[string]bool, err error) {
	values, blobs = map[string]bool{}, map[string]bool{}
	proj := bson.D{}
	for _, f := range []string{"thread", "ns", "id", "refs", "own", "blobs", "next", "cp.blob", "meta.blob"} {
		proj = append(proj, bson.E{Key: f, Value: 1})
	}
	cur, err := s.checkpoints.Find(ctx, bson.D{{Key: "thread", Value: thread}}, mopts.Find().SetProjection(proj))
	if err != nil {
		return nil, nil, err
	}
	var legacy []checkpointDoc
	for cur.Next(ctx) {
		var d checkpointDoc
		if err := cur.Decode(&d); err != nil {
			_ = cur.Close(ctx)
			return nil, nil, err
		}
		refs := [][]valueRef{d.Refs, d.Own}
		names := [][]string{d.Blobs}
		if d.Next != nil {
			refs = append(refs, d.Next.Own)
			names = append(names, d.Next.Blobs)
		}
		for _, rs := range refs {
			for _, r := range rs {
				values[valueKey(d.Thread, d.NS, r.Channel, spec.Version(r.Version))] = true
			}
		}
		for _, ns := range names {
			for _, b := range ns {
				blobs[b] = true
			}
		}
		for _, p := range []payload{d.CP, d.Meta} {
			if p.Blob != "" {
				blobs[p.Blob] = true
			}
		}
		if d.Refs == nil {
			legacy = append(legacy, d) // written before Refs: decode its record
		}
	}
	err = cur.Err()
	_ = cur.Close(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(legacy) > 0 {
		keys := make(bson.A, len(legacy))
		for i, d := range legacy {
			keys[i] = d.Key
		}
		if legacy, err = s.findDocs(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}); err != nil {
			return nil, nil, err
		}
		var records []payload
		for _, d := range legacy {
			records = append(records, d.CP, d.Meta)
		}
		recBlobs, err := s.loadBlobs(ctx, records)
		if err != nil {
			return nil, nil, err
		}
		for i := range legacy {
			t, err := s.decodeCheckpoint(&legacy[i], recBlobs)
			if err != nil {
				return nil, nil, err
			}
			if t == nil {
				return nil, nil, fmt.Errorf("checkpoint %q of thread %q: record incomplete", legacy[i].ID, thread)
			}
			for ch, ver := range t.Checkpoint.ChannelVersions {
				values[valueKey(thread, legacy[i].NS, ch, ver)] = true
			}
		}
	}
	for _, q := range []struct {
		coll  *mongo.Collection
		field string
	}{{s.values, "v.blob"}, {s.writes, "writes.v.blob"}} {
		cur, err := q.coll.Find(ctx,
			bson.D{{Key: "thread", Value: thread}, {Key: q.field, Value: bson.D{{Key: "$exists", Value: true}}}},
			mopts.Find().SetProjection(bson.D{{Key: q.field, Value: 1}}))
		if err != nil {
			return nil, nil, err
		}
		var docs []struct {
			V      payload `bson:"v"`
			Writes []struct {
				V payload `bson:"v"`
			} `bson:"writes"`
		}
		if err := cur.All(ctx, &docs); err != nil {
			return nil, nil, err
		}
		for _, d := range docs {
			if d.V.Blob != "" {
				blobs[d.V.Blob] = true
			}
			for _, w := range d.Writes {
				if w.V.Blob != "" {
					blobs[w.V.Blob] = true
				}
			}
		}
	}
	return values, blobs, nil
}

// candidate is a document garbage collection may delete: its _id and the
// pin it had when read.
type candidate struct {
	Key  string `bson:"_id"`
	Pin  string `bson:"pin"`
	Blob string `bson:"blob"`
	N    int    `bson:"n"`
}

// pinned returns the filter matching c only while it still has its pin.
func (c candidate) pinned() bson.D {
	if c.Pin == "" {
		return bson.D{{Key: "_id", Value: c.Key}, {Key: "pin", Value: bson.D{{Key: "$exists", Value: false}}}}
	}
	return bson.D{{Key: "_id", Value: c.Key}, {Key: "pin", Value: c.Pin}}
}

// gcValues deletes the values of thread no checkpoint references, following
// the protocol above, a page of candidates at a time. Value _ids start with
// the thread's own key part, so a page is a range of the _id index.
func (s *Saver) gcValues(ctx context.Context, thread string) error {
	prefix := docKey(thread)
	after := bson.D{{Key: "$gte", Value: prefix}}
	for {
		cur, err := s.values.Find(ctx,
			bson.D{{Key: "_id", Value: append(after, bson.E{Key: "$lt", Value: prefix + ":"})}},
			mopts.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(gcBatch).SetBatchSize(gcBatch+1).SetProjection(bson.D{{Key: "pin", Value: 1}}))
		if err != nil {
			return err
		}
		var cands []candidate
		if err := cur.All(ctx, &cands); err != nil {
			return err
		}
		if len(cands) == 0 {
			return nil
		}
		s.at(hookGCCandidates)
		live, _, err := s.liveRefs(ctx, thread)
		if err != nil {
			return err
		}
		s.at(hookGCRefs)
		if err := deletePinned(ctx, s.values, cands, func(c candidate) bool { return !live[c.Key] }); err != nil {
			return err
		}
		if len(cands) < gcBatch {
			return nil
		}
		after = bson.D{{Key: "$gt", Value: cands[len(cands)-1].Key}}
	}
}

// gcBlobs deletes the chunks of thread that nothing references any more
// (left behind by Prune, DeleteForRuns, a failed Put or by replacing a
// large value with another), following the protocol above.
func (s *Saver) gcBlobs(ctx context.Context, thread string) error {
	// Most threads never store a large payload: one cheap query spares
	// them the collection of live references.
	err := s.blobs.FindOne(ctx, bson.D{{Key: "thread", Value: thread}},
		mopts.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return err
	}
	var last *candidate
	for {
		q := bson.D{{Key: "thread", Value: thread}}
		if last != nil {
			q = append(q, bson.E{Key: "$or", Value: bson.A{
				bson.D{{Key: "blob", Value: bson.D{{Key: "$gt", Value: last.Blob}}}},
				bson.D{{Key: "blob", Value: last.Blob}, {Key: "n", Value: bson.D{{Key: "$gt", Value: last.N}}}},
			}})
		}
		cur, err := s.blobs.Find(ctx, q, mopts.Find().SetSort(bson.D{{Key: "blob", Value: 1}, {Key: "n", Value: 1}}).
			SetLimit(gcBatch).SetBatchSize(gcBatch+1).SetProjection(bson.D{{Key: "pin", Value: 1}, {Key: "blob", Value: 1}, {Key: "n", Value: 1}}))
		if err != nil {
			return err
		}
		var cands []candidate
		if err := cur.All(ctx, &cands); err != nil {
			return err
		}
		if len(cands) == 0 {
			return nil
		}
		s.at(hookGCCandidates)
		_, live, err := s.liveRefs(ctx, thread)
		if err != nil {
			return err
		}
		s.at(hookGCRefs)
		if err := deletePinned(ctx, s.blobs, cands, func(c candidate) bool { return !live[c.Blob] }); err != nil {
			return err
		}
		if len(cands) < gcBatch {
			return nil
		}
		last = &cands[len(cands)-1]
	}
}

// deletePinned deletes the candidates dead selects, each only if it still
// has the pin it was read with.
func deletePinned(ctx context.Context, coll *mongo.Collection, cands []candidate, dead func(candidate) bool) error {
	var or bson.A
	for _, c := range cands {
		if dead(c) {
			or = append(or, c.pinned())
		}
	}
	if len(or) == 0 {
		return nil
	}
	_, err := coll.DeleteMany(ctx, bson.D{{Key: "$or", Value: or}})
	return err
}
