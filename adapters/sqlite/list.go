package sqlite

import (
	"context"
	"iter"
	"strings"
	"sync/atomic"

	"github.com/checkpointkit/checkpointkit/spec"
)

// List streams the checkpoints selected by opts: checkpoint ID descending,
// ties by thread then namespace, all byte-wise (SQLite's BINARY collation).
//
// It reads in pages of [WithListPageSize] rows with keyset pagination: each
// page is one short read transaction whose rows are closed, and whose values
// and pending writes are fetched (one statement when the page is of one
// thread and namespace), before any tuple of the page is yielded. Nothing
// is held open while the consumer runs, so breaking out early leaks
// nothing, and the consumer may call the saver from inside the loop. Pages are separate snapshots: a checkpoint put during the
// iteration with an ID below the cursor shows up in a later page.
//
// The metadata filter is applied in SQL where SQL can decide exactly
// (strings, booleans, null) and as a type pre-check otherwise; every row is
// then checked with [spec.MatchFilter], which is the rule. See
// [spec.Saver.List].
func (s *Saver) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		if err := spec.ValidateList(opts); err != nil {
			yield(nil, err)
			return
		}
		filter, err := spec.NormalizeFilter(opts.Filter)
		if err != nil {
			yield(nil, err)
			return
		}
		q := buildListQuery(opts, filter)
		remaining := opts.Limit // 0: no limit
		var after *rowKey
		for {
			pageSize := s.pageSize
			if remaining > 0 && q.exact && remaining < pageSize {
				pageSize = remaining
			}
			sqlText, args := q.page(after, pageSize)
			var (
				page []*spec.Tuple
				last rowKey
				n    int
			)
			err := s.read(ctx, "list", opts.ThreadID, false, func(tx rowQuerier) error {
				var err error
				page, last, n, err = s.loadPageOf(ctx, tx, sqlText, args, pageSize, q.scope(opts), filter)
				return err
			})
			if err != nil {
				yield(nil, err)
				return
			}
			for _, t := range page {
				if !yield(t, nil) {
					return
				}
				if remaining > 0 {
					if remaining--; remaining == 0 {
						return
					}
				}
			}
			if n < pageSize {
				return
			}
			after = &last
		}
	}
}

// listQuery is a List query without its keyset cursor and limit.
type listQuery struct {
	where []string
	args  []any
	// fixedScope is set when thread and namespace are both fixed, so the
	// checkpoint ID alone orders the rows.
	fixedScope bool
	// exact is set when the SQL conditions select exactly the rows that
	// match the filter, so a page never loses rows to the Go check.
	exact bool
	// shape says which conditions where holds (the shape* bits), when
	// that alone determines the SQL text (no filter); -1 otherwise.
	shape int
}

// The conditions of a list query without a filter, as bits of
// listQuery.shape; with shapeAfter for a page after a cursor, they name
// the page's SQL text, which listSQL caches.
const (
	shapeThread = 1 << iota
	shapeNamespace
	shapeCheckpointID
	shapeBefore
	shapeAfter
	shapeCount = 1 << iota
)

// listSQL caches the SQL text of the filterless list pages by shape.
var listSQL [shapeCount]atomic.Pointer[string]

func buildListQuery(opts spec.ListOptions, filter spec.Metadata) listQuery {
	n := 4 + len(filter)
	q := listQuery{exact: true, where: make([]string, 0, n), args: make([]any, 0, 2*n)}
	if opts.ThreadID != "" {
		q.where = append(q.where, "c.thread_id = +?")
		q.args = append(q.args, opts.ThreadID)
		q.shape |= shapeThread
	}
	if !opts.AllNamespaces {
		q.where = append(q.where, "c.checkpoint_ns = +?")
		q.args = append(q.args, opts.Namespace)
		q.shape |= shapeNamespace
	}
	q.fixedScope = opts.ThreadID != "" && !opts.AllNamespaces
	if opts.CheckpointID != "" {
		q.where = append(q.where, "c.checkpoint_id = +?")
		q.args = append(q.args, opts.CheckpointID)
		q.shape |= shapeCheckpointID
	}
	if opts.Before != "" {
		q.where = append(q.where, "c.checkpoint_id < +?")
		q.args = append(q.args, opts.Before)
		q.shape |= shapeBefore
	}
	if len(filter) > 0 {
		q.shape = -1
	}
	for key, want := range filter {
		clause, args, exact := filterClause(key, want)
		q.where = append(q.where, clause)
		q.args = append(q.args, args...)
		q.exact = q.exact && exact
	}
	return q
}

