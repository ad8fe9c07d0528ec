package sqlite

import (
	"context"
	"fmt"
	"strings"

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

	if len(blobs) == 0 {
		// The checkpoint row alone: one statement, SQLite's implicit
		// transaction.
		err = s.writeRaw(ctx, "put", cfg.ThreadID, false, func(e execer) error {
			return e.execArgs(ctx, upsertCheckpointSQL,
				[]any{cfg.ThreadID, cfg.Namespace, cp.ID, parent, body, mdText})
		})
		if err != nil {
			return spec.Config{}, err
		}
		return spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}, nil
	}
	err = s.writeRaw(ctx, "put", cfg.ThreadID, true, func(e execer) error {
		for _, b := range blobs {
			if err := e.execArgs(ctx, upsertBlobSQL,
				[]any{cfg.ThreadID, cfg.Namespace, b.channel, b.version, b.kind, b.value}); err != nil {
				return fmt.Errorf("channel %q: %w", b.channel, err)
			}
		}
		return e.execArgs(ctx, upsertCheckpointSQL,
			[]any{cfg.ThreadID, cfg.Namespace, cp.ID, parent, body, mdText})
	})
	if err != nil {
		return spec.Config{}, err
	}
	return spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}, nil
}

// PutWrites stores the writes of task taskID against the checkpoint named by
// cfg in one transaction, as one statement unless there are more than
// maxWritesPerStatement: regular writes keep the first write of a key,
// special writes the last. See [spec.Saver.PutWrites].
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
	if len(writes) <= maxWritesPerStatement {
		// One statement is one implicit transaction: no BEGIN or COMMIT
		// to run.
		return s.writeRaw(ctx, "put writes", cfg.ThreadID, false, func(e execer) error {
			return e.execArgs(ctx, putWritesSQL(len(writes)),
				putWritesArgs(cfg, writes, values, taskID, taskPath))
		})
	}
	return s.writeRaw(ctx, "put writes", cfg.ThreadID, true, func(e execer) error {
		for start := 0; start < len(writes); start += maxWritesPerStatement {
			end := min(start+maxWritesPerStatement, len(writes))
			args := putWritesArgs(cfg, writes[start:end], values[start:end], taskID, taskPath)
			// Indexes count from the first write of the call.
			for i := range end - start {
				args[putWritesShared+3*i] = spec.WriteIndex(writes[start+i].Channel, start+i)
			}
			if err := e.execArgs(ctx, putWritesSQL(end-start), args); err != nil {
				return fmt.Errorf("writes %d to %d: %w", start, end-1, err)
			}
		}
		return nil
	})
}

// maxWritesPerStatement bounds the rows of one PutWrites statement (3 of
// its parameters each, far below SQLite's limit of 32,766).
const maxWritesPerStatement = 256

// putWritesShared is the number of parameters every row of a PutWrites
// statement shares: ?1 thread, ?2 namespace, ?3 checkpoint ID, ?4 task ID,
// ?5 task path. Row i has ?(6+3i) index, ?(7+3i) channel, ?(8+3i) value.
const putWritesShared = 5

// putWritesSQLs caches the statement texts for small counts of writes.
var putWritesSQLs [17]string

func init() {
	for n := 1; n < len(putWritesSQLs); n++ {
		putWritesSQLs[n] = buildPutWritesSQL(n)
	}
}

// putWritesSQL returns the statement storing n writes of one task.
func putWritesSQL(n int) string {
	if n < len(putWritesSQLs) {
		return putWritesSQLs[n]
	}
	return buildPutWritesSQL(n)
}

// buildPutWritesSQL builds the statement storing n writes of one task: one
// row each, regular writes (index >= 0) first-wins, as the conflict update
// is filtered out for them, special writes (index < 0) last-wins.
func buildPutWritesSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO writes
		(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
		VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		p := putWritesShared + 1 + 3*i
		fmt.Fprintf(&b, "(?1, ?2, ?3, ?4, ?%d, ?%d, ?%d, ?5)", p, p+1, p+2)
	}
	b.WriteString(`
		ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
			channel = excluded.channel,
			value = excluded.value,
			task_path = excluded.task_path
		WHERE excluded.idx < 0`)
	return b.String()
}

// putWritesArgs returns the parameters of putWritesSQL(len(writes)).
func putWritesArgs(cfg spec.Config, writes []spec.Write, values [][]byte, taskID, taskPath string) []any {
	args := make([]any, putWritesShared, putWritesShared+3*len(writes))
	args[0], args[1], args[2], args[3], args[4] = cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, taskID, taskPath
	for i, w := range writes {
		args = append(args, spec.WriteIndex(w.Channel, i), w.Channel, values[i])
	}
	return args
}
