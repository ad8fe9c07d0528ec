package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Put implements [spec.Saver]. The values of the channels in newVersions
// and the checkpoint with its metadata are written by a single statement,
// so they land together or not at all.
func (s *Saver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) (spec.Config, error) {
	if err := spec.ValidatePut(cfg, cp, newVersions); err != nil {
		return spec.Config{}, err
	}
	args, err := s.putArgs(cfg, cp, md, newVersions)
	if err != nil {
		return spec.Config{}, fmt.Errorf("postgres: put (thread %q): %w", cfg.ThreadID, err)
	}
	if err := ctx.Err(); err != nil {
		return spec.Config{}, err
	}
	if err := s.execRetry(ctx, s.q.put, args...); err != nil {
		return spec.Config{}, wrapErr(ctx, "put", cfg.ThreadID, err)
	}
	return spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}, nil
}

// putArgs validates and encodes everything Put stores, before any I/O, so
// that bad input stores nothing.
func (s *Saver) putArgs(cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) ([]any, error) {
	rec, err := encodeRecord(cp)
	if err != nil {
		return nil, err
	}
	channels := make([]string, 0, len(cp.ChannelVersions))
	for ch := range cp.ChannelVersions {
		channels = append(channels, ch)
	}
	slices.Sort(channels)
	versions := make([]string, len(channels))
	for i, ch := range channels {
		versions[i] = string(cp.ChannelVersions[ch])
	}

	// Blobs in channel order: concurrent Puts then lock rows in one order.
	blobChannels := make([]string, 0, len(newVersions))
	for ch := range newVersions {
		blobChannels = append(blobChannels, ch)
	}
	slices.Sort(blobChannels)
	blobVersions := make([]string, len(blobChannels))
	blobValues := make([][]byte, len(blobChannels))
	for i, ch := range blobChannels {
		blobVersions[i] = string(newVersions[ch])
		v, ok := cp.ChannelValues[ch]
		if !ok {
			continue // NULL: the channel has no value at this version
		}
		b, err := s.serde.Encode(v)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", ch, err)
		}
		blobValues[i] = b
	}

	nmd, err := spec.NormalizeMetadata(md)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	mdJSON, err := filterJSON(map[string]any(nmd))
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	mdExact, err := metadataCodec.Encode(map[string]any(nmd))
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}

	var parent any // NULL when there is no parent
	if cfg.CheckpointID != "" {
		parent = cfg.CheckpointID
	}
	return []any{
		cfg.ThreadID, cfg.Namespace, cp.ID, parent, rec, channels, versions,
		string(mdJSON), blobChannels, blobVersions, blobValues, mdExact,
	}, nil
}

// PutWrites implements [spec.Saver]. The writes are stored by one
// statement: regular writes keep the first value stored under their key
// (ON CONFLICT ... WHERE filters the update out), special writes the last.
func (s *Saver) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if err := spec.ValidatePutWrites(cfg, writes, taskID, taskPath); err != nil {
		return err
	}
	// A special channel written twice in one call: the later write wins.
	// Collapse duplicates here, as one INSERT may not touch a row twice.
	type entry struct {
		idx     int32
		channel string
		value   []byte
	}
	entries := make([]entry, 0, len(writes))
	slot := make(map[int]int, 4) // special index -> position in entries
	for pos, w := range writes {
		b, err := s.serde.Encode(w.Value)
		if err != nil {
			return fmt.Errorf("postgres: put writes (thread %q): channel %q: %w", cfg.ThreadID, w.Channel, err)
		}
		idx := spec.WriteIndex(w.Channel, pos)
		e := entry{idx: int32(idx), channel: w.Channel, value: b}
		if idx < 0 {
			if at, ok := slot[idx]; ok {
				entries[at] = e
				continue
			}
			slot[idx] = len(entries)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return ctx.Err()
	}
	// Key order, so that concurrent calls lock rows in one order.
	slices.SortFunc(entries, func(a, b entry) int { return int(a.idx) - int(b.idx) })
	idxs := make([]int32, len(entries))
	channels := make([]string, len(entries))
	values := make([][]byte, len(entries))
	for i, e := range entries {
		idxs[i], channels[i], values[i] = e.idx, e.channel, e.value
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.execRetry(ctx, s.q.putWrites,
		cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, taskID, taskPath, idxs, channels, values)
	return wrapErr(ctx, "put writes", cfg.ThreadID, err)
}
