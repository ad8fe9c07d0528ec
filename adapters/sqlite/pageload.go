package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mattn/go-sqlite3"

	"github.com/checkpointkit/checkpointkit/spec"
)

// maxProbes is the most distinct values a page reads by primary-key
// probes, a statement each; a page with more reads them with one join
// (valuesJoin). A probe is the cheapest way to read one value (measured:
// 14 k instructions against 37 k for a list of one); from two values on,
// the join returns only an index and the value per row, with one
// statement (a go-sqlite3 rows object, a CGO crossing) for all of them.
var maxProbes = 1

// maxLinearKeys is the most keys a page looks up by linear search; beyond,
// it builds a map.
const maxLinearKeys = 16

// valueProbeSQL reads one stored value.
const valueProbeSQL = `SELECT value FROM blobs
	WHERE thread_id = +? AND checkpoint_ns = +? AND channel = +? AND version = +? AND kind = '` + kindValue + `'`

// writeColumns are the columns of a pending write: the lengths of the
// checkpoint ID, task ID and channel, then those three and the value as one
// TEXT column (SQLite's || copies the value's bytes as they are). The
// strings share it: one copy out of SQLite per write, and the names fill
// what the allocator would round the value up to anyway.
const writeColumns = `octet_length(checkpoint_id), octet_length(task_id), octet_length(channel),
	checkpoint_id || task_id || channel || coalesce(value, x'')`

// writesOrder is the order of a page's writes: by checkpoint, then task ID
// and index. The writes key's index gives it: no sort.
const writesOrder = ` ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx`

// writesRange selects the writes of a range of checkpoint IDs of one thread
// and namespace, in key order: one range of the key's index.
const writesRange = `SELECT ` + writeColumns + ` FROM writes
	WHERE thread_id = +? AND checkpoint_ns = +? AND checkpoint_id >= +? AND checkpoint_id <= +?` + writesOrder

// loadContents fills the channel values and pending writes of page. A
// page of two or more tuples of scope's thread and namespace, within the
// contents statement's bounds, is read by that one statement
// (loadContentsAtOnce), unless together they are too long for one SQLite
// string. Otherwise the values are read by a primary-key probe (up to
// maxProbes) or joins of up to maxKeysPerQuery keys, the writes as one
// range of the writes key when every tuple is of scope's thread and
// namespace (from the page's lowest checkpoint ID to its highest; writes
// of checkpoints in that range that the metadata filter left out of the
// page are skipped), IN lists otherwise.
func (s *Saver) loadContents(ctx context.Context, q rowQuerier, page []*spec.Tuple, scope *rowKey) error {
	l := pageLoads.Get().(*pageLoad)
	defer l.release()
	vs := l.values(page)
	if scope != nil && len(page) > 1 && len(vs.keys) <= maxContentKeys && len(page) <= maxContentTuples {
		err := s.loadContentsAtOnce(ctx, q, page, scope, vs, l)
		if !tooBig(err) {
			return err
		}
		// The page's values and writes together are longer than SQLite
		// lets one string be (SQLITE_LIMIT_LENGTH, a billion bytes by
		// default); nothing was read: read them apart.
	}
	if err := s.loadValues(ctx, q, page, vs, l); err != nil {
		return err
	}
	ws := l.writes(page)
	ws.all = make([]spec.PendingWrite, 0, 2*len(page))
	if err := s.loadWrites(ctx, q, ws, scope, l); err != nil {
		return err
	}
	ws.finish()
	return nil
}

// loadValues reads the values of vs, a primary-key probe each (up to
// maxProbes) or joins of up to maxKeysPerQuery keys, and gives page's
// tuples theirs.
func (s *Saver) loadValues(ctx context.Context, q rowQuerier, page []*spec.Tuple, vs *valueSet, l *pageLoad) error {
	load := s.loadValueProbes
	if len(vs.keys) > maxProbes {
		load = s.loadValueJoins
	}
	if err := load(ctx, q, vs, l); err != nil {
		return err
	}
	return vs.assign(s.serde, page)
}

// blobKey identifies a stored channel value.
type blobKey struct{ thread, ns, channel, version string }

// valueSet holds the distinct values of a page: found by a linear search
// while they are few (no map to fill), by a map beyond. A value is kept
// decoded when it is immutable (shared by every tuple of the page),
// encoded otherwise (decoded per tuple).
type valueSet struct {
	keys  []blobKey
	pos   map[blobKey]int
	byMap bool // pos is in use
	vals  []storedValue
	refs  []valueRef // each channel of each tuple, as values found them
}

// valueRef is channel ch of the tuple at index tuple of the page, whose
// value is key i of the set.
type valueRef struct {
	tuple int
	ch    string
	i     int
}

type storedValue struct {
	data  []byte
	plain any
	state uint8 // 0 absent, 1 encoded in data, 2 decoded in plain
}

