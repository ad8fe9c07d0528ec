package sqlite

import (
	"cmp"
	"context"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/checkpointkit/checkpointkit/spec"
)

// A page of two or more checkpoints of one thread and namespace reads its
// channel values and pending writes with one statement that returns one
// TEXT column: every value and every write of the page, each after its
// lengths in decimal. go-sqlite3 copies each column it returns into an
// allocation of its own, rounded up to a size class, and boxes it in an
// interface; one column per page pays that once instead of once per value
// and per write (a 1,027-byte value took 1,152 bytes), and one statement
// replaces two. The strings of the tuples share the column, which nobody
// writes. (A single checkpoint, GetTuple's case, is cheaper to read with a
// probe and a range, loadContents.)
//
// The column is group_concat of one record per row:
//
//	value: v<key index>,<length>,<value>
//	write: w<tuple index>,<idx>,<task ID length>,<channel length>,<value length>,<task ID><channel><value>
//
// group_concat joins rows in the order they come, which SQLite does not
// promise; nothing depends on it: a value carries its key's index, a write
// its tuple's index and idx, and writes that come out of order are sorted
// (handOut).

// maxContentKeys bounds the values and maxContentTuples the checkpoints a
// contents statement reads; a larger page, or one spanning threads or
// namespaces, reads them as before (loadValueJoins, loadWrites).
const (
	maxContentKeys   = 64
	maxContentTuples = 64
)

// contentsSQL caches the contents statements by key and tuple count.
var contentsSQL [maxContentKeys + 1][maxContentTuples + 1]atomic.Pointer[string]

// contentsQuery returns the contents statement of nkeys value keys and
// ntuples checkpoints. Its parameters: ?1 thread, ?2 namespace, a channel
// and a version per key, then a checkpoint ID per tuple. Both parts are
// driven by their VALUES list, a key search each (TestContentsPlan).
// Comparisons with parameters are written "+?N" (see getByIDSQL).
func contentsQuery(nkeys, ntuples int) string {
	if p := contentsSQL[nkeys][ntuples].Load(); p != nil {
		return *p
	}
	var b strings.Builder
	b.WriteString(`SELECT coalesce(group_concat(r, ''), '') FROM (`)
	if nkeys > 0 {
		b.WriteString(`SELECT printf('v%d,%d,', k.column1, octet_length(b.value)) || coalesce(b.value, x'') AS r FROM (VALUES `)
		for i := range nkeys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d,?%d,?%d)", i, 3+2*i, 4+2*i)
		}
		b.WriteString(`) k CROSS JOIN blobs b ON b.thread_id = +?1 AND b.checkpoint_ns = +?2
		AND b.channel = k.column2 AND b.version = k.column3 AND b.kind = '` + kindValue + `'
	UNION ALL `)
	}
	b.WriteString(`SELECT ` + writeRecord("p.column1") + ` AS r FROM (VALUES `)
	for j := range ntuples {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "(%d,?%d)", j, 3+2*nkeys+j)
	}
	b.WriteString(`) p CROSS JOIN writes w ON w.thread_id = +?1 AND w.checkpoint_ns = +?2 AND w.checkpoint_id = p.column2)`)
	query := b.String()
	contentsSQL[nkeys][ntuples].Store(&query)
	return query
}

// writeRecord is the SQL expression of the record of write w (a row of
// writes) of the page's tuple at index tuple (an SQL expression), as
// contentsReader.read reads it.
func writeRecord(tuple string) string {
	return `printf('w%d,%d,%d,%d,%d,', ` + tuple + `, w.idx, octet_length(w.task_id), octet_length(w.channel), octet_length(w.value)) ||
		w.task_id || w.channel || coalesce(w.value, x'')`
}

// loadContentsAtOnce fills the values and writes of page, whose tuples are
// all of scope's thread and namespace, with one contents statement.
func (s *Saver) loadContentsAtOnce(ctx context.Context, q rowQuerier, page []*spec.Tuple, scope *rowKey, vs *valueSet, l *pageLoad) error {
	args := append(l.args[:0], l.box(scope.thread), l.box(scope.ns))
	for _, k := range vs.keys {
		args = append(args, l.box(k.channel), k.version)
	}
	for _, t := range page {
		args = append(args, t.Config.CheckpointID)
	}
	l.args = args
	var text string
	var data []byte
	err := q.queryRows(ctx, contentsQuery(len(vs.keys), len(page)), args, 1, func(cols []driver.Value) error {
		text, data = asString(cols[0]), columnBytes(cols[0])
		return errStop
	})
	if err != nil {
		return err
	}
	c := contentsReader{text: text, data: data}
	if err := c.read(s.serde, vs, page, l); err != nil {
		return err
	}
	if err := vs.assign(s.serde, page); err != nil {
		return err
	}
	c.handOut(page, l)
	return nil
}

