package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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

// docInlineBudget bounds the inline payload bytes of one document that
// holds several payloads (a checkpoint's record and metadata, a PutWrites
// batch): beyond it, payloads go to chunks even when each is small, so no
// document nears MongoDB's 16 MiB limit.
var docInlineBudget = 8 << 20

// blobDoc is one chunk of a large payload. Pin changes whenever the chunk is
// written again; garbage collection deletes a chunk only if its pin is the
// one it saw unreferenced.
type blobDoc struct {
	ID     string `bson:"_id"`
	Thread string `bson:"thread"`
	Blob   string `bson:"blob"`
	N      int    `bson:"n"`
	Data   []byte `bson:"data"`
	Pin    string `bson:"pin"`
}

// chunker collects the chunks of the large payloads of one operation, so
// they can be written after the document announcing them.
type chunker struct {
	thread string
	pin    string
	chunks []blobDoc
	blobs  []string
}

// payload returns how data is stored for the document ownerKey, queuing its
// chunks when it is too large to inline, or when budget (the inline bytes
// left in a document holding several payloads; nil for none) is exhausted.
func (c *chunker) payload(ownerKey string, data []byte, budget *int) payload {
	if len(data) <= inlineMax && (budget == nil || len(data) <= *budget) {
		if budget != nil {
			*budget -= len(data)
		}
		return payload{Data: data}
	}
	id := blobID(ownerKey, data)
	c.blobs = append(c.blobs, id)
	n := 0
	for off := 0; off < len(data); off += chunkSize {
		end := min(off+chunkSize, len(data))
		c.chunks = append(c.chunks, blobDoc{ID: chunkKey(id, n), Thread: c.thread, Blob: id, N: n, Data: data[off:end], Pin: c.pin})
		n++
	}
	return payload{Blob: id, Chunks: n, Size: int64(len(data))}
}

// blobIDs returns the blobs queued so far.
func (c *chunker) blobIDs() []string { return slices.Clone(c.blobs) }

// flush writes the queued chunks.
func (c *chunker) flush(ctx context.Context, s *Saver) error {
	if err := insertChunks(ctx, s.blobs, c.chunks); err != nil {
		return wrapErr(ctx, fmt.Sprintf("write blob chunks for thread %q", c.thread), err)
	}
	return nil
}

// insertChunks inserts chunk documents. A chunk's _id is derived from its
// owner and its content, so a chunk that already exists holds exactly these
// bytes: its duplicate-key error is ignored and only its pin is renewed, so
// that a garbage collection that saw it unreferenced spares it. Plain
// inserts rather than upserts: on FerretDB's SQLite backend an upsert first
// scans the whole collection, which for large chunks costs seconds, while
// an insert does not.
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
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return err
	}
	dups := bson.A{}
	for _, we := range bwe.WriteErrors {
		if !mongo.IsDuplicateKeyError(we) || we.Index < 0 || we.Index >= len(chunks) {
			return err
		}
		dups = append(dups, keys[we.Index])
	}
	_, err = coll.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: dups}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "pin", Value: chunks[0].Pin}}}})
	return err
}

// loadBlobs reads the chunks of every large payload in ps with one query
// and returns each complete blob's bytes by blob ID. A blob with a chunk
// missing (still being written, or being deleted) is left out: callers
// treat its payload as absent.
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
	return joinChunks(want, docs), nil
}

// joinChunks reassembles the blobs in want from their chunk documents,
// leaving out any blob with a chunk missing.
func joinChunks(want map[string]payload, docs []blobDoc) map[string][]byte {
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
			delete(out, id)
		}
	}
	return out
}

// payloadBytes returns the bytes of p, taking large payloads from blobs,
// and whether they are all there.
func payloadBytes(p payload, blobs map[string][]byte) ([]byte, bool) {
	if p.Blob == "" {
		return p.Data, true
	}
	b, ok := blobs[p.Blob]
	return b, ok
}
