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

	"github.com/checkpointkit/checkpointkit/spec"
)

// checkpointDoc is a document of the checkpoints collection.
type checkpointDoc struct {
	Key    string `bson:"_id"`
	Thread string `bson:"thread"`
	NS     string `bson:"ns"`
	ID     string `bson:"id"`
	// Parent is the parent checkpoint ID, "" for none.
	Parent string `bson:"parent"`
	// CP is the checkpoint without its channel values, encoded with
	// recordCodec.
	CP payload `bson:"cp"`
	// Meta is the metadata encoded with recordCodec: the exact, typed copy
	// reads use.
	Meta payload `bson:"meta"`
	// Metadata is the same metadata as a readable BSON sub-document (keys
	// escaped, see escapeKey), or null when the metadata is too large or
	// too deep to be stored this way too (see readableMetadataMax and
	// readableMetadataDepth). Reads and filters do not use it.
	Metadata any `bson:"metadata"`
	// MDX holds one filter token per top-level metadata entry; List
	// filters and DeleteForRuns match on it in the server.
	MDX [][]byte `bson:"mdx"`
	// Refs names every (channel, version) the checkpoint reads, so that
	// garbage collection finds live values without decoding CP.
	Refs []valueRef `bson:"refs"`
	// Own names the values this checkpoint's Put stores (its new
	// versions): the checkpoint is visible only once all of them are
	// (write-then-mark, see the package doc).
	Own []valueRef `bson:"own,omitempty"`
	// Blobs names the large-payload blobs of the checkpoint's own data:
	// CP, Meta and its own values. Garbage collection spares them.
	Blobs []string `bson:"blobs,omitempty"`
	// Next holds, while a Put replaces this document, the values and
	// blobs the replacement is writing, so that garbage collection spares
	// them before the replacement lands.
	Next *pending `bson:"next,omitempty"`
	// Hold, when set, hides the checkpoint from reads: DeleteForRuns
	// marks what it is about to delete ("runs:" and a pin), CopyThread what
	// it has not finished copying ("copy:" and a pin).
	Hold string `bson:"hold,omitempty"`
	// Pin changes with every write of the document; readers use it to tell
	// a checkpoint that stayed put from one that was replaced.
	Pin string `bson:"pin"`
}

// valueRef names the value of a channel at a version, in the thread and
// namespace of the document holding it.
type valueRef struct {
	Channel string `bson:"c"`
	Version string `bson:"v"`
}

// pending is what a Put replacing an existing checkpoint is writing.
type pending struct {
	Own   []valueRef `bson:"own"`
	Blobs []string   `bson:"blobs"`
}

// refsOf returns the value references of versions, sorted.
func refsOf(versions spec.Versions) []valueRef {
	out := make([]valueRef, 0, len(versions))
	for ch, v := range versions {
		out = append(out, valueRef{ch, string(v)})
	}
	slices.SortFunc(out, func(a, b valueRef) int {
		return cmp.Or(strings.Compare(a.Channel, b.Channel), strings.Compare(a.Version, b.Version))
	})
	return out
}

// readableMetadataMax is the largest encoded metadata that is also stored
// as a readable sub-document. Larger metadata is kept only in its encoded
// (and, if needed, chunked) form, so that no checkpoint document can exceed
// MongoDB's 16 MB limit; filters work either way.
const readableMetadataMax = 1 << 20

// readableMetadataDepth is the deepest metadata that is also stored as a
// readable sub-document: MongoDB rejects documents nested more than 100
// levels, and the checkpoint document adds its own levels.
const readableMetadataDepth = 64

// nestingDepth returns how deeply lists and maps nest in v.
func nestingDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, nestingDepth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, nestingDepth(e))
		}
		return d + 1
	}
	return 0
}

// valueDoc is a document of the values collection: the value of one channel
// at one version. Has is false when the channel had no value (it was
// cleared). Pin changes with every write; garbage collection deletes a
// value only if its pin is the one it saw unreferenced.
type valueDoc struct {
	Key     string  `bson:"_id"`
	Thread  string  `bson:"thread"`
	NS      string  `bson:"ns"`
	Channel string  `bson:"channel"`
	Version string  `bson:"version"`
	Has     bool    `bson:"has"`
	V       payload `bson:"v"`
	Pin     string  `bson:"pin"`
}

// recordCodec encodes the checkpoint record (cp) and the exact copy of
// metadata (meta). It is fixed rather than the saver's serde: [WithSerde]
// is for channel and write values, and the saver's own records must read
// back the same whatever serde a saver of the database was opened with.
var recordCodec spec.Serde = spec.MsgpackSerde{}

