package mongo

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// copyBatch is how many documents CopyThread writes per BulkWrite, and how
// many checkpoints DeleteForRuns deletes per command.
const copyBatch = 256

// DeleteThread removes every checkpoint, write batch, value and blob of a
// thread. It first inserts a fence stating the deletion (see ops.go), so
// that from then on nothing of the thread is visible, whatever happens to
// the rest of the call; then it deletes, and removes the fence. See
// [spec.Saver.DeleteThread].
func (s *Saver) DeleteThread(ctx context.Context, threadID string) (err error) {
	defer classify(&err)
	return retryLost(ctx, func() error { return s.deleteThread(ctx, threadID) })
}

// deleteThread is one attempt of DeleteThread.
func (s *Saver) deleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, release := detach(ctx)
	defer release()
	if err := spec.ValidateThreadID("delete thread", threadID); err != nil {
		return err
	}
	return s.deleteThreads(ctx, "delete thread", []string{threadID})
}

// deleteThreads removes threads entirely, behind a fence; see
// DeleteThread.
func (s *Saver) deleteThreads(ctx context.Context, op string, threads []string) error {
	op = fmt.Sprintf("%s %q", op, threads)
	key, err := s.fence(ctx, opDoc{Kind: fenceDelete, Threads: threads})
	if err != nil {
		return wrapErr(ctx, op, err)
	}
	s.at(hookFenced)
	if err := s.deleteSweep(ctx, threads); err != nil {
		return wrapErr(ctx, op, err)
	}
	return wrapErr(ctx, op, s.unfence(ctx, key))
}

// CopyThread copies every checkpoint, write batch, value and blob of src,
// in every namespace, to dst under the same IDs. A fence keeps the copied
// checkpoints hidden until all are written; removing it shows them all at
// once, so a reader of dst sees all of the copy or none of it, also when the
// call fails half-way. Documents of dst with the same keys are replaced.
// See [spec.ThreadCopier].
func (s *Saver) CopyThread(ctx context.Context, src, dst string) (err error) {
	defer classify(&err)
	return retryLost(ctx, func() error { return s.copyThread(ctx, src, dst) })
}

// copyThread is one attempt of CopyThread.
func (s *Saver) copyThread(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, release := detach(ctx)
	defer release()
	if err := spec.ValidateThreadID("copy thread", src); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("copy thread", dst); err != nil {
		return err
	}
	if src == dst {
		return nil
	}
	op := fmt.Sprintf("copy thread %q to %q", src, dst)
	// Finish what hides part of src (it must not be copied) or would hide
	// what dst receives.
	fs, err := s.loadFences(ctx)
	if err == nil {
		todo := fs.covering(src)
		for _, f := range fs.covering(dst) {
			if !slices.ContainsFunc(todo, func(g opDoc) bool { return g.Key == f.Key }) {
				todo = append(todo, f)
			}
		}
		err = s.carryOut(ctx, todo)
	}
	if err != nil {
		return wrapErr(ctx, op, err)
	}
	pin, err := s.fence(ctx, opDoc{Kind: fenceCopy, Threads: []string{dst}})
	if err != nil {
		return wrapErr(ctx, op, err)
	}
	hold := holdCopy + pin
	moveBlob := func(p *payload) {
		if p.Blob != "" {
			p.Blob = copiedBlobID(dst, p.Blob)
		}
	}
	err = s.copyBlobs(ctx, src, dst, pin)
	if err == nil {
		err = copyColl(ctx, s.values, src, func(d *valueDoc) string {
			d.Thread, d.Pin = dst, pin
			d.Key = valueKey(dst, d.NS, d.Channel, spec.Version(d.Version))
			moveBlob(&d.V)
			return d.Key
		})
	}
	if err == nil {
		err = copyColl(ctx, s.writes, src, func(d *batchDoc) string {
			d.Thread, d.Pin = dst, pin
			d.Key = batchKey(dst, d.NS, d.CID, d.Task, d.Seq)
			for i := range d.Writes {
				moveBlob(&d.Writes[i].V)
			}
			return d.Key
		})
	}
	if err == nil {
		err = copyColl(ctx, s.checkpoints, src, func(d *checkpointDoc) string {
			d.Thread, d.Pin, d.Hold, d.Next = dst, pin, hold, nil
			d.Key = checkpointKey(dst, d.NS, d.ID)
			moveBlob(&d.CP)
			moveBlob(&d.Meta)
			for i, b := range d.Blobs {
				d.Blobs[i] = copiedBlobID(dst, b)
			}
			return d.Key
		})
	}
	if err == nil {
		s.at(hookCopyHeld)
		err = s.unfence(ctx, pin)
	}
	if err != nil {
		return wrapErr(ctx, op, err)
	}
	// Tidy up: the hold means nothing once the fence is gone.
	_, _ = s.checkpoints.UpdateMany(ctx, bson.D{{Key: "thread", Value: dst}, {Key: "hold", Value: hold}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "hold", Value: ""}}}})
	return nil
}

