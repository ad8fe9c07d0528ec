package postgres

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// GetTuple implements [spec.Saver]: with a checkpoint ID, that checkpoint;
// without, the greatest ID of the thread and namespace (an index range scan
// read backwards, one row).
func (s *Saver) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	if err := spec.ValidateGetTuple(cfg); err != nil {
		return nil, err
	}
	opts := spec.ListOptions{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cfg.CheckpointID, Limit: 1}
	for t, err := range s.list(ctx, "get tuple", opts) {
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("postgres: get tuple (thread %q, namespace %q, checkpoint %q): %w",
		cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, spec.ErrNotFound)
}

// listPlan is a List call compiled to SQL: the scope and filter conditions
// with their parameters, to which each page adds its cursor and limit.
type listPlan struct {
	base      sqlBuilder
	oneScope  bool // a single (thread, namespace): the cursor is the ID alone
	remaining int  // 0: unlimited
	shape     pageShape
}

// pageShape determines the text of a page statement: which conditions it
// has, in order, and its limit. Arguments do not change the text.
type pageShape struct {
	thread, ns, id, before bool
	filterKeys             int
	cursor                 int8 // 0: first page, 1: by ID, 2: by ID, thread and namespace
	limit                  int
}

// maxCachedPageSQL bounds the page statements a saver keeps the text of.
const maxCachedPageSQL = 256

// pageSQLCache keeps page statement texts by shape, so that a read does
// not build its SQL again.
type pageSQLCache struct {
	mu sync.Mutex
	m  map[pageShape]string
}

func (c *pageSQLCache) get(k pageShape) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sql, ok := c.m[k]
	return sql, ok
}

func (c *pageSQLCache) put(k pageShape, sql string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[pageShape]string)
	}
	if len(c.m) < maxCachedPageSQL {
		c.m[k] = sql
	}
}

// planList compiles opts. Filter keys and values become parameters; see
// filterJSON for how jsonb equality is made to match spec.Equal.
func (s *Saver) planList(opts spec.ListOptions) (*listPlan, error) {
	if err := spec.ValidateList(opts); err != nil {
		return nil, err
	}
	p := &listPlan{remaining: opts.Limit}
	b := &p.base
	if opts.ThreadID != "" {
		b.cond("c.thread_id = " + b.arg(opts.ThreadID))
	}
	if !opts.AllNamespaces {
		b.cond("c.checkpoint_ns = " + b.arg(opts.Namespace))
	}
	p.oneScope = opts.ThreadID != "" && !opts.AllNamespaces
	p.shape = pageShape{thread: opts.ThreadID != "", ns: !opts.AllNamespaces,
		id: opts.CheckpointID != "", before: opts.Before != ""}
	if opts.CheckpointID != "" {
		b.cond("c.checkpoint_id = " + b.arg(opts.CheckpointID))
	}
	if opts.Before != "" {
		b.cond("c.checkpoint_id < " + b.arg(opts.Before))
	}
	if len(opts.Filter) > 0 {
		f, err := spec.NormalizeFilter(opts.Filter)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(f))
		for k := range f {
			keys = append(keys, k)
		}
		slices.Sort(keys) // stable SQL text for the statement cache
		for _, k := range keys {
			val, err := filterJSON(f[k])
			if err != nil {
				return nil, fmt.Errorf("list: filter %q: %w", k, err)
			}
			kp := b.arg(escapeNUL(k))
			b.filter = append(b.filter, "c.metadata ? "+kp+"::text AND c.metadata -> "+kp+"::text = "+b.arg(string(val))+"::jsonb")
		}
		p.shape.filterKeys = len(b.filter)
	}
	return p, nil
}

// cursor is the sort key of the last row of a page.
type cursor struct{ thread, ns, id string }

// pageSQL returns the statement and arguments of the page after cur (nil
// for the first page), holding at most n rows.
func (s *Saver) pageSQL(p *listPlan, cur *cursor, n int) (string, []any) {
	shape := p.shape
	shape.limit = n
	var args []any
	switch {
	case cur == nil:
		args = p.base.args
	case p.oneScope:
		shape.cursor = 1
		args = append(slices.Clip(p.base.args), cur.id)
	default:
		shape.cursor = 2
		args = append(slices.Clip(p.base.args), cur.id, cur.thread, cur.ns)
	}
	if sql, ok := s.pageSQLs.get(shape); ok {
		return sql, args
	}
	sql, built := s.buildPageSQL(p, cur, n)
	if len(built) != len(args) {
		panic("postgres: page statement arguments out of step") // a bug in pageSQL
	}
	s.pageSQLs.put(shape, sql)
	return sql, args
}

