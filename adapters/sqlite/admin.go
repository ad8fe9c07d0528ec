package sqlite

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DeleteThread removes every checkpoint, pending write and value of
// threadID in one transaction. See [spec.Saver.DeleteThread].
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := spec.ValidateThreadID("delete thread", threadID); err != nil {
		return err
	}
	return s.write(ctx, "delete thread", threadID, func(q querier) error {
		return deleteThread(ctx, q, threadID)
	})
}

func deleteThread(ctx context.Context, q querier, threadID string) error {
	for _, table := range []string{"checkpoints", "blobs", "writes"} {
		if _, err := q.ExecContext(ctx, `DELETE FROM `+table+` WHERE thread_id = ?`, threadID); err != nil {
			return err
		}
	}
	return nil
}

// CopyThread copies every checkpoint, pending write and value of src, in
// every namespace, to dst in one transaction. Rows of dst with the same keys
// are replaced. See [spec.ThreadCopier].
func (s *Saver) CopyThread(ctx context.Context, src, dst string) error {
	if err := spec.ValidateThreadID("copy thread", src); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("copy thread", dst); err != nil {
		return err
	}
	if src == dst {
		return wrapErr(ctx, "copy thread", src, ctx.Err())
	}
	return s.write(ctx, "copy thread", src, func(q querier) error {
		stmts := []string{
			`INSERT OR REPLACE INTO checkpoints
				(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
				SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
				FROM checkpoints WHERE thread_id = ?`,
			`INSERT OR REPLACE INTO blobs (thread_id, checkpoint_ns, channel, version, kind, value)
				SELECT ?, checkpoint_ns, channel, version, kind, value FROM blobs WHERE thread_id = ?`,
			`INSERT OR REPLACE INTO writes
				(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path)
				SELECT ?, checkpoint_ns, checkpoint_id, task_id, idx, channel, value, task_path
				FROM writes WHERE thread_id = ?`,
		}
		for _, st := range stmts {
			if _, err := q.ExecContext(ctx, st, dst, src); err != nil {
				return fmt.Errorf("to %q: %w", dst, err)
			}
		}
		return nil
	})
}

// runIDExpr must be written exactly as in the checkpoints_by_run_id index
// for SQLite to use it.
const runIDExpr = `json_extract(metadata, '$.run_id')`

