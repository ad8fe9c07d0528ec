package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/checkpointkit/checkpointkit/adapters/internal/fastvalue"
	"github.com/checkpointkit/checkpointkit/spec"
)

const checkpointColumns = `c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata`

const (
	getByIDSQL = `SELECT ` + checkpointColumns + ` FROM checkpoints c
		WHERE c.thread_id = ? AND c.checkpoint_ns = ? AND c.checkpoint_id = ?`
	getLatestSQL = `SELECT ` + checkpointColumns + ` FROM checkpoints c
		WHERE c.thread_id = ? AND c.checkpoint_ns = ?
		ORDER BY c.checkpoint_id DESC LIMIT 1`
)

// maxKeysPerQuery bounds the row values in one "IN (VALUES ...)" list, well
// under SQLite's limit on bound parameters.
const maxKeysPerQuery = 200

// GetTuple returns the checkpoint named by cfg, or the latest of its thread
// and namespace when cfg.CheckpointID is empty. Checkpoint, values and
// pending writes are read in one read transaction. See
// [spec.Saver.GetTuple].
func (s *Saver) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	if err := spec.ValidateGetTuple(cfg); err != nil {
		return nil, err
	}
	query, args := getLatestSQL, []any{cfg.ThreadID, cfg.Namespace}
	if cfg.CheckpointID != "" {
		query, args = getByIDSQL, append(args, cfg.CheckpointID)
	}
	var page []*spec.Tuple
	err := s.read(ctx, "get tuple", cfg.ThreadID, func(q querier) error {
		var err error
		page, _, _, err = s.loadPage(ctx, q, query, args, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(page) == 0 {
		return nil, fmt.Errorf("sqlite: get tuple thread %q namespace %q checkpoint %q: %w",
			cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, spec.ErrNotFound)
	}
	return page[0], nil
}

// rowKey identifies a checkpoint row; it is also List's keyset cursor.
type rowKey struct{ thread, ns, id string }

// loadPage runs a checkpoint query and returns the tuples of the rows that
// match filter (nil matches all), complete with channel values and pending
// writes, plus the key of the last row read and the number of rows read
// before filtering. Rows are closed before the values and writes are
// fetched, one query per batch of keys (no query per checkpoint).
func (s *Saver) loadPage(ctx context.Context, q querier, query string, args []any, filter spec.Metadata) ([]*spec.Tuple, rowKey, int, error) {
	var (
		page []*spec.Tuple
		last rowKey
		n    int
	)
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, last, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k      rowKey
			parent sql.NullString
			body   sql.RawBytes // both decoded before the next row: no copy kept
			mdText sql.RawBytes
		)
		if err := rows.Scan(&k.thread, &k.ns, &k.id, &parent, &body, &mdText); err != nil {
			return nil, last, 0, err
		}
		n++
		last = k
		md, err := decodeMetadataBytes(mdText)
		if err != nil {
			return nil, last, 0, fmt.Errorf("checkpoint %q: %w", k.id, err)
		}
		if filter != nil && !spec.MatchFilter(md, filter) {
			continue
		}
		cp, err := decodeBody(k.id, body)
		if err != nil {
			return nil, last, 0, fmt.Errorf("checkpoint %q: %w", k.id, err)
		}
		cp.ChannelValues = make(map[string]any, len(cp.ChannelVersions))
		t := &spec.Tuple{
			Config:        spec.Config{ThreadID: k.thread, Namespace: k.ns, CheckpointID: k.id},
			Checkpoint:    cp,
			Metadata:      md,
			PendingWrites: []spec.PendingWrite{},
		}
		if parent.Valid {
			t.Parent = &spec.Config{ThreadID: k.thread, Namespace: k.ns, CheckpointID: parent.String}
		}
		page = append(page, t)
	}
	if err := rows.Err(); err != nil {
		return nil, last, 0, err
	}
	rows.Close()
	if len(page) == 0 {
		return nil, last, n, nil
	}
	if err := s.loadValues(ctx, q, page); err != nil {
		return nil, last, 0, err
	}
	if err := s.loadWrites(ctx, q, page); err != nil {
		return nil, last, 0, err
	}
	return page, last, n, nil
}

// blobKey identifies a stored channel value.
type blobKey struct{ thread, ns, channel, version string }

