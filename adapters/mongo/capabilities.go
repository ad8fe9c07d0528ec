package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// copyBatch is how many documents CopyThread writes per BulkWrite, and how
// many checkpoints DeleteForRuns deletes per command.
const copyBatch = 256

// DeleteThread removes every checkpoint, write, value and blob of a thread.
// Checkpoints go first, so that no reader sees a checkpoint whose values are
// already gone. See [spec.Saver.DeleteThread].
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("delete thread", threadID); err != nil {
		return err
	}
	q := bson.D{{Key: "thread", Value: threadID}}
	for _, c := range []*mongo.Collection{s.checkpoints, s.writes, s.values, s.blobs} {
		if _, err := c.DeleteMany(ctx, q); err != nil {
			return wrapErr(ctx, fmt.Sprintf("delete thread %q: %s", threadID, c.Name()), err)
		}
	}
	return nil
}

// CopyThread copies every checkpoint, write, value and blob of src, in every
// namespace, to dst under the same IDs. Blobs and values are copied before
// the writes and checkpoints that reference them, checkpoints last, so a
// reader of dst never sees a checkpoint before its values. Documents of dst
// with the same keys are replaced. See [spec.ThreadCopier].
func (s *Saver) CopyThread(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
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
	moveBlob := func(p *payload) {
		if p.Blob != "" {
			p.Blob = copiedBlobID(dst, p.Blob)
		}
	}
	err := s.copyBlobs(ctx, src, dst)
	if err == nil {
		err = copyColl(ctx, s.values, src, func(d *valueDoc) string {
			d.Thread = dst
			d.Key = valueKey(dst, d.NS, d.Channel, spec.Version(d.Version))
			moveBlob(&d.V)
			return d.Key
		})
	}
	if err == nil {
		err = copyColl(ctx, s.writes, src, func(d *writeDoc) string {
			d.Thread = dst
			d.Key = writeKey(dst, d.NS, d.CID, d.Task, int(d.Idx))
			moveBlob(&d.V)
			return d.Key
		})
	}
	if err == nil {
		err = copyColl(ctx, s.checkpoints, src, func(d *checkpointDoc) string {
			d.Thread = dst
			d.Key = checkpointKey(dst, d.NS, d.ID)
			moveBlob(&d.CP)
			moveBlob(&d.Meta)
			return d.Key
		})
	}
	if err != nil {
		return wrapErr(ctx, op, err)
	}
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
func (s *Saver) copyBlobs(ctx context.Context, src, dst string) error {
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
		d.Thread, d.Blob = dst, copiedBlobID(dst, d.Blob)
		d.ID = chunkKey(d.Blob, d.N)
		if err := insertChunks(ctx, s.blobs, []blobDoc{d}); err != nil {
			return err
		}
	}
	return cur.Err()
}

