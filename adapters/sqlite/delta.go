package sqlite

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/checkpointkit/checkpointkit/adapters/internal/deltaprep"
	"github.com/checkpointkit/checkpointkit/spec"
)

var _ spec.DeltaHistoryReader = (*Saver)(nil)

// The delta history of a checkpoint costs four statements inside one read
// transaction, however long its ancestor chain:
//
//  1. deltaValueKeysSQL: the (channel, version) keys of the requested
//     channels that hold a value (kind 'value'): keys only, no values. A
//     delta channel stores a value only at its snapshots, so there are few.
//  2. deltaChainSQL or deltaChainLatestSQL: the target, then its ancestors
//     nearest first, one primary-key probe each by parent ID. SQLite yields
//     the rows of a recursive CTE as it computes them, so the walk stops,
//     by closing the statement, at the ancestor where the last channel finds
//     its seed (a value key of step 1 at the ancestor's channel version),
//     or at a checkpoint already visited.
//  3. deltaWritesSQL: the writes of the ancestors walked to the channels.
//  4. deltaSeedsSQL: the seed values, one primary-key probe each.
//
// Lists travel as one JSON array parameter each (json_each), so statement
// texts do not depend on the chain's length.
const (
	deltaValueKeysSQL = `SELECT channel, version FROM blobs
		WHERE thread_id = +?1 AND checkpoint_ns = +?2 AND kind = 'value'
		AND channel IN (SELECT value FROM json_each(?3))`
	deltaChainStep = `
		UNION ALL
		SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint
		FROM chain a CROSS JOIN checkpoints c
		WHERE c.thread_id = +?1 AND c.checkpoint_ns = +?2 AND c.checkpoint_id = a.parent)
		SELECT id, body FROM chain`
	deltaChainSQL = `WITH RECURSIVE chain(id, parent, body) AS (
		SELECT c.checkpoint_id, c.parent_checkpoint_id, NULL FROM checkpoints c
		WHERE c.thread_id = +?1 AND c.checkpoint_ns = +?2 AND c.checkpoint_id = +?3` + deltaChainStep
	deltaChainLatestSQL = `WITH RECURSIVE chain(id, parent, body) AS (
		SELECT c.checkpoint_id, c.parent_checkpoint_id, NULL FROM checkpoints c
		WHERE c.thread_id = +?1 AND c.checkpoint_ns = +?2 AND c.checkpoint_id = (
			SELECT max(l.checkpoint_id) FROM checkpoints l
			WHERE l.thread_id = +?1 AND l.checkpoint_ns = +?2)` + deltaChainStep
	deltaWritesSQL = `SELECT checkpoint_id, channel, task_path, task_id, idx, value FROM writes
		WHERE thread_id = +?1 AND checkpoint_ns = +?2
		AND checkpoint_id IN (SELECT value FROM json_each(?3))
		AND channel IN (SELECT value FROM json_each(?4))`
	deltaSeedsSQL = `SELECT channel, value FROM blobs
		WHERE thread_id = +?1 AND checkpoint_ns = +?2
		AND (channel, version) IN (
			SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?3))`
)

