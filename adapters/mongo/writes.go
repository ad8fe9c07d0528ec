package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/spec"
)

// batchDoc is a document of the writes collection: every write of one
// PutWrites call, so that a call is stored whole or not at all with a
// single-document insert. Seq numbers the calls of one (checkpoint, task)
// in the order they were stored; reads replay them in that order, regular
// writes first-wins and special writes last-wins.
type batchDoc struct {
	Key    string       `bson:"_id"`
	Thread string       `bson:"thread"`
	NS     string       `bson:"ns"`
	CID    string       `bson:"cid"`
	Task   string       `bson:"task"`
	Seq    int64        `bson:"seq"`
	Path   string       `bson:"path"`
	Writes []batchWrite `bson:"writes"`
	Pin    string       `bson:"pin"`
}

// batchWrite is one write of a batch.
type batchWrite struct {
	Idx     int64   `bson:"idx"`
	Channel string  `bson:"ch"`
	V       payload `bson:"v"`
}

func batchKey(thread, ns, cid, task string, seq int64) string {
	return docKey(thread, ns, cid, task, strconv.FormatInt(seq, 10))
}

// PutWrites stores the writes of task taskID against the checkpoint named
// by cfg as one document, numbered after the task's earlier batches: a
// batch is stored whole or not at all, and reads apply the batches in order
// (regular writes first-wins, special writes last-wins). The chunks of a
// large value are written after the document, which reads ignore until
// they are complete. An empty list is a no-op. See [spec.Saver.PutWrites].
func (s *Saver) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) (err error) {
	defer classify(&err)
	return retryLost(ctx, func() error { return s.putWrites(ctx, cfg, writes, taskID, taskPath) })
}

// putWrites is one attempt of PutWrites.
func (s *Saver) putWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, release := detach(ctx)
	defer release()
	if err := spec.ValidatePutWrites(cfg, writes, taskID, taskPath); err != nil {
		return err
	}
	thread, ns, cid := cfg.ThreadID, cfg.Namespace, cfg.CheckpointID
	pin := newPin()
	ch := &chunker{thread: thread, pin: pin}
	batch := batchDoc{Thread: thread, NS: ns, CID: cid, Task: taskID, Path: taskPath, Pin: pin}
	budget := docInlineBudget
	for i, w := range writes {
		data, err := s.serde.Encode(w.Value)
		if err != nil {
			return fmt.Errorf("mongo: put writes thread %q checkpoint %q: write %d to %q: %w", thread, cid, i, w.Channel, err)
		}
		idx := spec.WriteIndex(w.Channel, i)
		owner := writeKey(thread, ns, cid, taskID, idx)
		batch.Writes = append(batch.Writes, batchWrite{Idx: int64(idx), Channel: w.Channel, V: ch.payload(owner, data, &budget)})
	}
	if len(batch.Writes) == 0 {
		return nil
	}
	op := fmt.Sprintf("put writes thread %q checkpoint %q task %q", thread, cid, taskID)
	return s.unfenced(ctx, op, thread, func(ctx context.Context) error {
		return s.writeTxn(ctx, func(ctx context.Context) error {
			if err := s.insertBatch(ctx, &batch); err != nil {
				return err
			}
			s.at(hookWritesBatch)
			return ch.flush(ctx, s)
		})
	})
}

// maxBatchRetries bounds how often insertBatch takes a new number after
// losing one to a concurrent call for the same task.
const maxBatchRetries = 64

// insertBatch numbers b after the task's last batch and inserts it. Two
// concurrent calls may pick the same number; the unique _id lets one win
// and the other take the next number.
func (s *Saver) insertBatch(ctx context.Context, b *batchDoc) error {
	for attempt := 0; ; attempt++ {
		var last struct {
			Seq int64 `bson:"seq"`
		}
		err := s.writes.FindOne(ctx,
			bson.D{{Key: "thread", Value: b.Thread}, {Key: "ns", Value: b.NS}, {Key: "cid", Value: b.CID}, {Key: "task", Value: b.Task}},
			mopts.FindOne().SetSort(bson.D{{Key: "seq", Value: -1}}).SetProjection(bson.D{{Key: "seq", Value: 1}})).Decode(&last)
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return err
		}
		b.Seq = last.Seq + 1
		b.Key = batchKey(b.Thread, b.NS, b.CID, b.Task, b.Seq)
		_, err = s.writes.InsertOne(ctx, b)
		if err == nil || !mongo.IsDuplicateKeyError(err) || attempt == maxBatchRetries || ctx.Err() != nil || inTxn(ctx) {
			return err
		}
	}
}

// pendingWrites replays the batches of one checkpoint, in task and batch
// order, into its pending writes: ordered by task ID (byte-wise), then
// index. Batches whose chunks are not all there are skipped.
func (s *Saver) pendingWrites(batches []batchDoc, blobs map[string][]byte) ([]spec.PendingWrite, error) {
	slices.SortFunc(batches, func(a, b batchDoc) int {
		return cmp.Or(strings.Compare(a.Task, b.Task), cmp.Compare(a.Seq, b.Seq))
	})
	type slot struct {
		task string
		idx  int64
	}
	type entry struct {
		channel string
		data    []byte
	}
	got := map[slot]entry{}
	for _, b := range batches {
		datas := make([][]byte, len(b.Writes))
		complete := true
		for i, w := range b.Writes {
			datas[i], complete = payloadBytes(w.V, blobs)
			if !complete {
				break
			}
		}
		if !complete {
			continue // still being written: all or nothing
		}
		for i, w := range b.Writes {
			k := slot{b.Task, w.Idx}
			if _, exists := got[k]; exists && w.Idx >= 0 {
				continue // regular writes: the first wins
			}
			got[k] = entry{w.Channel, datas[i]}
		}
	}
	keys := make([]slot, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b slot) int { return cmp.Or(strings.Compare(a.task, b.task), cmp.Compare(a.idx, b.idx)) })
	out := make([]spec.PendingWrite, 0, len(keys))
	for _, k := range keys {
		e := got[k]
		v, err := s.serde.Decode(e.data)
		if err != nil {
			return nil, fmt.Errorf("mongo: decode pending write to %q of task %q: %w", e.channel, k.task, err)
		}
		out = append(out, spec.PendingWrite{TaskID: k.task, Channel: e.channel, Value: v})
	}
	return out, nil
}
