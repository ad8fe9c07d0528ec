package sqlite

import (
	"context"
	"fmt"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Blob kinds stored in blobs.kind.
const (
	kindValue = "value"
	kindEmpty = "empty"
)

const (
	upsertCheckpointSQL = `INSERT INTO checkpoints
		(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
			parent_checkpoint_id = excluded.parent_checkpoint_id,
			checkpoint = excluded.checkpoint,
			metadata = excluded.metadata`
	upsertBlobSQL = `INSERT INTO blobs (thread_id, checkpoint_ns, channel, version, kind, value)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
			kind = excluded.kind,
			value = excluded.value`
	// Regular writes: the first write of a key wins.
	insertWriteSQL = `INSERT INTO writes
		(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING`
	// Special writes: the last write of a key wins.
	upsertWriteSQL = `INSERT INTO writes
		(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
			channel = excluded.channel,
			value = excluded.value,
			task_path = excluded.task_path`
)

// encodedBlob is a channel value ready to store.
type encodedBlob struct {
	channel, version, kind string
	value                  []byte
}

// Put stores cp, its metadata and the values of the channels named in
// newVersions in one transaction. See [spec.Saver.Put].
func (s *Saver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) (spec.Config, error) {
	if err := spec.ValidatePut(cfg, cp, newVersions); err != nil {
		return spec.Config{}, err
	}
	// Encode everything before the transaction: a bad value stores nothing
	// and the write lock is held only for the statements.
	nmd, err := spec.NormalizeMetadata(md)
	if err != nil {
		return spec.Config{}, fmt.Errorf("sqlite: put thread %q: metadata: %w", cfg.ThreadID, err)
	}
	mdText, err := encodeMetadata(nmd)
	if err != nil {
		return spec.Config{}, fmt.Errorf("sqlite: put thread %q: metadata: %w", cfg.ThreadID, err)
	}
	body, err := encodeBody(cp)
	if err != nil {
		return spec.Config{}, fmt.Errorf("sqlite: put thread %q: checkpoint: %w", cfg.ThreadID, err)
	}
	blobs := make([]encodedBlob, 0, len(newVersions))
	for ch, ver := range newVersions {
		b := encodedBlob{channel: ch, version: string(ver), kind: kindEmpty}
		if v, ok := cp.ChannelValues[ch]; ok {
			if b.value, err = s.serde.Encode(v); err != nil {
				return spec.Config{}, fmt.Errorf("sqlite: put thread %q: channel %q: %w", cfg.ThreadID, ch, err)
			}
			b.kind = kindValue
		}
		blobs = append(blobs, b)
	}
	var parent any // NULL when there is no parent
	if cfg.CheckpointID != "" {
		parent = cfg.CheckpointID
	}

	err = s.write(ctx, "put", cfg.ThreadID, func(q querier) error {
		for _, b := range blobs {
			if _, err := q.ExecContext(ctx, upsertBlobSQL,
				cfg.ThreadID, cfg.Namespace, b.channel, b.version, b.kind, b.value); err != nil {
				return fmt.Errorf("channel %q: %w", b.channel, err)
			}
		}
		_, err := q.ExecContext(ctx, upsertCheckpointSQL,
			cfg.ThreadID, cfg.Namespace, cp.ID, parent, body, mdText)
		return err
	})
	if err != nil {
		return spec.Config{}, err
	}
	return spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}, nil
}

// PutWrites stores the writes of task taskID against the checkpoint named by
// cfg in one transaction: regular writes with ON CONFLICT DO NOTHING (first
// wins), special writes with ON CONFLICT DO UPDATE (last wins). See
// [spec.Saver.PutWrites].
func (s *Saver) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if err := spec.ValidatePutWrites(cfg, writes, taskID, taskPath); err != nil {
		return err
	}
	values := make([][]byte, len(writes))
	for i, w := range writes {
		data, err := s.serde.Encode(w.Value)
		if err != nil {
			return fmt.Errorf("sqlite: put writes thread %q: write %d to %q: %w", cfg.ThreadID, i, w.Channel, err)
		}
		values[i] = data
	}
	if len(writes) == 0 {
		return wrapErr(ctx, "put writes", cfg.ThreadID, ctx.Err())
	}
	return s.write(ctx, "put writes", cfg.ThreadID, func(q querier) error {
		for i, w := range writes {
			idx := spec.WriteIndex(w.Channel, i)
			stmt := insertWriteSQL
			if idx < 0 {
				stmt = upsertWriteSQL
			}
			if _, err := q.ExecContext(ctx, stmt, cfg.ThreadID, cfg.Namespace, cfg.CheckpointID,
				taskID, idx, w.Channel, values[i], taskPath); err != nil {
				return fmt.Errorf("write %d to %q: %w", i, w.Channel, err)
			}
		}
		return nil
	})
}