// values returns l's value set, filled with the distinct keys of page.
func (l *pageLoad) values(page []*spec.Tuple) *valueSet {
	v := &l.vs
	for ti, t := range page {
		for ch, ver := range t.Checkpoint.ChannelVersions {
			k := blobKey{t.Config.ThreadID, t.Config.Namespace, ch, string(ver)}
			if i := v.find(k); i >= 0 {
				v.refs = append(v.refs, valueRef{ti, ch, i})
				continue
			}
			v.refs = append(v.refs, valueRef{ti, ch, len(v.keys)})
			v.keys = append(v.keys, k)
			switch {
			case v.byMap:
				v.pos[k] = len(v.keys) - 1
			case len(v.keys) > maxLinearKeys:
				if v.pos == nil {
					v.pos = make(map[blobKey]int, 2*len(v.keys))
				}
				v.byMap = true
				for i, k := range v.keys {
					v.pos[k] = i
				}
			}
		}
	}
	v.vals = slices.Grow(v.vals[:0], len(v.keys))[:len(v.keys)]
	return v
}

func (v *valueSet) find(k blobKey) int {
	if v.byMap {
		if i, ok := v.pos[k]; ok {
			return i
		}
		return -1
	}
	for i := range v.keys {
		if v.keys[i] == k {
			return i
		}
	}
	return -1
}

// keep stores the value of key i, read into data (owned).
func (v *valueSet) keep(serde spec.Serde, i int, data []byte) {
	if i < 0 || i >= len(v.vals) {
		return
	}
	if p, ok := immutableOwned(serde, data); ok {
		v.vals[i] = storedValue{plain: p, state: 2}
	} else {
		v.vals[i] = storedValue{data: data, state: 1}
	}
}

// assign fills the channel values of page.
func (v *valueSet) assign(serde spec.Serde, page []*spec.Tuple) error {
	for _, r := range v.refs {
		t := page[r.tuple]
		switch sv := v.vals[r.i]; sv.state {
		case 2:
			t.Checkpoint.ChannelValues[r.ch] = sv.plain
		case 1:
			// Decoded per tuple: tuples must not share mutable values
			// (their strings may share data, which nobody writes).
			val, err := decodeOwned(serde, sv.data)
			if err != nil {
				return fmt.Errorf("checkpoint %q channel %q: %w", t.Config.CheckpointID, r.ch, err)
			}
			t.Checkpoint.ChannelValues[r.ch] = val
		}
	}
	return nil
}