// copyColl streams the documents of thread src in coll, rewrites each with
// retarget (which returns the new _id) and upserts them in batches.
func copyColl[T any](ctx context.Context, coll *mongo.Collection, src string, retarget func(*T) string) error {
	cur, err := coll.Find(ctx, bson.D{{Key: "thread", Value: src}})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		_ = cur.Close(cctx)
	}()
	batch := make([]mongo.WriteModel, 0, copyBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := retryDuplicates(ctx, func() error {
			_, err := coll.BulkWrite(ctx, batch, mopts.BulkWrite().SetOrdered(false))
			return err
		})
		batch = batch[:0]
		return err
	}
	for cur.Next(ctx) {
		d := new(T)
		if err := cur.Decode(d); err != nil {
			return err
		}
		id := retarget(d)
		batch = append(batch, mongo.NewReplaceOneModel().
			SetFilter(bson.D{{Key: "_id", Value: id}}).SetReplacement(d).SetUpsert(true))
		if len(batch) == copyBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	return flush()
}

// copyBlobs copies the blob chunks of src to dst, one chunk at a time (they
// are large), renaming each blob with copiedBlobID.
func (s *Saver) copyBlobs(ctx context.Context, src, dst, pin string) error {
	cur, err := s.blobs.Find(ctx, bson.D{{Key: "thread", Value: src}})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		_ = cur.Close(cctx)
	}()
	for cur.Next(ctx) {
		var d blobDoc
		if err := cur.Decode(&d); err != nil {
			return err
		}
		d.Thread, d.Blob, d.Pin = dst, copiedBlobID(dst, d.Blob), pin
		d.ID = chunkKey(d.Blob, d.N)
		if err := insertChunks(ctx, s.blobs, []blobDoc{d}); err != nil {
			return err
		}
	}
	return cur.Err()
}

// DeleteForRuns removes every checkpoint, with its pending writes, whose
// metadata "run_id" is one of runIDs, in every thread and namespace. A
// fence naming the runs hides them all at once; they are then deleted a
// page at a time (found by filter token, each checked exactly), never all
// in memory, and the fence removed. Channel values stay (other checkpoints
// may read them); blobs nothing references any more are collected. See
// [spec.RunDeleter].
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) (err error) {
	defer classify(&err)
	return retryLost(ctx, func() error { return s.deleteForRuns(ctx, runIDs) })
}