// filterClause returns an SQL condition that every row whose metadata has
// key with a value equal to want satisfies (it may let through rows that do
// not match), its arguments, and whether it is exact. The key and the value
// are bound as parameters, and json_each compares the key literally, so
// dots, quotes and '$' in keys are plain characters.
func filterClause(key string, want any) (string, []any, bool) {
	const (
		valueEq = `EXISTS (SELECT 1 FROM json_each(c.metadata) j WHERE j.key = +? AND j.type = 'text' AND j.value = +?)`
		typeIs  = `EXISTS (SELECT 1 FROM json_each(c.metadata) j WHERE j.key = +? AND j.type = +?)`
		numeric = `EXISTS (SELECT 1 FROM json_each(c.metadata) j WHERE j.key = +? AND j.type IN ('integer', 'real'))`
	)
	switch v := want.(type) {
	case string:
		if strings.IndexByte(v, 0) < 0 {
			return valueEq, []any{key, v}, true
		}
		return typeIs, []any{key, "text"}, false
	case bool:
		if v {
			return typeIs, []any{key, "true"}, true
		}
		return typeIs, []any{key, "false"}, true
	case nil:
		return typeIs, []any{key, "null"}, true
	case int64, float64:
		// SQLite's text-to-float conversion is not guaranteed to round like
		// Go's, so numbers are only type-checked here.
		return numeric, []any{key}, false
	case []any:
		return typeIs, []any{key, "array"}, false
	case map[string]any:
		return typeIs, []any{key, "object"}, false
	}
	return "1", nil, false
}

// scope returns the thread and namespace every row of the query has, or
// nil when they vary (see loadPage).
func (q listQuery) scope(opts spec.ListOptions) *rowKey {
	if !q.fixedScope {
		return nil
	}
	return &rowKey{thread: opts.ThreadID, ns: opts.Namespace}
}

// page returns the SQL text and arguments of the page after cursor (nil for
// the first page), at most limit rows.
func (q listQuery) page(after *rowKey, limit int) (string, []any) {
	where := q.where
	args := q.args
	shape := q.shape
	if after != nil {
		where = append(where[:len(where):len(where)], keysetClause(q.fixedScope))
		args = append(args[:len(args):len(args)], keysetArgs(q.fixedScope, *after)...)
		shape |= shapeAfter
	}
	args = append(args[:len(args):len(args)], limit)
	if shape >= 0 {
		if p := listSQL[shape].Load(); p != nil {
			return *p, args
		}
	}
	var b strings.Builder
	b.Grow(512)
	if q.fixedScope {
		b.WriteString(`SELECT ` + scopedColumns + ` FROM checkpoints c`)
	} else {
		b.WriteString(`SELECT ` + checkpointColumns + ` FROM checkpoints c`)
	}
	if len(where) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(where, " AND "))
	}
	b.WriteString(" ORDER BY c.checkpoint_id DESC, c.thread_id, c.checkpoint_ns LIMIT +?")
	text := b.String()
	if shape >= 0 {
		listSQL[shape].Store(&text)
	}
	return text, args
}

// keysetClause selects the rows after a cursor in List order. The leading
// "checkpoint_id <= ?" is a range the indexes can seek to; the rest only
// removes the cursor's own ID's rows at or before the cursor.
func keysetClause(fixedScope bool) string {
	if fixedScope {
		return "c.checkpoint_id < +?"
	}
	return "c.checkpoint_id <= +? AND NOT (c.checkpoint_id = +? AND " +
		"(c.thread_id < +? OR (c.thread_id = +? AND c.checkpoint_ns <= +?)))"
}

func keysetArgs(fixedScope bool, k rowKey) []any {
	if fixedScope {
		return []any{k.id}
	}
	return []any{k.id, k.id, k.thread, k.thread, k.ns}
}
