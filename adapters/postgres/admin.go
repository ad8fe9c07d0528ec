package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DeleteThread implements [spec.Saver]: one statement removes the thread's
// checkpoints, writes and values in every namespace.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := spec.ValidateThreadID("delete thread", threadID); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return wrapErr(ctx, "delete thread", threadID, s.execRetry(ctx, s.q.deleteThread, threadID))
}

// CopyThread implements [spec.ThreadCopier]: one statement copies every
// checkpoint, value and pending write of src to dst, replacing rows dst
// already has under the same keys.
func (s *Saver) CopyThread(ctx context.Context, src, dst string) error {
	if err := spec.ValidateThreadID("copy thread", src); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("copy thread", dst); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if src == dst {
		return nil
	}
	return wrapErr(ctx, "copy thread", src, s.execRetry(ctx, s.q.copyThread, src, dst))
}

// DeleteForRuns implements [spec.RunDeleter]: it removes every checkpoint
// whose metadata "run_id" equals one of runIDs (as a JSON string), with its
// pending writes, except those on the delta chain of a checkpoint of
// another run (SPEC.md DELTA-13). Stored values stay, since surviving
// checkpoints may reference them.
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	for _, id := range runIDs {
		if err := spec.ValidateIdentifier("run ID", id); err != nil {
			return fmt.Errorf("postgres: delete for runs: %w", err)
		}
	}
	if len(runIDs) == 0 {
		return ctx.Err()
	}
	keys := make([]string, len(runIDs))
	for i, id := range runIDs {
		b, err := filterJSON(id)
		if err != nil {
			return fmt.Errorf("postgres: delete for runs: %w", err)
		}
		keys[i] = string(b)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return wrapErr(ctx, "delete for runs", "", s.execRetry(ctx, s.q.deleteRuns, keys))
}

// Prune implements [spec.Pruner]. KeepLatest keeps, in every namespace of
// each listed thread, the checkpoint with the greatest ID and the ancestors
// its delta channels need back to their seeds (SPEC.md DELTA-12), with
// their pending writes and the values their channel versions reference;
// DeleteAll removes the threads. Either way it is one statement.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) error {
	if err := strategy.Validate(); err != nil {
		return err
	}
	for _, id := range threadIDs {
		if err := spec.ValidateThreadID("prune", id); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(threadIDs) == 0 {
		return nil
	}
	ids := slices.Clone(threadIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	sql := s.q.pruneLatest
	if strategy == spec.DeleteAll {
		sql = s.q.pruneAll
	}
	return wrapErr(ctx, fmt.Sprintf("prune (%s, threads %q)", strategy, ids), "", s.execRetry(ctx, sql, ids))
}