// buildPageSQL builds the statement and arguments of the page after cur
// (nil for the first page), holding at most n rows.
func (s *Saver) buildPageSQL(p *listPlan, cur *cursor, n int) (string, []any) {
	b := sqlBuilder{where: slices.Clone(p.base.where), filter: p.base.filter, args: slices.Clone(p.base.args)}
	if cur != nil {
		if p.oneScope {
			b.cond("c.checkpoint_id < " + b.arg(cur.id))
		} else {
			// checkpoint_id <= bounds the index scan; the rest breaks ties
			// (thread and namespace ascending) within the last ID.
			id := b.arg(cur.id)
			b.cond("c.checkpoint_id <= " + id + " AND (c.checkpoint_id < " + id +
				" OR (c.thread_id, c.checkpoint_ns) > (" + b.arg(cur.thread) + "::text, " + b.arg(cur.ns) + "::text))")
		}
	}
	conds := b.where
	if len(b.filter) > 0 {
		// The CASE makes the planner estimate the filter as matching half
		// the rows, as it does for any opaque boolean. Left as plain
		// jsonb comparisons, each key was estimated at 0.5 %, a two-key
		// filter at "almost nothing", and the planner preferred filtering
		// and sorting the whole thread to reading it in index order until
		// the page is full: 250 ms instead of 1 ms at 10,000 checkpoints.
		conds = append(slices.Clip(conds), "CASE WHEN "+strings.Join(b.filter, "\n\tAND ")+" THEN true ELSE false END")
	}
	inner := s.q.pageInner + whereSQL(conds) +
		"\nORDER BY c.checkpoint_id DESC, c.thread_id, c.checkpoint_ns\nLIMIT " + strconv.Itoa(n)
	return s.q.pageHead + inner + s.q.pageTail, b.args
}

// List implements [spec.Saver]. It streams in pages of growing size (10,
// 20, 40, ... up to [WithListPageSize]) or of the remaining limit. Each page
// is one statement returning checkpoints with their values and pending
// writes, read completely so that the connection goes back to the pool
// before the caller sees a tuple: a caller that stops early costs at most
// the rest of one page, and never holds a connection while it works. Pages
// continue from the last sort key (keyset pagination), so each is an index
// range scan however deep the history is. The returned sequence may be
// iterated more than once; each iteration queries afresh.
func (s *Saver) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return s.list(ctx, "list", opts)
}

func (s *Saver) list(ctx context.Context, op string, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		p, err := s.planList(opts)
		if err != nil {
			yield(nil, err)
			return
		}
		var cur *cursor
		for pageNo := 0; ; pageNo++ {
			n := s.pageLen(pageNo, p.remaining)
			page, err := s.fetchPage(ctx, p, cur, n)
			if err != nil {
				yield(nil, wrapErr(ctx, op, opts.ThreadID, err))
				return
			}
			for _, t := range page.tuples {
				if !yield(t, nil) {
					return
				}
			}
			if page.err != nil {
				yield(nil, fmt.Errorf("postgres: %s (thread %q): %w", op, page.errThread, page.err))
				return
			}
			if p.remaining > 0 {
				p.remaining -= len(page.tuples)
				if p.remaining == 0 {
					return
				}
			}
			if len(page.tuples) < n {
				return
			}
			last := page.tuples[len(page.tuples)-1].Config
			cur = &cursor{thread: last.ThreadID, ns: last.Namespace, id: last.CheckpointID}
		}
	}
}

// firstPage is the size of the first page of an unlimited List; each
// following page doubles, up to the configured page size. A caller that
// wants only the newest few checkpoints then pays for few rows, and one that
// reads everything needs only a handful of extra round trips.
const firstPage = 10

// pageLen returns the size of page pageNo (from 0) when remaining results
// are still wanted (0: unlimited).
func (s *Saver) pageLen(pageNo, remaining int) int {
	n := s.pageSize
	if pageNo < 8 { // avoid overflowing the shift; 10<<8 is past any sane page size
		n = min(n, firstPage<<pageNo)
	}
	if remaining > 0 {
		n = min(n, remaining)
	}
	return n
}

// fetchPage reads one page, again on a fresh connection when the
// connection was lost (a page is one read, safe to repeat).
func (s *Saver) fetchPage(ctx context.Context, p *listPlan, cur *cursor, n int) (page, error) {
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	sql, args := s.pageSQL(p, cur, n)
	var pg page
	err := s.retryLost(ctx, func() error {
		var err error
		pg, err = s.queryPage(ctx, sql, args, n)
		return err
	})
	return pg, err
}

// page is one page of a List: its tuples in list order and, when a row
// could not be decoded, the error, which comes after the tuples before it.
type page struct {
	tuples    []*spec.Tuple
	err       error
	errThread string
}