// DeleteForRuns removes every checkpoint, with its pending writes, whose
// metadata "run_id" is one of runIDs, in every thread and namespace. The
// server selects candidates by filter token; each is checked exactly before
// it is deleted. See [spec.RunDeleter].
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	for _, id := range runIDs {
		if err := spec.ValidateIdentifier("run ID", id); err != nil {
			return fmt.Errorf("mongo: delete for runs: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(runIDs) == 0 {
		return nil
	}
	runs := make(map[string]bool, len(runIDs))
	toks := make(bson.A, 0, len(runIDs))
	for _, r := range runIDs {
		runs[r] = true
		toks = append(toks, filterToken("run_id", r))
	}
	cur, err := s.checkpoints.Find(ctx, bson.D{{Key: "mdx", Value: bson.D{{Key: "$in", Value: toks}}}})
	if err != nil {
		return wrapErr(ctx, "delete for runs", err)
	}
	var docs []checkpointDoc
	if err := cur.All(ctx, &docs); err != nil {
		return wrapErr(ctx, "delete for runs", err)
	}
	threads := map[string]bool{}
	var keys, writesOf bson.A
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		// Checkpoints first, then their writes: a reader never sees a
		// checkpoint that lost its writes.
		if _, err := s.checkpoints.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}); err != nil {
			return wrapErr(ctx, "delete for runs: checkpoints", err)
		}
		if _, err := s.writes.DeleteMany(ctx, bson.D{{Key: "$or", Value: writesOf}}); err != nil {
			return wrapErr(ctx, "delete for runs: pending writes", err)
		}
		keys, writesOf = keys[:0], writesOf[:0]
		return nil
	}
	for _, d := range docs {
		t, err := s.decodeCheckpoint(ctx, &d)
		if err != nil {
			return err
		}
		if r, ok := t.Metadata["run_id"].(string); !ok || !runs[r] {
			continue // a token collision, not a match
		}
		keys = append(keys, d.Key)
		writesOf = append(writesOf, bson.D{{Key: "thread", Value: d.Thread}, {Key: "ns", Value: d.NS}, {Key: "cid", Value: d.ID}})
		threads[d.Thread] = true
		if len(keys) == copyBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for t := range threads {
		if err := s.gcBlobs(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// Prune applies strategy to each listed thread: [spec.KeepLatest] keeps the
// latest checkpoint of every namespace with its pending writes and the
// values it references; [spec.DeleteAll] removes the thread. See
// [spec.Pruner].
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := strategy.Validate(); err != nil {
		return err
	}
	for _, id := range threadIDs {
		if err := spec.ValidateThreadID("prune", id); err != nil {
			return err
		}
	}
	for _, id := range threadIDs {
		var err error
		if strategy == spec.DeleteAll {
			err = s.DeleteThread(ctx, id)
		} else {
			err = s.keepLatest(ctx, id)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keepLatest prunes one thread to the latest checkpoint of each namespace.
func (s *Saver) keepLatest(ctx context.Context, thread string) error {
	op := fmt.Sprintf("prune thread %q", thread)
	nsVals := s.checkpoints.Distinct(ctx, "ns", bson.D{{Key: "thread", Value: thread}})
	if err := nsVals.Err(); err != nil {
		return wrapErr(ctx, op, err)
	}
	var namespaces []string
	if err := nsVals.Decode(&namespaces); err != nil {
		return wrapErr(ctx, op, err)
	}
	nsList := make(bson.A, 0, len(namespaces))
	for _, ns := range namespaces {
		nsList = append(nsList, ns)
		latest, err := s.GetTuple(ctx, spec.Config{ThreadID: thread, Namespace: ns})
		if err != nil {
			return fmt.Errorf("mongo: %s: namespace %q: %w", op, ns, err)
		}
		id := latest.Checkpoint.ID
		inNS := func(k string, v any) bson.D {
			return bson.D{{Key: "thread", Value: thread}, {Key: "ns", Value: ns}, {Key: k, Value: v}}
		}
		ne := bson.D{{Key: "$ne", Value: id}}
		if _, err := s.checkpoints.DeleteMany(ctx, inNS("id", ne)); err != nil {
			return wrapErr(ctx, op, err)
		}
		if _, err := s.writes.DeleteMany(ctx, inNS("cid", ne)); err != nil {
			return wrapErr(ctx, op, err)
		}
		keep := make(bson.A, 0, len(latest.Checkpoint.ChannelVersions))
		for ch, ver := range latest.Checkpoint.ChannelVersions {
			keep = append(keep, valueKey(thread, ns, ch, ver))
		}
		if _, err := s.values.DeleteMany(ctx, inNS("_id", bson.D{{Key: "$nin", Value: keep}})); err != nil {
			return wrapErr(ctx, op, err)
		}
	}
	// Namespaces with writes or values but no checkpoint keep nothing.
	orphans := bson.D{{Key: "thread", Value: thread}, {Key: "ns", Value: bson.D{{Key: "$nin", Value: nsList}}}}
	for _, c := range []*mongo.Collection{s.writes, s.values} {
		if _, err := c.DeleteMany(ctx, orphans); err != nil {
			return wrapErr(ctx, op, err)
		}
	}
	return s.gcBlobs(ctx, thread)
}
