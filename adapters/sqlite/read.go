package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// scopedColumns are the columns of a checkpoint row when thread and
// namespace are fixed by the query, checkpointColumns when they are not.
// Checkpoint ID, parent ID, metadata and body come back as one column
// (TEXT: SQLite's || copies a blob's bytes as they are) after the lengths
// of the first three (NULL for no parent), and the strings of the tuple
// share it: one copy out of SQLite, one allocation, per row.
const (
	scopedColumns = `octet_length(c.checkpoint_id), octet_length(c.parent_checkpoint_id), octet_length(c.metadata),
		c.checkpoint_id || coalesce(c.parent_checkpoint_id, '') || c.metadata || c.checkpoint`
	checkpointColumns = scopedColumns + `, c.thread_id, c.checkpoint_ns`
)

// Read statements compare columns with "+?" rather than "?". Since SQLite
// 3.4x the planner peeks at the value bound to "column = ?" and asks for
// the statement to be prepared again when it changes; go-sqlite3 clears the
// bindings of every statement it caches, which then counts as a change, so
// every use of a cached statement with a plain "= ?" was compiled afresh
// (about three quarters of the CPU time of a GetTuple). "+?" is the same
// value without that peek: same comparison, same index search.
var (
	getByIDSQL = `SELECT ` + scopedColumns + `, ` + writesColumn + ` FROM checkpoints c
		WHERE c.thread_id = +? AND c.checkpoint_ns = +? AND c.checkpoint_id = +?`
	getLatestSQL = `SELECT ` + scopedColumns + `, ` + writesColumn + ` FROM checkpoints c
		WHERE c.thread_id = +? AND c.checkpoint_ns = +?
		ORDER BY c.checkpoint_id DESC LIMIT 1`
)

// writesColumn is a GetTuple's pending writes as one column of its
// checkpoint row, in the contents statement's record form (writeRecord): a
// key search of the writes inside the checkpoint statement costs less than
// a statement of its own (GetTuple: 55 k instructions against 63 k).
var writesColumn = `(SELECT coalesce(group_concat(` + writeRecord("0") + `, ''), '') FROM writes w
		WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id)`

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
	query, args := getLatestSQL, append(make([]any, 0, 3), cfg.ThreadID, cfg.Namespace)
	if cfg.CheckpointID != "" {
		query, args = getByIDSQL, append(args, cfg.CheckpointID)
	}
	scope := &rowKey{thread: cfg.ThreadID, ns: cfg.Namespace}
	var page []*spec.Tuple
	// No BEGIN and COMMIT: the checkpoint query, which returns at most one
	// row and brings the checkpoint's writes with it (writesColumn), stays
	// active while the values are read, and so keeps the implicit read
	// transaction (one snapshot) open until release.
	err := s.read(ctx, "get tuple", cfg.ThreadID, true, func(q rowQuerier) error {
		row, release, err := q.queryFirst(ctx, query, args, 5)
		if err != nil || row == nil {
			return err
		}
		defer release()
		t, _, err := tupleFromRow(row[:4], scope, nil)
		if err != nil {
			return err
		}
		page = []*spec.Tuple{t}
		if err := s.loadTupleContents(ctx, q, page, row[4]); err != nil {
			return err
		}
		return release()
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
// before filtering. When scope is set, the query selects scopedColumns and
// every row is of scope's thread and namespace; otherwise it selects
// checkpointColumns. The values and writes of the page are then fetched
// by loadContents (no query per checkpoint).
func (s *Saver) loadPage(ctx context.Context, q rowQuerier, query string, args []any, scope *rowKey, filter spec.Metadata) ([]*spec.Tuple, rowKey, int, error) {
	return s.loadPageOf(ctx, q, query, args, 0, scope, filter)
}

// loadPageOf is loadPage for a query that returns at most rows rows (0:
// unknown), which sizes the page.
func (s *Saver) loadPageOf(ctx context.Context, q rowQuerier, query string, args []any, rows int, scope *rowKey, filter spec.Metadata) ([]*spec.Tuple, rowKey, int, error) {
	var (
		page []*spec.Tuple
		last rowKey
		n    int
	)
	ncol := 6
	if scope != nil {
		ncol = 4
	}
	page = make([]*spec.Tuple, 0, min(rows, 64)) // a filter may leave most rows out
	err := q.queryRows(ctx, query, args, ncol, func(cols []driver.Value) error {
		t, k, err := tupleFromRow(cols, scope, filter)
		if err != nil {
			return err
		}
		n++
		last = k
		if t != nil {
			page = append(page, t)
		}
		return nil
	})
	if err != nil {
		return nil, last, 0, err
	}
	if len(page) == 0 {
		return nil, last, n, nil
	}
	if err := s.loadContents(ctx, q, page, scope); err != nil {
		return nil, last, 0, err
	}
	return page, last, n, nil
}

// tupleFromRow decodes a checkpoint row (scopedColumns when scope is set,
// checkpointColumns otherwise) into a tuple without values or writes, and
// returns its key; the tuple is nil when the metadata does not match filter.
func tupleFromRow(cols []driver.Value, scope *rowKey, filter spec.Metadata) (*spec.Tuple, rowKey, error) {
	var k rowKey
	if scope != nil {
		k.thread, k.ns = scope.thread, scope.ns
	} else {
		k.thread, k.ns = asString(cols[4]), asString(cols[5])
	}
	row := cols[3]
	text := asString(row)
	nid, nparent, nmeta := asInt(cols[0]), asInt(cols[1]), asInt(cols[2]) // nparent -1: no parent
	np := max(nparent, 0)
	if nid < 0 || nmeta < 0 || nid+np+nmeta > len(text) {
		return nil, k, fmt.Errorf("checkpoint row: bad lengths %d, %d, %d of %d bytes", nid, nparent, nmeta, len(text))
	}
	k.id = text[:nid]
	md, err := parseMetadata(text[nid+np : nid+np+nmeta])
	if err != nil {
		return nil, k, fmt.Errorf("checkpoint %q: %w", k.id, err)
	}
	if filter != nil && !spec.MatchFilter(md, filter) {
		return nil, k, nil
	}
	cp, err := parseBody(k.id, columnBytes(row)[nid+np+nmeta:])
	if err != nil {
		return nil, k, fmt.Errorf("checkpoint %q: %w", k.id, err)
	}
	cp.ChannelValues = make(map[string]any, len(cp.ChannelVersions))
	// The tuple and its parent's config as one allocation.
	tp := &struct {
		t      spec.Tuple
		parent spec.Config
	}{t: spec.Tuple{
		Config:        spec.Config{ThreadID: k.thread, Namespace: k.ns, CheckpointID: k.id},
		Checkpoint:    cp,
		Metadata:      md,
		PendingWrites: []spec.PendingWrite{},
	}}
	if nparent >= 0 {
		tp.parent = spec.Config{ThreadID: k.thread, Namespace: k.ns, CheckpointID: text[nid : nid+nparent]}
		tp.t.Parent = &tp.parent
	}
	return &tp.t, k, nil
}

// asString returns a TEXT column's value ("" for NULL).
func asString(v driver.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

// asInt returns an INTEGER column's value (-1 for anything else).
func asInt(v driver.Value) int {
	if n, ok := v.(int64); ok {
		return int(n)
	}
	return -1
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
