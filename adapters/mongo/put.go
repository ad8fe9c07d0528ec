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
// cleared).
type valueDoc struct {
	Key     string  `bson:"_id"`
	Thread  string  `bson:"thread"`
	NS      string  `bson:"ns"`
	Channel string  `bson:"channel"`
	Version string  `bson:"version"`
	Has     bool    `bson:"has"`
	V       payload `bson:"v"`
}

// writeDoc is a document of the writes collection.
type writeDoc struct {
	Key     string  `bson:"_id"`
	Thread  string  `bson:"thread"`
	NS      string  `bson:"ns"`
	CID     string  `bson:"cid"`
	Task    string  `bson:"task"`
	Idx     int64   `bson:"idx"`
	Channel string  `bson:"channel"`
	Path    string  `bson:"path"`
	V       payload `bson:"v"`
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

// Put stores the values of the channels in newVersions, then the checkpoint
// document, so the checkpoint becomes visible only once every value it
// references is stored; no transaction is needed, and a retried Put
// rewrites the same documents. See [spec.Saver.Put].
func (s *Saver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) (spec.Config, error) {
	if err := ctx.Err(); err != nil {
		return spec.Config{}, err
	}
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
	ch := &chunker{thread: thread}
	valueDocs := make([]any, 0, len(newVersions))
	valueKeys := make([]string, 0, len(newVersions))
	for channel, version := range newVersions {
		d := valueDoc{
			Key: valueKey(thread, ns, channel, version), Thread: thread, NS: ns,
			Channel: channel, Version: string(version),
		}
		if v, ok := cp.ChannelValues[channel]; ok {
			data, err := s.serde.Encode(v)
			if err != nil {
				return fail(fmt.Sprintf("channel %q", channel), err)
			}
			d.Has = true
			d.V = ch.payload(d.Key, data)
		}
		valueDocs = append(valueDocs, d)
		valueKeys = append(valueKeys, d.Key)
	}
	key := checkpointKey(thread, ns, cp.ID)
	doc := checkpointDoc{
		Key: key, Thread: thread, NS: ns, ID: cp.ID, Parent: cfg.CheckpointID,
		CP: ch.payload(key+"/cp", cpBytes), Meta: ch.payload(key+"/meta", metaBytes),
		MDX: metadataTokens(nmd),
	}
	if len(metaBytes) <= readableMetadataMax && nestingDepth(map[string]any(nmd)) <= readableMetadataDepth {
		doc.Metadata = bsonMetadata(nmd)
	}

	err = s.writeTxn(ctx, func(ctx context.Context) error {
		if err := ch.flush(ctx, s); err != nil {
			return err
		}
		if err := insertOrReplace(ctx, s.values, valueDocs, valueKeys); err != nil {
			return wrapErr(ctx, fmt.Sprintf("put thread %q checkpoint %q: write values", thread, cp.ID), err)
		}
		if err := insertOrReplace(ctx, s.checkpoints, []any{doc}, []string{key}); err != nil {
			return wrapErr(ctx, fmt.Sprintf("put thread %q checkpoint %q", thread, cp.ID), err)
		}
		return nil
	})
	if err != nil {
		return spec.Config{}, err
	}
	return spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: cp.ID}, nil
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
	if inTxn(ctx) {
		return upsertAll(ctx, coll, docs, keys)
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

// PutWrites stores the writes of task taskID against the checkpoint named
// by cfg in one BulkWrite: regular writes are $setOnInsert upserts (the
// first write of a key wins), special writes $set upserts (the last wins),
// applied in order. An empty list is a no-op. See [spec.Saver.PutWrites].
func (s *Saver) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := spec.ValidatePutWrites(cfg, writes, taskID, taskPath); err != nil {
		return err
	}
	thread, ns, cid := cfg.ThreadID, cfg.Namespace, cfg.CheckpointID
	ch := &chunker{thread: thread}
	models := make([]mongo.WriteModel, 0, len(writes))
	for i, w := range writes {
		data, err := s.serde.Encode(w.Value)
		if err != nil {
			return fmt.Errorf("mongo: put writes thread %q checkpoint %q: write %d to %q: %w", thread, cid, i, w.Channel, err)
		}
		idx := spec.WriteIndex(w.Channel, i)
		key := writeKey(thread, ns, cid, taskID, idx)
		fields := bson.D{
			{Key: "thread", Value: thread}, {Key: "ns", Value: ns}, {Key: "cid", Value: cid},
			{Key: "task", Value: taskID}, {Key: "idx", Value: int64(idx)},
			{Key: "channel", Value: w.Channel}, {Key: "path", Value: taskPath},
			{Key: "v", Value: ch.payload(key, data)},
		}
		op := "$setOnInsert"
		if idx < 0 {
			op = "$set"
		}
		models = append(models, mongo.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: key}}).
			SetUpdate(bson.D{{Key: op, Value: fields}}).
			SetUpsert(true))
	}
	if len(models) == 0 {
		return nil
	}
	err := s.writeTxn(ctx, func(ctx context.Context) error {
		if err := ch.flush(ctx, s); err != nil {
			return err
		}
		return retryDuplicates(ctx, func() error {
			_, err := s.writes.BulkWrite(ctx, models, mopts.BulkWrite().SetOrdered(true))
			return err
		})
	})
	if err != nil {
		return wrapErr(ctx, fmt.Sprintf("put writes thread %q checkpoint %q task %q", thread, cid, taskID), err)
	}
	return nil
}