// contentsReader reads the column of a contents statement. text and data
// are the same bytes.
type contentsReader struct {
	text string
	data []byte
	i    int
}

// num reads a decimal integer, optionally negative, and the ',' after it.
func (c *contentsReader) num() (int, bool) {
	t, i := c.text, c.i
	neg := i < len(t) && t[i] == '-'
	if neg {
		i++
	}
	start, n := i, 0
	for ; i < len(t) && i-start < 18; i++ {
		d := t[i] - '0'
		if d > 9 {
			break
		}
		n = n*10 + int(d)
	}
	if i == start || i >= len(t) || t[i] != ',' {
		return 0, false
	}
	c.i = i + 1
	if neg {
		return -n, true
	}
	return n, true
}

// take returns the next n bytes, or false when there are fewer.
func (c *contentsReader) take(n int) (int, bool) {
	if n < 0 || n > len(c.text)-c.i {
		return 0, false
	}
	start := c.i
	c.i += n
	return start, true
}

func (c *contentsReader) bad(what string) error {
	return fmt.Errorf("contents row: bad %s at byte %d of %d", what, c.i, len(c.text))
}

// pageWrite is a write read from a contents row, with what orders it.
type pageWrite struct {
	tuple int
	idx   int
	pw    spec.PendingWrite
}

// read reads every record: values into vs, writes into l.recs.
func (c *contentsReader) read(serde spec.Serde, vs *valueSet, page []*spec.Tuple, l *pageLoad) error {
	recs := l.recs[:0]
	defer func() { l.recs = recs }()
	for c.i < len(c.text) {
		tag := c.text[c.i]
		c.i++
		switch tag {
		case 'v':
			k, ok1 := c.num()
			n, ok2 := c.num()
			start, ok3 := c.take(n)
			if !ok1 || !ok2 || !ok3 || k < 0 || k >= len(vs.keys) {
				return c.bad("value")
			}
			vs.keep(serde, k, c.data[start:start+n:start+n])
		case 'w':
			tuple, ok1 := c.num()
			idx, ok2 := c.num()
			ntask, ok3 := c.num()
			nch, ok4 := c.num()
			nval, ok5 := c.num()
			if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || tuple < 0 || tuple >= len(page) || ntask < 0 || nch < 0 || nval < 0 {
				return c.bad("write")
			}
			start, ok := c.take(ntask + nch + nval)
			if !ok {
				return c.bad("write")
			}
			pw := spec.PendingWrite{TaskID: c.text[start : start+ntask], Channel: c.text[start+ntask : start+ntask+nch]}
			v := start + ntask + nch
			var err error
			if pw.Value, err = decodeOwned(serde, c.data[v:v+nval:v+nval]); err != nil {
				return fmt.Errorf("checkpoint %q write to %q: %w", page[tuple].Config.CheckpointID, pw.Channel, err)
			}
			recs = append(recs, pageWrite{tuple: tuple, idx: idx, pw: pw})
		default:
			c.i--
			return c.bad("record")
		}
	}
	return nil
}

// handOut hands each tuple of page its writes from l.recs, ordered by task
// ID and idx, in one new slice for the page.
func (c *contentsReader) handOut(page []*spec.Tuple, l *pageLoad) {
	recs := l.recs
	if len(recs) == 0 {
		return
	}
	if !slices.IsSortedFunc(recs, comparePageWrites) {
		slices.SortFunc(recs, comparePageWrites)
	}
	all := make([]spec.PendingWrite, len(recs))
	start := 0
	for i, r := range recs {
		all[i] = r.pw
		if i+1 == len(recs) || recs[i+1].tuple != r.tuple {
			// A full slice expression: appending to one tuple's writes
			// must not overwrite the next tuple's.
			page[r.tuple].PendingWrites = all[start : i+1 : i+1]
			start = i + 1
		}
	}
}

// comparePageWrites orders writes by tuple, then task ID and idx (the
// writes key's order).
func comparePageWrites(a, b pageWrite) int {
	if c := cmp.Compare(a.tuple, b.tuple); c != 0 {
		return c
	}
	if c := strings.Compare(a.pw.TaskID, b.pw.TaskID); c != 0 {
		return c
	}
	return cmp.Compare(a.idx, b.idx)
}

// loadTupleContents fills the values of a single tuple by probes and its
// writes from writes, the writesColumn its checkpoint row came with.
func (s *Saver) loadTupleContents(ctx context.Context, q rowQuerier, page []*spec.Tuple, writes driver.Value) error {
	l := pageLoads.Get().(*pageLoad)
	defer l.release()
	vs := l.values(page)
	if err := s.loadValues(ctx, q, page, vs, l); err != nil {
		return err
	}
	c := contentsReader{text: asString(writes), data: columnBytes(writes)}
	if err := c.read(s.serde, vs, page, l); err != nil {
		return err
	}
	c.handOut(page, l)
	return nil
}
