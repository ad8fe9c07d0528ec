package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/checkpointkit/checkpointkit/adapters/internal/deltaprep"
	"github.com/checkpointkit/checkpointkit/spec"
)

var _ spec.DeltaHistoryReader = (*Saver)(nil)

// DeltaHistory implements [spec.DeltaHistoryReader] with one statement
// whatever the length of the chain: a recursive query follows the parent
// links from the target's parent, stopping for each channel at the first
// ancestor that stores a value for it, and returns the ancestors walked,
// their writes to the channels still wanted and the seed values. Writes of
// one ancestor come in [spec.WriteOrder] (task path, task ID, index).
func (s *Saver) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	out, want, err := deltaprep.Prepare(ctx, "postgres", cfg, channels)
	if err != nil || len(want) == 0 {
		return out, err
	}
	var rows []deltaRow
	err = s.retryLost(ctx, func() error {
		var err error
		rows, err = s.queryDelta(ctx, cfg, want)
		return err
	})
	if err != nil {
		return nil, wrapErr(ctx, "delta history", cfg.ThreadID, err)
	}
	if err := s.foldDelta(rows, want, out); err != nil {
		return nil, fmt.Errorf("postgres: delta history (thread %q): %w", cfg.ThreadID, err)
	}
	return out, nil
}

// deltaRow is one row of the history statement; kind says which columns
// are set (see buildDeltaQueries).
type deltaRow struct {
	kind             int32
	id               string
	parent           *string
	has              []string
	taskPath, taskID *string
	idx              *int32
	channel          *string
	value            []byte
}

// queryDelta runs the history statement and reads its rows.
func (s *Saver) queryDelta(ctx context.Context, cfg spec.Config, want []string) ([]deltaRow, error) {
	rows, err := s.pool.Query(ctx, s.q.deltaHistory, s.args(cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, want)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []deltaRow
	for rows.Next() {
		var r deltaRow
		if err := rows.Scan(&r.kind, &r.id, &r.parent, &r.has, &r.taskPath, &r.taskID, &r.idx, &r.channel, &r.value); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// deltaWrite is a stored write with its sort key.
type deltaWrite struct {
	key     spec.WriteKey
	channel string
	value   []byte
}

// deltaAncestor is what the statement returned about one ancestor.
type deltaAncestor struct {
	parent *string
	has    []string
	writes []deltaWrite
	seeds  map[string][]byte
}

// foldDelta walks the rows from the target's parent by parent links, as
// spec.WalkDeltaHistory does over GetTuple, and fills out.
func (s *Saver) foldDelta(rows []deltaRow, want []string, out map[string]spec.DeltaHistory) error {
	var target *deltaRow
	anc := map[string]*deltaAncestor{}
	get := func(id string) *deltaAncestor {
		a := anc[id]
		if a == nil {
			a = &deltaAncestor{seeds: map[string][]byte{}}
			anc[id] = a
		}
		return a
	}
	for i := range rows {
		r := &rows[i]
		switch r.kind {
		case 0:
			target = r
		case 1:
			a := get(r.id)
			a.parent, a.has = r.parent, r.has
		case 2:
			if r.taskPath == nil || r.taskID == nil || r.idx == nil || r.channel == nil {
				return fmt.Errorf("malformed write row of checkpoint %q", r.id)
			}
			get(r.id).writes = append(get(r.id).writes, deltaWrite{
				key:     spec.WriteKey{TaskPath: *r.taskPath, TaskID: *r.taskID, Index: int(*r.idx)},
				channel: *r.channel, value: r.value,
			})
		case 3:
			if r.channel == nil {
				return fmt.Errorf("malformed value row of checkpoint %q", r.id)
			}
			get(r.id).seeds[*r.channel] = r.value
		}
	}
	if target == nil {
		return nil // no such checkpoint: empty histories
	}
	remaining := map[string]bool{}
	for _, ch := range want {
		remaining[ch] = true
	}
	var visited []*deltaAncestor // nearest first
	seen := map[string]bool{target.id: true}
	for cur := target.parent; cur != nil && len(remaining) > 0; {
		if seen[*cur] {
			break // the parent links loop: the walk ends, as spec.WalkDeltaHistory's
		}
		seen[*cur] = true
		a := anc[*cur]
		if a == nil {
			break // the parent is gone
		}
		visited = append(visited, a)
		for _, ch := range a.has {
			if !remaining[ch] {
				continue
			}
			data, ok := a.seeds[ch]
			if !ok {
				return fmt.Errorf("checkpoint %q: seed of channel %q missing", *cur, ch)
			}
			v, err := s.serde.Decode(data)
			if err != nil {
				return fmt.Errorf("checkpoint %q channel %q: %w", *cur, ch, err)
			}
			out[ch] = spec.DeltaHistory{Seed: v, HasSeed: true, Writes: out[ch].Writes}
			delete(remaining, ch)
		}
		cur = a.parent
	}
	for i := len(visited) - 1; i >= 0; i-- {
		a := visited[i]
		slices.SortFunc(a.writes, func(x, y deltaWrite) int { return spec.WriteOrder(x.key, y.key) })
		for _, w := range a.writes {
			h, ok := out[w.channel]
			if !ok {
				continue
			}
			v, err := s.serde.Decode(w.value)
			if err != nil {
				return fmt.Errorf("write of task %q to %q: %w", w.key.TaskID, w.channel, err)
			}
			h.Writes = append(h.Writes, spec.PendingWrite{TaskID: w.key.TaskID, Channel: w.channel, Value: v})
			out[w.channel] = h
		}
	}
	return nil
}