// deleteForRuns is one attempt of DeleteForRuns.
func (s *Saver) deleteForRuns(ctx context.Context, runIDs []string) error {
	for _, id := range runIDs {
		if err := spec.ValidateIdentifier("run ID", id); err != nil {
			return fmt.Errorf("mongo: delete for runs: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, release := detach(ctx)
	defer release()
	if len(runIDs) == 0 {
		return nil
	}
	runs := slices.Compact(slices.Sorted(slices.Values(runIDs)))
	spare, err := s.runsSpare(ctx, runs)
	if err != nil {
		return wrapErr(ctx, "delete for runs", err)
	}
	key, err := s.fence(ctx, opDoc{Kind: fenceRuns, Runs: runs, Spare: spare})
	if err == nil {
		s.at(hookFenced)
		err = s.runsSweep(ctx, runs, spare)
	}
	if err == nil {
		err = s.unfence(ctx, key)
	}
	return wrapErr(ctx, "delete for runs", err)
}

// Prune applies strategy to the listed threads: [spec.KeepLatest] keeps
// the latest checkpoint of every namespace with its pending writes and the
// values it references; [spec.DeleteAll] removes the threads. A fence
// stating what goes makes the call all or nothing for readers. See
// [spec.Pruner].
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) (err error) {
	defer classify(&err)
	return retryLost(ctx, func() error { return s.prune(ctx, threadIDs, strategy) })
}

// prune is one attempt of Prune.
func (s *Saver) prune(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, release := detach(ctx)
	defer release()
	if err := strategy.Validate(); err != nil {
		return err
	}
	for _, id := range threadIDs {
		if err := spec.ValidateThreadID("prune", id); err != nil {
			return err
		}
	}
	if len(threadIDs) == 0 {
		return nil
	}
	if strategy == spec.DeleteAll {
		return s.deleteThreads(ctx, "prune", threadIDs)
	}
	return s.keepLatest(ctx, threadIDs)
}

// keepLatest prunes threads to the latest visible checkpoint of each of
// their namespaces, and the ancestors its delta channels need back to their
// seeds (deltaKeep). It deletes only checkpoints older than the one it
// keeps: a Put of a newer one racing the call is never touched, and the
// values and blobs of Puts in flight are spared by the garbage collection
// protocol (see gc.go).
func (s *Saver) keepLatest(ctx context.Context, threads []string) error {
	op := fmt.Sprintf("prune threads %q", threads)
	for _, thread := range threads {
		if err := s.settle(ctx, thread); err != nil {
			return wrapErr(ctx, op, err)
		}
	}
	var upto []pruneUpto
	for _, thread := range threads {
		namespaces, err := s.namespaces(ctx, thread)
		if err != nil {
			return wrapErr(ctx, op, err)
		}
		for _, ns := range namespaces {
			latest, err := s.latest(ctx, thread, ns)
			if err != nil {
				return wrapErr(ctx, fmt.Sprintf("%s: namespace %q", op, ns), err)
			}
			if latest != nil { // else nothing is visible yet: keep everything
				keep, err := s.deltaKeep(ctx, latest)
				if err != nil {
					return wrapErr(ctx, fmt.Sprintf("%s: namespace %q", op, ns), err)
				}
				upto = append(upto, pruneUpto{Thread: thread, NS: ns, ID: latest.Checkpoint.ID, Keep: keep})
			}
		}
	}
	s.at(hookPruneLatest)
	key, err := s.fence(ctx, opDoc{Kind: fencePrune, Upto: upto})
	if err == nil {
		s.at(hookFenced)
		err = s.pruneSweep(ctx, upto)
	}
	if err == nil {
		err = s.unfence(ctx, key)
	}
	return wrapErr(ctx, op, err)
}

// namespaces returns the namespaces of thread's checkpoints, one indexed
// query per namespace (a skip scan on the (thread, ns, id) index) rather
// than distinct, which FerretDB rejects under a deadline ("distinct:
// unknown field maxTimeMS") and which returns every value in one reply.
func (s *Saver) namespaces(ctx context.Context, thread string) ([]string, error) {
	var out []string
	q := bson.D{{Key: "thread", Value: thread}}
	for {
		var d struct {
			NS string `bson:"ns"`
		}
		err := s.checkpoints.FindOne(ctx, q, mopts.FindOne().SetSort(bson.D{{Key: "ns", Value: 1}}).
			SetProjection(bson.D{{Key: "ns", Value: 1}})).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d.NS)
		q = bson.D{{Key: "thread", Value: thread}, {Key: "ns", Value: bson.D{{Key: "$gt", Value: d.NS}}}}
	}
}
