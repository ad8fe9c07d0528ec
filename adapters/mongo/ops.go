package mongo

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Fences: maintenance that is all or nothing without transactions.
//
// DeleteThread, Prune, DeleteForRuns and CopyThread change many documents.
// Without a transaction a multi-document command can stop half-way (a
// connection cut; FerretDB even stops an update or delete when its client
// goes away), so each of these operations first inserts a fence, one
// document in the ops collection that states its whole effect. Readers
// apply every fence as if the operation were done (a deleted thread, the
// pruned checkpoints, the checkpoints of deleted runs are hidden; the
// checkpoints a copy is still writing stay hidden) and the operation then
// carries out its effect and removes its fence. A fence inserted is an
// operation done, as far as any reader can tell; an operation that fails
// before its fence is in stored nothing.
//
// A fence left by an operation that failed half-way is finished by the next
// operation that needs the thread clear: a Put, PutWrites or maintenance
// call on a thread a fence covers first carries out the fence's effect and
// removes it, then does its own work, so nothing it writes is hidden. A copy
// cannot be finished (its source may have changed since), so its fence
// keeps what it copied hidden; the next copy to the same thread replaces
// those documents.

// opDoc is a fence.
type opDoc struct {
	Key  string `bson:"_id"`
	Kind string `bson:"kind"`
	// Threads are the threads a delete removes and a copy writes to.
	Threads []string `bson:"threads,omitempty"`
	// Upto lists, for a prune, the checkpoints to keep: every older one
	// of the same thread and namespace goes.
	Upto []pruneUpto `bson:"upto,omitempty"`
	// Runs are the run IDs a DeleteForRuns removes.
	Runs []string `bson:"runs,omitempty"`
	// Spare lists (by _id) the checkpoints of those runs that stay: the
	// delta chains of surviving checkpoints need them (SPEC.md DELTA-13).
	Spare []string `bson:"spare,omitempty"`
}

// pruneUpto is the checkpoint a prune keeps in one thread and namespace.
type pruneUpto struct {
	Thread string `bson:"thread"`
	NS     string `bson:"ns"`
	ID     string `bson:"id"`
	// Keep lists the older checkpoints that stay all the same: the
	// ancestors the kept checkpoint's delta channels need back to their
	// seeds (SPEC.md DELTA-12).
	Keep []string `bson:"keep,omitempty"`
}

// Fence kinds.
const (
	fenceDelete = "delete"
	fencePrune  = "prune"
	fenceRuns   = "runs"
	fenceCopy   = "copy"
)

// fences is the set of fences in force, as read by one operation.
type fences []opDoc