// DeltaHistory returns the history of each channel as seen from the
// checkpoint cfg names (the latest of its thread and namespace when
// cfg.CheckpointID is empty): the stored value of the nearest ancestor that
// holds one, by parent links, and the channel's writes stored against the
// ancestors up to and including that one, oldest ancestor first, one
// ancestor's writes in [spec.WriteOrder]. It runs four statements in one
// read transaction whatever the length of the chain. A missing checkpoint
// gives every channel an empty history. See [spec.DeltaHistoryReader].
func (s *Saver) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	out, want, err := deltaprep.Prepare(ctx, "sqlite", cfg, channels)
	if err != nil || len(want) == 0 {
		return out, err
	}
	err = s.read(ctx, "delta history", cfg.ThreadID, false, func(q rowQuerier) error {
		return s.deltaHistory(ctx, q, cfg, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// deltaHistory fills out, which holds an empty history for each channel
// wanted, with the histories seen from cfg, reading through q.
func (s *Saver) deltaHistory(ctx context.Context, q rowQuerier, cfg spec.Config, out map[string]spec.DeltaHistory) error {
	channels := make([]string, 0, len(out))
	for ch := range out {
		channels = append(channels, ch)
	}
	slices.Sort(channels)
	w, err := walkDelta(ctx, q, cfg, channels)
	if err != nil || len(w.chain) == 0 {
		return err
	}
	if err := s.deltaWrites(ctx, q, cfg, w, channels, out); err != nil {
		return err
	}
	return s.deltaSeeds(ctx, q, cfg, w, out)
}

// deltaWalk is what the ancestor walk of one checkpoint found.
type deltaWalk struct {
	// chain is the ancestors visited, nearest first.
	chain []string
	// seeds maps a channel that found its seed to its position in chain.
	seeds map[string]int
	// seedVersions maps such a channel to its version at the seed.
	seedVersions map[string]spec.Version
}

// end returns how many ancestors of w.chain belong to channel ch's history.
func (w deltaWalk) end(ch string) int {
	if at, ok := w.seeds[ch]; ok {
		return at + 1
	}
	return len(w.chain)
}

// needed returns the ancestors the histories of every walked channel need.
func (w deltaWalk) needed(channels []string) []string {
	n := 0
	for _, ch := range channels {
		n = max(n, w.end(ch))
	}
	return w.chain[:n]
}

// walkDelta walks the ancestors of the checkpoint cfg names by parent links
// until every channel has found its seed (statements 1 and 2 of
// DeltaHistory). A missing target gives an empty walk.
func walkDelta(ctx context.Context, q rowQuerier, cfg spec.Config, channels []string) (deltaWalk, error) {
	w := deltaWalk{seeds: map[string]int{}, seedVersions: map[string]spec.Version{}}
	chs, err := jsonList(channels)
	if err != nil {
		return w, err
	}
	type key struct{ ch, ver string }
	values := map[key]bool{}
	err = q.queryRows(ctx, deltaValueKeysSQL, []any{cfg.ThreadID, cfg.Namespace, chs}, 2, func(cols []driver.Value) error {
		values[key{asString(cols[0]), asString(cols[1])}] = true
		return nil
	})
	if err != nil {
		return w, err
	}
	query, args := deltaChainLatestSQL, []any{cfg.ThreadID, cfg.Namespace}
	if cfg.CheckpointID != "" {
		query, args = deltaChainSQL, append(args, cfg.CheckpointID)
	}
	seen := map[string]bool{}
	err = q.queryRows(ctx, query, args, 2, func(cols []driver.Value) error {
		id := asString(cols[0])
		if seen[id] {
			return errStop // the parent links loop
		}
		seen[id] = true
		if len(seen) == 1 {
			return nil // the target itself
		}
		body, _ := cols[1].([]byte)
		cp, err := parseBody(id, body)
		if err != nil {
			return fmt.Errorf("checkpoint %q: %w", id, err)
		}
		w.chain = append(w.chain, id)
		for _, ch := range channels {
			if _, done := w.seeds[ch]; done {
				continue
			}
			if ver, ok := cp.ChannelVersions[ch]; ok && values[key{ch, string(ver)}] {
				w.seeds[ch] = len(w.chain) - 1
				w.seedVersions[ch] = ver
			}
		}
		if len(w.seeds) == len(channels) {
			return errStop
		}
		return nil
	})
	return w, err
}

// deltaWrites adds to out the writes of each channel stored against the
// ancestors of its history (statement 3 of DeltaHistory).
func (s *Saver) deltaWrites(ctx context.Context, q rowQuerier, cfg spec.Config, w deltaWalk, channels []string, out map[string]spec.DeltaHistory) error {
	ids, err := jsonList(w.needed(channels))
	if err != nil {
		return err
	}
	chs, err := jsonList(channels)
	if err != nil {
		return err
	}
	pos := make(map[string]int, len(w.chain))
	for i, id := range w.chain {
		pos[id] = i
	}
	type row struct {
		pos int
		key spec.WriteKey
		pw  spec.PendingWrite
	}
	rows := map[string][]row{}
	err = q.queryRows(ctx, deltaWritesSQL, []any{cfg.ThreadID, cfg.Namespace, ids, chs}, 6, func(cols []driver.Value) error {
		id, ch := asString(cols[0]), asString(cols[1])
		p, ok := pos[id]
		if !ok || p >= w.end(ch) {
			return nil // beyond this channel's seed
		}
		data, _ := cols[5].([]byte)
		v, err := decodeOwned(s.serde, data)
		if err != nil {
			return fmt.Errorf("checkpoint %q write to %q: %w", id, ch, err)
		}
		taskID := asString(cols[3])
		rows[ch] = append(rows[ch], row{
			pos: p,
			key: spec.WriteKey{TaskPath: asString(cols[2]), TaskID: taskID, Index: asInt(cols[4])},
			pw:  spec.PendingWrite{TaskID: taskID, Channel: ch, Value: v},
		})
		return nil
	})
	if err != nil {
		return err
	}
	for ch, rs := range rows {
		// Oldest ancestor (greatest position) first, then write order.
		slices.SortFunc(rs, func(a, b row) int {
			if a.pos != b.pos {
				return b.pos - a.pos
			}
			return spec.WriteOrder(a.key, b.key)
		})
		h := out[ch]
		for _, r := range rs {
			h.Writes = append(h.Writes, r.pw)
		}
		out[ch] = h
	}
	return nil
}

// deltaSeeds sets the seed of each channel that found one (statement 4 of
// DeltaHistory).
func (s *Saver) deltaSeeds(ctx context.Context, q rowQuerier, cfg spec.Config, w deltaWalk, out map[string]spec.DeltaHistory) error {
	if len(w.seedVersions) == 0 {
		return nil
	}
	keys := make([][2]string, 0, len(w.seedVersions))
	for ch, ver := range w.seedVersions {
		keys = append(keys, [2]string{ch, string(ver)})
	}
	data, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	return q.queryRows(ctx, deltaSeedsSQL, []any{cfg.ThreadID, cfg.Namespace, string(data)}, 2, func(cols []driver.Value) error {
		ch := asString(cols[0])
		h, ok := out[ch]
		if !ok {
			return nil
		}
		raw, _ := cols[1].([]byte)
		v, err := decodeOwned(s.serde, raw)
		if err != nil {
			return fmt.Errorf("seed of %q: %w", ch, err)
		}
		h.Seed, h.HasSeed = v, true
		out[ch] = h
		return nil
	})
}

// jsonList encodes strings as a JSON array, for json_each.
func jsonList(items []string) (string, error) {
	if items == nil {
		items = []string{}
	}
	data, err := json.Marshal(items)
	return string(data), err
}