// DeleteForRuns removes, in one transaction, every checkpoint whose metadata
// "run_id" is a string in runIDs, with its pending writes, in every thread
// and namespace, except those that the delta channels of a surviving
// checkpoint need back to their seeds (SPEC.md DELTA-13). Channel values are left for [Saver.Prune] and
// [Saver.DeleteThread] to reclaim: other checkpoints may share them. See
// [spec.RunDeleter].
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	for _, id := range runIDs {
		if err := spec.ValidateIdentifier("run ID", id); err != nil {
			return fmt.Errorf("sqlite: delete for runs: %w", err)
		}
	}
	if len(runIDs) == 0 {
		return wrapErr(ctx, "delete for runs", "", ctx.Err())
	}
	return s.write(ctx, "delete for runs", "", func(q querier) error {
		deltaKeep, err := runsKeep(ctx, q, runIDs)
		if err != nil {
			return err
		}
		keep, err := jsonList(deltaKeep)
		if err != nil {
			return err
		}
		for start := 0; start < len(runIDs); start += maxKeysPerQuery {
			chunk := runIDs[start:min(start+maxKeysPerQuery, len(runIDs))]
			args := make([]any, len(chunk), len(chunk)+1)
			for i, id := range chunk {
				args[i] = id
			}
			args = append(args, keep)
			in := placeholders(len(chunk), 1)
			// A JSON string comes out of json_extract as TEXT, a number as
			// INTEGER or REAL; with no affinity on either side only TEXT
			// equals the bound strings. Checkpoints a surviving delta
			// chain needs stay (runsKeep).
			spare := ` AND hex(thread_id) || ',' || hex(checkpoint_ns) || ',' || hex(checkpoint_id)
				NOT IN (SELECT value FROM json_each(?))`
			if _, err := q.ExecContext(ctx, `DELETE FROM writes
				WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (
					SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints
					WHERE `+runIDExpr+` IN (`+in+`)`+spare+`)`, args...); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx,
				`DELETE FROM checkpoints WHERE `+runIDExpr+` IN (`+in+`)`+spare, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// Prune applies strategy to each listed thread in one transaction.
// [spec.KeepLatest] keeps the latest checkpoint of every namespace, its
// pending writes and the values it references, plus the ancestors its delta
// channels need back to their seeds (SPEC.md DELTA-12), and removes every
// other checkpoint, write and value of the thread; [spec.DeleteAll] removes the
// thread. See [spec.Pruner].
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) error {
	if err := strategy.Validate(); err != nil {
		return err
	}
	for _, id := range threadIDs {
		if err := spec.ValidateThreadID("prune", id); err != nil {
			return err
		}
	}
	if len(threadIDs) == 0 {
		return wrapErr(ctx, "prune", "", ctx.Err())
	}
	return s.write(ctx, "prune", threadIDs[0], func(q querier) error {
		for _, id := range threadIDs {
			var err error
			if strategy == spec.DeleteAll {
				err = deleteThread(ctx, q, id)
			} else {
				err = s.keepLatest(ctx, q, id)
			}
			if err != nil {
				return fmt.Errorf("thread %q: %w", id, err)
			}
		}
		return nil
	})
}

// keepLatest prunes one thread to the latest checkpoint of each namespace
// and the ancestors its delta channels need.
func (s *Saver) keepLatest(ctx context.Context, q querier, threadID string) error {
	deltaKeep, err := pruneKeep(ctx, q, threadID)
	if err != nil {
		return err
	}
	keepIDs, err := jsonList(deltaKeep)
	if err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, `DELETE FROM checkpoints AS c
		WHERE c.thread_id = ? AND c.checkpoint_id < (
			SELECT max(l.checkpoint_id) FROM checkpoints l
			WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)
		AND hex(c.checkpoint_ns) || ',' || hex(c.checkpoint_id) NOT IN (SELECT value FROM json_each(?))`,
		threadID, keepIDs); err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, `DELETE FROM writes AS w
		WHERE w.thread_id = ? AND NOT EXISTS (
			SELECT 1 FROM checkpoints c
			WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
			AND c.checkpoint_id = w.checkpoint_id)`, threadID); err != nil {
		return err
	}
	// The values still needed are named inside the surviving checkpoints'
	// bodies, which only Go can read: collect their keys, then delete every
	// other value of the thread in one statement. Keys travel as a JSON
	// array of hex strings, which is exact for any bytes and compares with
	// SQLite's hex() of the stored text.
	rows, err := q.QueryContext(ctx,
		`SELECT checkpoint_ns, checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ?`, threadID)
	if err != nil {
		return err
	}
	keep := []string{}
	for rows.Next() {
		var ns, id string
		var body []byte
		if err := rows.Scan(&ns, &id, &body); err != nil {
			rows.Close()
			return err
		}
		cp, err := decodeBody(id, body)
		if err != nil {
			rows.Close()
			return fmt.Errorf("checkpoint %q: %w", id, err)
		}
		for ch, ver := range cp.ChannelVersions {
			keep = append(keep, hexKey(ns, ch, string(ver)))
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return err
	}
	keepJSON, err := json.Marshal(keep)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `DELETE FROM blobs WHERE thread_id = ?
		AND hex(checkpoint_ns) || ',' || hex(channel) || ',' || hex(version)
		NOT IN (SELECT value FROM json_each(?))`, threadID, string(keepJSON))
	return err
}

// hexKey encodes a value key as keepLatest's DELETE compares it: the
// upper-case hex of each part's bytes, joined by commas.
func hexKey(parts ...string) string {
	enc := make([]string, len(parts))
	for i, p := range parts {
		enc[i] = strings.ToUpper(hex.EncodeToString([]byte(p)))
	}
	return strings.Join(enc, ",")
}