// loadFences reads every fence. There are as many as maintenance calls in
// progress or interrupted, so usually none.
func (s *Saver) loadFences(ctx context.Context) (fences, error) {
	cur, err := s.ops.Find(ctx, bson.D{})
	if err != nil {
		return nil, err
	}
	var out fences
	if err := cur.All(ctx, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// hides reports whether the fences hide the checkpoint d with metadata md.
func (fs fences) hides(d *checkpointDoc, md spec.Metadata) bool {
	for _, f := range fs {
		switch f.Kind {
		case fenceDelete:
			if slices.Contains(f.Threads, d.Thread) {
				return true
			}
		case fencePrune:
			for _, u := range f.Upto {
				if u.Thread == d.Thread && u.NS == d.NS && d.ID < u.ID && !slices.Contains(u.Keep, d.ID) {
					return true
				}
			}
		case fenceRuns:
			if r, ok := md["run_id"].(string); ok && slices.Contains(f.Runs, r) && !slices.Contains(f.Spare, d.Key) {
				return true
			}
		case fenceCopy:
			if d.Hold == holdCopy+f.Key {
				return true
			}
		}
	}
	return false
}

// covering returns the fences to carry out before something is written to
// thread: deletes and prunes of it, and every deletion of runs (a write may
// concern a checkpoint of a deleted run whatever its own metadata says:
// one replaced by a Put without the run, or one a PutWrites writes to).
// Copies are never carried out (see above).
func (fs fences) covering(thread string) fences {
	var out fences
	for _, f := range fs {
		switch {
		case f.Kind == fenceDelete && slices.Contains(f.Threads, thread),
			f.Kind == fencePrune && slices.ContainsFunc(f.Upto, func(u pruneUpto) bool { return u.Thread == thread }),
			f.Kind == fenceRuns:
			out = append(out, f)
		}
	}
	return out
}

// settle carries out the fences covering thread and removes them, so that
// what the caller writes next is not hidden.
func (s *Saver) settle(ctx context.Context, thread string) error {
	fs, err := s.loadFences(ctx)
	if err != nil {
		return err
	}
	return s.carryOut(ctx, fs.covering(thread))
}

// carryOut performs the effect of each fence and removes it.
func (s *Saver) carryOut(ctx context.Context, fs fences) error {
	for _, f := range fs {
		var err error
		switch f.Kind {
		case fenceDelete:
			err = s.deleteSweep(ctx, f.Threads)
		case fencePrune:
			err = s.pruneSweep(ctx, f.Upto)
		case fenceRuns:
			err = s.runsSweep(ctx, f.Runs, f.Spare)
		}
		if err == nil {
			_, err = s.ops.DeleteOne(ctx, bson.D{{Key: "_id", Value: f.Key}})
		}
		if err != nil {
			return fmt.Errorf("finish interrupted %s %s: %w", f.Kind, f.Key, err)
		}
	}
	return nil
}

// fence inserts f, under a fresh key, and returns the key.
func (s *Saver) fence(ctx context.Context, f opDoc) (string, error) {
	f.Key = newPin()
	_, err := s.ops.InsertOne(ctx, f)
	return f.Key, err
}

// unfence removes the fence key once its operation is done.
func (s *Saver) unfence(ctx context.Context, key string) error {
	_, err := s.ops.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
	return err
}

// deleteSweep removes everything of threads. Checkpoints go first and
// again last, in case a Put racing the sweep wrote its document in
// between: no checkpoint outlives its values.
func (s *Saver) deleteSweep(ctx context.Context, threads []string) error {
	q := bson.D{{Key: "thread", Value: bson.D{{Key: "$in", Value: threads}}}}
	for i, c := range []*mongo.Collection{s.checkpoints, s.writes, s.values, s.blobs, s.checkpoints} {
		if _, err := c.DeleteMany(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", c.Name(), err)
		}
		if i == 0 {
			s.at(hookDeleteCheckpoints)
		}
	}
	return nil
}

// pruneSweep deletes, in each (thread, namespace) of upto, the checkpoints
// older than the one kept, except the ancestors its delta channels need
// (the fence's Keep list), and their write batches, then collects the
// values and blobs nothing references any more.
func (s *Saver) pruneSweep(ctx context.Context, upto []pruneUpto) error {
	var older, writesOlder bson.A
	var threads []string
	for _, u := range upto {
		lt := bson.D{{Key: "$lt", Value: u.ID}}
		if len(u.Keep) > 0 {
			lt = append(lt, bson.E{Key: "$nin", Value: u.Keep})
		}
		older = append(older, bson.D{{Key: "thread", Value: u.Thread}, {Key: "ns", Value: u.NS}, {Key: "id", Value: lt}})
		writesOlder = append(writesOlder, bson.D{{Key: "thread", Value: u.Thread}, {Key: "ns", Value: u.NS}, {Key: "cid", Value: lt}})
		if !slices.Contains(threads, u.Thread) {
			threads = append(threads, u.Thread)
		}
	}
	for start := 0; start < len(older); start += copyBatch {
		end := min(start+copyBatch, len(older))
		if _, err := s.checkpoints.DeleteMany(ctx, bson.D{{Key: "$or", Value: older[start:end]}}); err != nil {
			return err
		}
		if _, err := s.writes.DeleteMany(ctx, bson.D{{Key: "$or", Value: writesOlder[start:end]}}); err != nil {
			return err
		}
	}
	for _, thread := range threads {
		if err := s.gcValues(ctx, thread); err != nil {
			return fmt.Errorf("collect values of %q: %w", thread, err)
		}
		if err := s.gcBlobs(ctx, thread); err != nil {
			return fmt.Errorf("collect blobs of %q: %w", thread, err)
		}
	}
	return nil
}

// runsSweep deletes the checkpoints whose metadata run_id is one of runs,
// with their write batches, a page at a time: the server finds candidates
// by filter token and each is checked exactly before it goes. Blobs nothing
// references any more are collected; channel values stay (other
// checkpoints may read them). The checkpoints in spare (by _id) stay.
func (s *Saver) runsSweep(ctx context.Context, runs, spare []string) error {
	toks := make(bson.A, len(runs))
	for i, r := range runs {
		toks[i] = filterToken("run_id", r)
	}
	threads := map[string]bool{}
	after := ""
	for {
		q := bson.D{{Key: "mdx", Value: bson.D{{Key: "$in", Value: toks}}}}
		if after != "" {
			q = append(q, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}})
		}
		cur, err := s.checkpoints.Find(ctx, q, mopts.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(copyBatch).SetBatchSize(copyBatch+1).
			SetProjection(bson.D{{Key: "thread", Value: 1}, {Key: "ns", Value: 1}, {Key: "id", Value: 1}, {Key: "meta", Value: 1}, {Key: "pin", Value: 1}}))
		if err != nil {
			return err
		}
		var docs []checkpointDoc
		if err := cur.All(ctx, &docs); err != nil {
			return err
		}
		if len(docs) == 0 {
			break
		}
		after = docs[len(docs)-1].Key
		metas := make([]payload, len(docs))
		for i, d := range docs {
			metas[i] = d.Meta
		}
		blobs, err := s.loadBlobs(ctx, metas)
		if err != nil {
			return err
		}
		var del, writesOf bson.A
		for _, d := range docs {
			if data, ok := payloadBytes(d.Meta, blobs); ok {
				md, err := decodeRecord(data, s.serde)
				if err != nil {
					return err
				}
				if r, ok := md["run_id"].(string); !ok || !slices.Contains(runs, r) {
					continue // a token collision, not a match
				}
			} // else: a Put in flight; its document names the run by token
			if slices.Contains(spare, d.Key) {
				continue
			}
			del = append(del, bson.D{{Key: "_id", Value: d.Key}, {Key: "pin", Value: d.Pin}})
			writesOf = append(writesOf, bson.D{{Key: "thread", Value: d.Thread}, {Key: "ns", Value: d.NS}, {Key: "cid", Value: d.ID}})
			threads[d.Thread] = true
		}
		if len(del) > 0 {
			if _, err := s.checkpoints.DeleteMany(ctx, bson.D{{Key: "$or", Value: del}}); err != nil {
				return err
			}
			if _, err := s.writes.DeleteMany(ctx, bson.D{{Key: "$or", Value: writesOf}}); err != nil {
				return err
			}
		}
		if len(docs) < copyBatch {
			break
		}
	}
	for t := range threads {
		if err := s.gcBlobs(ctx, t); err != nil {
			return fmt.Errorf("collect blobs of thread %q: %w", t, err)
		}
	}
	return nil
}