// decodeRecord decodes a cp or meta payload. Versions of this package
// before recordCodec wrote them with the saver's serde: when data is not a
// map in recordCodec's encoding, serde is tried as well, so a database
// written with a custom serde stays readable.
func decodeRecord(data []byte, serde spec.Serde) (map[string]any, error) {
	v, err := recordCodec.Decode(data)
	if m, ok := v.(map[string]any); ok && err == nil {
		return m, nil
	}
	if _, fixed := serde.(spec.MsgpackSerde); !fixed {
		if lv, lerr := serde.Decode(data); lerr == nil {
			if m, ok := lv.(map[string]any); ok {
				return m, nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("stored record is a %T, want a map", v)
}

// encodeCheckpoint encodes everything of cp but its channel values.
func (s *Saver) encodeCheckpoint(cp spec.Checkpoint) ([]byte, error) {
	versions := make(map[string]any, len(cp.ChannelVersions))
	for ch, v := range cp.ChannelVersions {
		versions[ch] = string(v)
	}
	seen := make(map[string]any, len(cp.VersionsSeen))
	for node, vs := range cp.VersionsSeen {
		m := make(map[string]any, len(vs))
		for ch, v := range vs {
			m[ch] = string(v)
		}
		seen[node] = m
	}
	var updated any
	if cp.UpdatedChannels != nil {
		l := make([]any, len(cp.UpdatedChannels))
		for i, ch := range cp.UpdatedChannels {
			l[i] = ch
		}
		updated = l
	}
	return recordCodec.Encode(map[string]any{
		"v": int64(cp.V), "ts": cp.TS, "versions": versions, "seen": seen, "updated": updated,
	})
}

// Put stores cp, its metadata and the values of the channels in
// newVersions. Without transactions it writes the checkpoint document
// first, naming the values and blobs it is about to store, then the blob
// chunks, then the values: readers show the checkpoint only once all of
// them are stored, and garbage collection spares what a checkpoint
// document names, so no reader sees a torn checkpoint and a failed or
// cancelled Put leaves nothing visible. A Put that replaces an existing
// checkpoint announces its values on the stored document, writes them, and
// then replaces the document, so the old version stays visible until the
// new one is whole. With [WithTransactions] everything is one transaction.
// See [spec.Saver.Put].
func (s *Saver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) (out spec.Config, err error) {
	defer classify(&err)
	err = retryLost(ctx, func() error {
		out, err = s.put(ctx, cfg, cp, md, newVersions)
		return err
	})
	return out, err
}

// put is one attempt of Put.
func (s *Saver) put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) (spec.Config, error) {
	if err := ctx.Err(); err != nil {
		return spec.Config{}, err
	}
	ctx, release := detach(ctx)
	defer release()
	if err := spec.ValidatePut(cfg, cp, newVersions); err != nil {
		return spec.Config{}, err
	}
	thread, ns := cfg.ThreadID, cfg.Namespace
	fail := func(what string, err error) (spec.Config, error) {
		return spec.Config{}, fmt.Errorf("mongo: put thread %q checkpoint %q: %s: %w", thread, cp.ID, what, err)
	}
	nmd, err := spec.NormalizeMetadata(md)
	if err != nil {
		return fail("metadata", err)
	}
	metaBytes, err := recordCodec.Encode(map[string]any(nmd))
	if err != nil {
		return fail("metadata", err)
	}
	cpBytes, err := s.encodeCheckpoint(cp)
	if err != nil {
		return fail("checkpoint", err)
	}

	// Encode everything before writing anything: a bad value stores nothing.
	pin := newPin()
	ch := &chunker{thread: thread, pin: pin}
	valueDocs := make([]any, 0, len(newVersions))
	valueKeys := make([]string, 0, len(newVersions))
	for channel, version := range newVersions {
		d := valueDoc{
			Key: valueKey(thread, ns, channel, version), Thread: thread, NS: ns,
			Channel: channel, Version: string(version), Pin: pin,
		}
		if v, ok := cp.ChannelValues[channel]; ok {
			data, err := s.serde.Encode(v)
			if err != nil {
				return fail(fmt.Sprintf("channel %q", channel), err)
			}
			d.Has = true
			d.V = ch.payload(d.Key, data, nil)
		}
		valueDocs = append(valueDocs, d)
		valueKeys = append(valueKeys, d.Key)
	}
	key := checkpointKey(thread, ns, cp.ID)
	budget := docInlineBudget
	doc := checkpointDoc{
		Key: key, Thread: thread, NS: ns, ID: cp.ID, Parent: cfg.CheckpointID,
		CP: ch.payload(key+"/cp", cpBytes, &budget), Meta: ch.payload(key+"/meta", metaBytes, &budget),
		MDX: metadataTokens(nmd), Refs: refsOf(cp.ChannelVersions), Own: refsOf(newVersions),
		Pin: pin,
	}
	doc.Blobs = ch.blobIDs()
	if len(metaBytes) <= readableMetadataMax && nestingDepth(map[string]any(nmd)) <= readableMetadataDepth {
		doc.Metadata = bsonMetadata(nmd)
	}
	op := fmt.Sprintf("put thread %q checkpoint %q", thread, cp.ID)
	write := func(ctx context.Context) error {
		if !s.txn {
			return s.putOrdered(ctx, op, &doc, ch, valueDocs, valueKeys)
		}
		return s.writeTxn(ctx, func(ctx context.Context) error {
			if err := ch.flush(ctx, s); err != nil {
				return err
			}
			if err := upsertAll(ctx, s.values, valueDocs, valueKeys); err != nil {
				return wrapErr(ctx, op+": write values", err)
			}
			return wrapErr(ctx, op, upsertAll(ctx, s.checkpoints, []any{doc}, []string{key}))
		})
	}
	if err := s.unfenced(ctx, op, thread, write); err != nil {
		return spec.Config{}, err
	}
	return spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: cp.ID}, nil
}

// unfenced runs write, reading the fences in force meanwhile (see ops.go).
// If one covers what write stored (a deletion or pruning of the thread, a
// deletion of runs, interrupted or in progress), it carries the fence out
// and runs write again, so that nothing the call stored stays hidden (or
// was swept). write is idempotent.
func (s *Saver) unfenced(ctx context.Context, op, thread string, write func(context.Context) error) error {
	fs, err := s.withFences(ctx, func() error { return write(ctx) })
	if err != nil {
		return wrapErr(ctx, op, err)
	}
	todo := fs.covering(thread)
	if len(todo) == 0 {
		return nil
	}
	if err := s.carryOut(ctx, todo); err != nil {
		return wrapErr(ctx, op, err)
	}
	return wrapErr(ctx, op, write(ctx))
}

// putOrdered is Put without a transaction: the checkpoint document first
// (or, for an existing one, an announcement of what is coming), then the
// blob chunks, then the values, then (for an existing one) the new
// document.
func (s *Saver) putOrdered(ctx context.Context, op string, doc *checkpointDoc, ch *chunker, valueDocs []any, valueKeys []string) error {
	_, err := s.checkpoints.InsertOne(ctx, doc)
	replacing := mongo.IsDuplicateKeyError(err)
	if replacing {
		// The checkpoint exists: announce the replacement on it (or, if
		// it was deleted in between, insert it after all).
		replacing, err = s.announce(ctx, doc)
	}
	if err != nil {
		return wrapErr(ctx, op, err)
	}
	s.at(hookPutCheckpoint)
	if err := ch.flush(ctx, s); err != nil {
		return err
	}
	if err := insertOrReplace(ctx, s.values, valueDocs, valueKeys); err != nil {
		return wrapErr(ctx, op+": write values", err)
	}
	s.at(hookPutValues)
	if replacing {
		err := retryDuplicates(ctx, func() error {
			_, err := s.checkpoints.ReplaceOne(ctx, bson.D{{Key: "_id", Value: doc.Key}}, doc, mopts.Replace().SetUpsert(true))
			return err
		})
		if err != nil {
			return wrapErr(ctx, op, err)
		}
	}
	return nil
}

// announce records on the stored checkpoint doc.Key the values and blobs a
// replacement is about to write (Next), so that garbage collection spares
// them; if the checkpoint is gone, it inserts doc instead. It reports
// whether the stored checkpoint is to be replaced at the end.
func (s *Saver) announce(ctx context.Context, doc *checkpointDoc) (bool, error) {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return false, err
	}
	var fields bson.D
	if err := bson.Unmarshal(raw, &fields); err != nil {
		return false, err
	}
	fields = slices.DeleteFunc(fields, func(e bson.E) bool { return e.Key == "_id" })
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: "next", Value: pending{Own: doc.Own, Blobs: doc.Blobs}}}},
		{Key: "$setOnInsert", Value: fields},
	}
	var res *mongo.UpdateResult
	err = retryDuplicates(ctx, func() error {
		var err error
		res, err = s.checkpoints.UpdateOne(ctx, bson.D{{Key: "_id", Value: doc.Key}}, update, mopts.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return false, err
	}
	return res.UpsertedCount == 0, nil
}

// insertOrReplace stores docs, whose _ids are keys: it inserts them all
// in one unordered InsertMany, then replaces, one upsert each, those whose
// key already existed. Most documents Put writes are new, and an insert is
// much cheaper than an upsert on FerretDB, where every upsert first scans
// the collection; on MongoDB both are index lookups.
func insertOrReplace(ctx context.Context, coll *mongo.Collection, docs []any, keys []string) error {
	if len(docs) == 0 {
		return nil
	}
	_, err := coll.InsertMany(ctx, docs, mopts.InsertMany().SetOrdered(false))
	if err == nil {
		return nil
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return err
	}
	for _, we := range bwe.WriteErrors {
		if !mongo.IsDuplicateKeyError(we) || we.Index < 0 || we.Index >= len(docs) {
			return err
		}
	}
	for _, we := range bwe.WriteErrors {
		d, key := docs[we.Index], keys[we.Index]
		err := retryDuplicates(ctx, func() error {
			_, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, d, mopts.Replace().SetUpsert(true))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
