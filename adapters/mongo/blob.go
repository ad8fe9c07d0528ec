package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"
)

// inlineMax is the largest encoded payload stored inside its document;
// larger payloads go to the blobs collection in chunks of chunkSize bytes.
// MongoDB rejects documents above 16 MiB, and a checkpoint document also
// carries its metadata, so the margin is wide. Tests lower both.
var (
	inlineMax = 4 << 20
	chunkSize = 4 << 20
)

// payload is an encoded value as stored in a document: inline in Data, or,
// when large, as a reference to Chunks chunks of the blob Blob holding Size
// bytes in all.
type payload struct {
	Data   []byte `bson:"d,omitempty"`
	Blob   string `bson:"blob,omitempty"`
	Chunks int    `bson:"chunks,omitempty"`
	Size   int64  `bson:"size,omitempty"`
}

// blobDoc is one chunk of a large payload.
type blobDoc struct {
	ID     string `bson:"_id"`
	Thread string `bson:"thread"`
	Blob   string `bson:"blob"`
	N      int    `bson:"n"`
	Data   []byte `bson:"data"`
}

// chunker collects the chunks of the large payloads of one operation, so
// they can be written before the documents that reference them.
type chunker struct {
	thread string
	chunks []blobDoc
}

// payload returns how data is stored for the document ownerKey, queuing its
// chunks when it is too large to inline.
func (c *chunker) payload(ownerKey string, data []byte) payload {
	if len(data) <= inlineMax {
		return payload{Data: data}
	}
	id := blobID(ownerKey, data)
	n := 0
	for off := 0; off < len(data); off += chunkSize {
		end := min(off+chunkSize, len(data))
		c.chunks = append(c.chunks, blobDoc{ID: chunkKey(id, n), Thread: c.thread, Blob: id, N: n, Data: data[off:end]})
		n++
	}
	return payload{Blob: id, Chunks: n, Size: int64(len(data))}
}

// flush writes the queued chunks.
func (c *chunker) flush(ctx context.Context, s *Saver) error {
	if err := insertChunks(ctx, s.blobs, c.chunks); err != nil {
		return wrapErr(ctx, fmt.Sprintf("write blob chunks for thread %q", c.thread), err)
	}
	return nil
}

// insertChunks inserts chunk documents. A chunk's _id is derived from its
// owner and its content, so a chunk that already exists holds exactly these
// bytes and its duplicate-key error is ignored. Plain inserts rather than
// upserts: on FerretDB's SQLite backend an upsert first scans the whole
// collection, which for large chunks costs seconds, while an insert does
// not.
func insertChunks(ctx context.Context, coll *mongo.Collection, chunks []blobDoc) error {
	if len(chunks) == 0 {
		return nil
	}
	docs := make([]any, len(chunks))
	keys := make([]string, len(chunks))
	for i, c := range chunks {
		docs[i], keys[i] = c, c.ID
	}
	if inTxn(ctx) {
		return upsertAll(ctx, coll, docs, keys)
	}
	_, err := coll.InsertMany(ctx, docs, mopts.InsertMany().SetOrdered(false))
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && bwe.WriteConcernError == nil && len(bwe.WriteErrors) > 0 {
		for _, we := range bwe.WriteErrors {
			if !mongo.IsDuplicateKeyError(we) {
				return err
			}
		}
		return nil
	}
	return err
}

// load returns the bytes of one payload.
func (s *Saver) load(ctx context.Context, p payload) ([]byte, error) {
	if p.Blob == "" {
		return p.Data, nil
	}
	blobs, err := s.loadBlobs(ctx, []payload{p})
	if err != nil {
		return nil, err
	}
	return blobs[p.Blob], nil
}

// gcBlobs removes the chunks of thread that no stored document references
// any more (left behind by Prune, DeleteForRuns or by replacing a large
// value with another).
func (s *Saver) gcBlobs(ctx context.Context, thread string) error {
	// Most threads never store a large payload: one cheap query spares
	// them the collection of live references.
	err := s.blobs.FindOne(ctx, bson.D{{Key: "thread", Value: thread}},
		mopts.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return wrapErr(ctx, fmt.Sprintf("look for blobs of thread %q", thread), err)
	}
	live := map[string]bool{}
	for _, q := range []struct {
		coll  *mongo.Collection
		field string
	}{{s.values, "v"}, {s.writes, "v"}, {s.checkpoints, "cp"}, {s.checkpoints, "meta"}} {
		cur, err := q.coll.Find(ctx,
			bson.D{{Key: "thread", Value: thread}, {Key: q.field + ".blob", Value: bson.D{{Key: "$exists", Value: true}}}},
			mopts.Find().SetProjection(bson.D{{Key: q.field + ".blob", Value: 1}}))
		if err != nil {
			return wrapErr(ctx, fmt.Sprintf("collect live blobs of thread %q", thread), err)
		}
		for cur.Next(ctx) {
			v := cur.Current.Lookup(q.field, "blob")
			if id, ok := v.StringValueOK(); ok {
				live[id] = true
			}
		}
		err = cur.Err()
		_ = cur.Close(ctx)
		if err != nil {
			return wrapErr(ctx, fmt.Sprintf("collect live blobs of thread %q", thread), err)
		}
	}
	ids := make(bson.A, 0, len(live))
	for id := range live {
		ids = append(ids, id)
	}
	_, err = s.blobs.DeleteMany(ctx, bson.D{{Key: "thread", Value: thread}, {Key: "blob", Value: bson.D{{Key: "$nin", Value: ids}}}})
	if err != nil {
		return wrapErr(ctx, fmt.Sprintf("delete unreferenced blobs of thread %q", thread), err)
	}
	return nil
}