// loadValueProbes reads the values of vs with one primary-key probe each.
func (s *Saver) loadValueProbes(ctx context.Context, q rowQuerier, vs *valueSet, l *pageLoad) error {
	args := slices.Grow(l.args[:0], 4)[:4]
	defer func() { l.args = args }()
	for i, k := range vs.keys {
		args[0], args[1], args[2], args[3] = l.box(k.thread), l.box(k.ns), l.box(k.channel), k.version
		err := q.queryRows(ctx, valueProbeSQL, args, 1, func(cols []driver.Value) error {
			vs.keep(s.serde, i, columnBytes(cols[0]))
			return errStop // one row at most: no step to the end
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// valuesJoinSQL caches valuesJoin's statements by key count.
var valuesJoinSQL [maxKeysPerQuery + 1]atomic.Pointer[string]

// valuesJoin returns the statement that reads the values of n keys, each
// bound as (thread, namespace, channel, version): a row per value found,
// the key's position (0 to n-1) and the value. The keys drive the join
// (CROSS JOIN: SQLite does not reorder it), each a search of the blobs
// key (TestValuesJoinPlan).
func valuesJoin(n int) string {
	if p := valuesJoinSQL[n].Load(); p != nil {
		return *p
	}
	var b strings.Builder
	b.WriteString(`SELECT k.column1, b.value FROM (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "(%d,?,?,?,?)", i)
	}
	b.WriteString(`) k CROSS JOIN blobs b ON b.thread_id = k.column2 AND b.checkpoint_ns = k.column3
		AND b.channel = k.column4 AND b.version = k.column5 AND b.kind = '` + kindValue + `'`)
	query := b.String()
	valuesJoinSQL[n].Store(&query)
	return query
}

// loadValueJoins reads the values of vs with valuesJoin statements.
func (s *Saver) loadValueJoins(ctx context.Context, q rowQuerier, vs *valueSet, l *pageLoad) error {
	for start := 0; start < len(vs.keys); start += maxKeysPerQuery {
		chunk := vs.keys[start:min(start+maxKeysPerQuery, len(vs.keys))]
		args := l.args[:0]
		for _, k := range chunk {
			args = append(args, l.box(k.thread), l.box(k.ns), l.box(k.channel), k.version)
		}
		l.args = args
		err := q.queryRows(ctx, valuesJoin(len(chunk)), args, 2, func(cols []driver.Value) error {
			j := asInt(cols[0])
			if j < 0 || j >= len(chunk) {
				return fmt.Errorf("value row: key %v of %d", cols[0], len(chunk))
			}
			vs.keep(s.serde, start+j, columnBytes(cols[1]))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// writeSet collects the pending writes of a page, in the order read (by
// checkpoint, then task ID and index) into one slice: each tuple's writes
// are one run of it.
type writeSet struct {
	page  []*spec.Tuple
	byKey map[rowKey]int // for large pages; small ones are searched
	all   []spec.PendingWrite
	runs  []writeRun
}

type writeRun struct{ tuple, start int }

// writes returns l's write set for page, ready for lookup, with no
// writes slice yet (the tuples keep it: the caller makes a new one).
func (l *pageLoad) writes(page []*spec.Tuple) *writeSet {
	w := &l.ws
	w.page = page
	w.runs = slices.Grow(w.runs[:0], len(page))
	if len(page) > maxLinearKeys {
		if w.byKey == nil {
			w.byKey = make(map[rowKey]int, len(page))
		}
		for i, t := range page {
			w.byKey[rowKey{t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID}] = i
		}
	}
	return w
}

// idRange returns the lowest and highest checkpoint ID of the page.
func (w *writeSet) idRange() (lo, hi string) {
	lo, hi = w.page[0].Config.CheckpointID, w.page[0].Config.CheckpointID
	for _, t := range w.page {
		lo, hi = min(lo, t.Config.CheckpointID), max(hi, t.Config.CheckpointID)
	}
	return lo, hi
}

func (w *writeSet) lookup(k rowKey) int {
	if len(w.page) > maxLinearKeys {
		if i, ok := w.byKey[k]; ok {
			return i
		}
		return -1
	}
	for i, t := range w.page {
		if t.Config.CheckpointID == k.id && t.Config.ThreadID == k.thread && t.Config.Namespace == k.ns {
			return i
		}
	}
	return -1
}

// add records a write row (writeColumns) of thread and namespace k.
func (w *writeSet) add(serde spec.Serde, k rowKey, cols []driver.Value) error {
	row := asString(cols[3])
	nid, ntask, nch := asInt(cols[0]), asInt(cols[1]), asInt(cols[2])
	if nid < 0 || ntask < 0 || nch < 0 || nid+ntask+nch > len(row) {
		return fmt.Errorf("write row: bad lengths %d, %d, %d of %d bytes", nid, ntask, nch, len(row))
	}
	k.id = row[:nid]
	i := w.lookup(k)
	if i < 0 {
		return nil // in the range, not in the page
	}
	names := nid + ntask + nch
	pw := spec.PendingWrite{TaskID: row[nid : nid+ntask], Channel: row[nid+ntask : names]}
	var err error
	if pw.Value, err = decodeOwned(serde, columnBytes(cols[3])[names:]); err != nil {
		return fmt.Errorf("checkpoint %q write to %q: %w", k.id, pw.Channel, err)
	}
	if len(w.runs) == 0 || w.runs[len(w.runs)-1].tuple != i {
		w.runs = append(w.runs, writeRun{i, len(w.all)})
	}
	w.all = append(w.all, pw)
	return nil
}

// finish hands each tuple its run of the writes.
func (w *writeSet) finish() {
	for j, r := range w.runs {
		end := len(w.all)
		if j+1 < len(w.runs) {
			end = w.runs[j+1].start
		}
		// A full slice expression: appending to one tuple's writes must
		// not overwrite the next tuple's.
		w.page[r.tuple].PendingWrites = w.all[r.start:end:end]
	}
}

// loadWrites reads the writes of ws's page: one key range of scope's thread
// and namespace, or IN (VALUES ...) lists when the page spans threads or
// namespaces.
func (s *Saver) loadWrites(ctx context.Context, q rowQuerier, ws *writeSet, scope *rowKey, l *pageLoad) error {
	if scope != nil {
		lo, hi := ws.idRange()
		k := rowKey{thread: scope.thread, ns: scope.ns}
		args := append(l.args[:0], l.box(scope.thread), l.box(scope.ns), l.box(lo), l.box(hi))
		l.args = args
		return q.queryRows(ctx, writesRange, args, 4, func(cols []driver.Value) error {
			return ws.add(s.serde, k, cols)
		})
	}
	for start := 0; start < len(ws.page); start += maxKeysPerQuery {
		chunk := ws.page[start:min(start+maxKeysPerQuery, len(ws.page))]
		args := l.args[:0]
		for _, t := range chunk {
			args = append(args, t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID)
		}
		l.args = args
		err := q.queryRows(ctx, `SELECT `+writeColumns+`, thread_id, checkpoint_ns
			FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (VALUES `+placeholders(len(chunk), 3)+`)`+writesOrder,
			args, 6, func(cols []driver.Value) error {
				return ws.add(s.serde, rowKey{thread: asString(cols[4]), ns: asString(cols[5])}, cols)
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// tooBig reports whether err is SQLite's "string or blob too big".
func tooBig(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrTooBig
}