// loadValues fills the channel values of page. Values shared by several
// checkpoints of the page are fetched and decoded once.
func (s *Saver) loadValues(ctx context.Context, q querier, page []*spec.Tuple) error {
	var keys []blobKey
	seen := make(map[blobKey]bool)
	for _, t := range page {
		for ch, ver := range t.Checkpoint.ChannelVersions {
			k := blobKey{t.Config.ThreadID, t.Config.Namespace, ch, string(ver)}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	// A value is kept decoded when it is immutable (shared by every tuple
	// of the page), encoded otherwise (decoded per tuple).
	type stored struct {
		data  []byte
		plain any
		ok    bool
	}
	values := make(map[blobKey]stored, len(keys))
	for start := 0; start < len(keys); start += maxKeysPerQuery {
		chunk := keys[start:min(start+maxKeysPerQuery, len(keys))]
		args := make([]any, 0, 4*len(chunk))
		for _, k := range chunk {
			args = append(args, k.thread, k.ns, k.channel, k.version)
		}
		rows, err := q.QueryContext(ctx, `SELECT thread_id, checkpoint_ns, channel, version, value FROM blobs
			WHERE kind = '`+kindValue+`' AND (thread_id, checkpoint_ns, channel, version) IN (VALUES `+
			placeholders(len(chunk), 4)+`)`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k blobKey
			var data sql.RawBytes
			if err := rows.Scan(&k.thread, &k.ns, &k.channel, &k.version, &data); err != nil {
				rows.Close()
				return err
			}
			if v, ok := fastvalue.Immutable(s.serde, data); ok {
				values[k] = stored{plain: v, ok: true}
			} else {
				values[k] = stored{data: bytes.Clone(data)}
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
	}
	for _, t := range page {
		for ch, ver := range t.Checkpoint.ChannelVersions {
			sv, ok := values[blobKey{t.Config.ThreadID, t.Config.Namespace, ch, string(ver)}]
			if !ok {
				continue
			}
			if sv.ok {
				t.Checkpoint.ChannelValues[ch] = sv.plain
				continue
			}
			// Decode per tuple: tuples must not share mutable values.
			v, err := s.serde.Decode(sv.data)
			if err != nil {
				return fmt.Errorf("checkpoint %q channel %q: %w", t.Config.CheckpointID, ch, err)
			}
			t.Checkpoint.ChannelValues[ch] = v
		}
	}
	return nil
}

// loadWrites fills the pending writes of page, ordered by task ID then
// index.
func (s *Saver) loadWrites(ctx context.Context, q querier, page []*spec.Tuple) error {
	byKey := make(map[rowKey]*spec.Tuple, len(page))
	for _, t := range page {
		byKey[rowKey{t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID}] = t
	}
	for start := 0; start < len(page); start += maxKeysPerQuery {
		chunk := page[start:min(start+maxKeysPerQuery, len(page))]
		args := make([]any, 0, 3*len(chunk))
		for _, t := range chunk {
			args = append(args, t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID)
		}
		rows, err := q.QueryContext(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, channel, value
			FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (VALUES `+placeholders(len(chunk), 3)+`)
			ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx`, args...)
		if err != nil {
			return err
		}
		aliases := fastvalue.Aliases(s.serde)
		for rows.Next() {
			var (
				k    rowKey
				w    spec.PendingWrite
				data sql.RawBytes // decoded at once: no copy to keep
			)
			if err := rows.Scan(&k.thread, &k.ns, &k.id, &w.TaskID, &w.Channel, &data); err != nil {
				rows.Close()
				return err
			}
			if aliases {
				data = bytes.Clone(data) // the serde may keep it
			}
			if w.Value, err = fastvalue.Decode(s.serde, data); err != nil {
				rows.Close()
				return fmt.Errorf("checkpoint %q write to %q: %w", k.id, w.Channel, err)
			}
			if t := byKey[k]; t != nil {
				t.PendingWrites = append(t.PendingWrites, w)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// placeholders returns n parenthesised groups of width "?"s, comma
// separated: placeholders(2, 3) is "(?,?,?),(?,?,?)".
func placeholders(n, width int) string {
	group := "(" + strings.Repeat("?,", width-1) + "?)"
	var b strings.Builder
	b.Grow(n * (len(group) + 1))
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(group)
	}
	return b.String()
}