// queryPage runs one page statement and reads its rows completely, decoding
// each as it arrives.
func (s *Saver) queryPage(ctx context.Context, sql string, args []any, n int) (page, error) {
	rows, err := s.pool.Query(ctx, sql, s.args(args...)...)
	if err != nil {
		return page{}, err
	}
	defer rows.Close()
	pg := page{tuples: make([]*spec.Tuple, 0, n)}
	add := func(r *rawTuple) {
		if pg.err != nil {
			return
		}
		t, err := s.decodeTuple(r)
		if err != nil {
			pg.err, pg.errThread = err, strings.Clone(r.thread)
			return
		}
		pg.tuples = append(pg.tuples, t)
	}
	if binaryPage(rows) {
		a := arena{expected: n}
		for rows.Next() {
			r, err := readRawRow(rows.RawValues(), &a)
			if err != nil {
				return page{}, err
			}
			add(&r)
		}
	} else {
		for rows.Next() {
			var (
				thread, ns, id                       string
				parent                               *string
				checkpoint, metadata                 []byte
				blobChannels, taskIDs, writeChannels []string
				blobValues, writeValues              [][]byte
				writeIdx                             []int32
			)
			if err := rows.Scan(&thread, &ns, &id, &parent, &checkpoint, &metadata,
				&blobChannels, &blobValues, &taskIDs, &writeIdx, &writeChannels, &writeValues); err != nil {
				return page{}, err
			}
			r := rawFromScan(thread, ns, id, parent, checkpoint, metadata,
				blobChannels, blobValues, taskIDs, writeIdx, writeChannels, writeValues)
			add(&r)
		}
	}
	if err := rows.Err(); err != nil {
		return page{}, err
	}
	sortPage(pg.tuples)
	return pg, nil
}

// decodeTuple decodes one row. Its strings and values share the row's
// memory (see rawTuple).
func (s *Saver) decodeTuple(r *rawTuple) (*spec.Tuple, error) {
	cp, err := parseRecord(r.id, r.checkpoint)
	if err != nil {
		return nil, err
	}
	nw := r.taskIDs.len()
	if r.blobChannels.len() != r.blobValues.len() || r.writeIdx.len() != nw || r.writeChannels.len() != nw || r.writeValues.len() != nw {
		return nil, errors.New("malformed row: array lengths differ")
	}
	cp.ChannelValues = make(map[string]any, r.blobChannels.len())
	chs, vals := r.blobChannels.cursor(), r.blobValues.cursor()
	for range r.blobChannels.len() {
		ch := str(chs.next())
		v, err := decodeOwned(s.serde, vals.next())
		if err != nil {
			return nil, fmt.Errorf("checkpoint %q channel %q: %w", r.id, ch, err)
		}
		cp.ChannelValues[ch] = v
	}
	mdm, err := parseExactMetadata(r.metadata, s.serde)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %q metadata: %w", r.id, err)
	}
	type tupleAndParent struct {
		t spec.Tuple
		p spec.Config
	}
	tp := &tupleAndParent{t: spec.Tuple{
		Config:     spec.Config{ThreadID: r.thread, Namespace: r.ns, CheckpointID: r.id},
		Checkpoint: cp,
		Metadata:   spec.Metadata(mdm),
	}}
	t := &tp.t
	if r.hasParent {
		tp.p = spec.Config{ThreadID: r.thread, Namespace: r.ns, CheckpointID: r.parent}
		t.Parent = &tp.p
	}
	t.PendingWrites = make([]spec.PendingWrite, nw)
	tasks, wchs, wvals := r.taskIDs.cursor(), r.writeChannels.cursor(), r.writeValues.cursor()
	for i := range nw {
		w := &t.PendingWrites[i]
		w.TaskID, w.Channel = str(tasks.next()), str(wchs.next())
		if w.Value, err = decodeOwned(s.serde, wvals.next()); err != nil {
			return nil, fmt.Errorf("checkpoint %q write %d: %w", r.id, i, err)
		}
	}
	if nw > 1 && !writesSorted(t.PendingWrites, &r.writeIdx) {
		sortWrites(t.PendingWrites, r.writeIdx.int32s(nil))
	}
	return t, nil
}

// writesSorted reports whether writes are in key order (task ID, then
// index; idx holds their indexes), as the statement reads them.
func writesSorted(writes []spec.PendingWrite, idx *pgArray) bool {
	c := idx.cursor()
	prev := int32(binary.BigEndian.Uint32(c.next()))
	for i := 1; i < len(writes); i++ {
		cur := int32(binary.BigEndian.Uint32(c.next()))
		if writes[i].TaskID < writes[i-1].TaskID || writes[i].TaskID == writes[i-1].TaskID && cur < prev {
			return false
		}
		prev = cur
	}
	return true
}

// sortWrites puts writes in key order (task ID, then index; idx[i] is the
// index of writes[i]).
func sortWrites(writes []spec.PendingWrite, idx []int32) {
	compare := func(a, b int) int {
		if c := cmp.Compare(writes[a].TaskID, writes[b].TaskID); c != 0 {
			return c
		}
		return cmp.Compare(idx[a], idx[b])
	}
	order := make([]int, len(writes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, compare)
	out := make([]spec.PendingWrite, len(writes))
	for i, j := range order {
		out[i] = writes[j]
	}
	copy(writes, out)
}
