package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/checkpointkit/checkpointkit/spec"
)

// maxProbes is the most distinct values a page reads by primary-key
// probes, a statement each; a page with more reads them through
// IN (VALUES ...) lists. (Measured: ten probes cost the same instructions
// as one list of ten, one probe 14 k against 37 k for a list of one; ten
// probes and the writes joined by UNION ALL into one statement cost 8 %
// more than eleven statements, and a GetTuple's one probe and writes as
// one statement saved under 2 %.)
var maxProbes = 16

// valueProbeSQL reads one stored value.
const valueProbeSQL = `SELECT value FROM blobs
	WHERE thread_id = +? AND checkpoint_ns = +? AND channel = +? AND version = +? AND kind = '` + kindValue + `'`

// writeColumns are the columns of a pending write: the lengths of the
// checkpoint and task IDs, then those IDs and the channel as one text
// column (the strings share it: one string per row from the driver instead
// of three), and the value.
const writeColumns = `octet_length(checkpoint_id), octet_length(task_id), checkpoint_id || task_id || channel, value`

// writesOrder is the order of a page's writes: by checkpoint, then task ID
// and index. The writes key's index gives it: no sort.
const writesOrder = ` ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx`

// writesRange selects the writes of a range of checkpoint IDs of one thread
// and namespace, in key order: one range of the key's index.
const writesRange = `SELECT ` + writeColumns + ` FROM writes
	WHERE thread_id = +? AND checkpoint_ns = +? AND checkpoint_id >= +? AND checkpoint_id <= +?` + writesOrder

// loadContents fills the channel values and pending writes of page: the
// values by a primary-key probe each (up to maxProbes) or IN (VALUES ...)
// lists, the writes as one range of the writes key when every tuple is of
// scope's thread and namespace (from the page's lowest checkpoint ID to
// its highest; writes of checkpoints in that range that the metadata
// filter left out of the page are skipped), IN lists otherwise.
func (s *Saver) loadContents(ctx context.Context, q rowQuerier, page []*spec.Tuple, scope *rowKey) error {
	vs := newValueSet(page)
	load := s.loadValueProbes
	if len(vs.keys) > maxProbes {
		load = s.loadValueLists
	}
	if err := load(ctx, q, vs); err != nil {
		return err
	}
	if err := vs.assign(s.serde, page); err != nil {
		return err
	}
	ws := newWriteSet(page)
	if err := s.loadWrites(ctx, q, ws, scope); err != nil {
		return err
	}
	ws.finish()
	return nil
}

// blobKey identifies a stored channel value.
type blobKey struct{ thread, ns, channel, version string }

// valueSet holds the distinct values of a page: found by a linear search
// while they are few (no map to allocate), by a map beyond. A value is
// kept decoded when it is immutable (shared by every tuple of the page),
// encoded otherwise (decoded per tuple).
type valueSet struct {
	keys []blobKey
	pos  map[blobKey]int
	vals []storedValue
}

type storedValue struct {
	data  []byte
	plain any
	state uint8 // 0 absent, 1 encoded in data, 2 decoded in plain
}

func newValueSet(page []*spec.Tuple) *valueSet {
	n := 0
	for _, t := range page {
		n += len(t.Checkpoint.ChannelVersions)
	}
	v := &valueSet{keys: make([]blobKey, 0, n)}
	for _, t := range page {
		for ch, ver := range t.Checkpoint.ChannelVersions {
			k := blobKey{t.Config.ThreadID, t.Config.Namespace, ch, string(ver)}
			if v.find(k) >= 0 {
				continue
			}
			v.keys = append(v.keys, k)
			switch {
			case v.pos != nil:
				v.pos[k] = len(v.keys) - 1
			case len(v.keys) > maxProbes:
				v.pos = make(map[blobKey]int, 2*len(v.keys))
				for i, k := range v.keys {
					v.pos[k] = i
				}
			}
		}
	}
	v.vals = make([]storedValue, len(v.keys))
	return v
}

func (v *valueSet) find(k blobKey) int {
	if v.pos != nil {
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
	for _, t := range page {
		for ch, ver := range t.Checkpoint.ChannelVersions {
			i := v.find(blobKey{t.Config.ThreadID, t.Config.Namespace, ch, string(ver)})
			switch sv := v.vals[i]; sv.state {
			case 2:
				t.Checkpoint.ChannelValues[ch] = sv.plain
			case 1:
				// Decoded per tuple: tuples must not share mutable values.
				val, err := serde.Decode(sv.data)
				if err != nil {
					return fmt.Errorf("checkpoint %q channel %q: %w", t.Config.CheckpointID, ch, err)
				}
				t.Checkpoint.ChannelValues[ch] = val
			}
		}
	}
	return nil
}

// loadValueProbes reads the values of vs with one primary-key probe each.
func (s *Saver) loadValueProbes(ctx context.Context, q rowQuerier, vs *valueSet) error {
	var args [4]any
	for i, k := range vs.keys {
		// The thread and namespace are boxed once per run of keys that
		// share them (a whole page of one thread).
		if i == 0 || k.thread != vs.keys[i-1].thread || k.ns != vs.keys[i-1].ns {
			args[0], args[1] = k.thread, k.ns
		}
		args[2], args[3] = k.channel, k.version
		err := q.queryRows(ctx, valueProbeSQL, args[:], 1, func(cols []driver.Value) error {
			data, _ := cols[0].([]byte)
			vs.keep(s.serde, i, data)
			return errStop // one row at most: no step to the end
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// loadValueLists reads the values of vs with IN (VALUES ...) lists.
func (s *Saver) loadValueLists(ctx context.Context, q rowQuerier, vs *valueSet) error {
	for start := 0; start < len(vs.keys); start += maxKeysPerQuery {
		chunk := vs.keys[start:min(start+maxKeysPerQuery, len(vs.keys))]
		args := make([]any, 0, 4*len(chunk))
		for _, k := range chunk {
			args = append(args, k.thread, k.ns, k.channel, k.version)
		}
		err := q.queryRows(ctx, `SELECT thread_id, checkpoint_ns, channel, version, value FROM blobs
			WHERE kind = '`+kindValue+`' AND (thread_id, checkpoint_ns, channel, version) IN (VALUES `+
			placeholders(len(chunk), 4)+`)`, args, 5, func(cols []driver.Value) error {
			data, _ := cols[4].([]byte)
			vs.keep(s.serde, vs.find(blobKey{asString(cols[0]), asString(cols[1]), asString(cols[2]), asString(cols[3])}), data)
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

func newWriteSet(page []*spec.Tuple) *writeSet {
	w := &writeSet{page: page, all: make([]spec.PendingWrite, 0, 2*len(page))}
	if len(page) > maxProbes {
		w.byKey = make(map[rowKey]int, len(page))
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
	if w.byKey != nil {
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
	names := asString(cols[2])
	nid, ntask := asInt(cols[0]), asInt(cols[1])
	if nid < 0 || ntask < 0 || nid+ntask > len(names) {
		return fmt.Errorf("write row: bad lengths %d, %d of %d bytes", nid, ntask, len(names))
	}
	k.id = names[:nid]
	i := w.lookup(k)
	if i < 0 {
		return nil // in the range, not in the page
	}
	pw := spec.PendingWrite{TaskID: names[nid : nid+ntask], Channel: names[nid+ntask:]}
	data, _ := cols[3].([]byte)
	var err error
	if pw.Value, err = decodeOwned(serde, data); err != nil {
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
func (s *Saver) loadWrites(ctx context.Context, q rowQuerier, ws *writeSet, scope *rowKey) error {
	if scope != nil {
		lo, hi := ws.idRange()
		k := rowKey{thread: scope.thread, ns: scope.ns}
		return q.queryRows(ctx, writesRange, []any{scope.thread, scope.ns, lo, hi}, 4, func(cols []driver.Value) error {
			return ws.add(s.serde, k, cols)
		})
	}
	for start := 0; start < len(ws.page); start += maxKeysPerQuery {
		chunk := ws.page[start:min(start+maxKeysPerQuery, len(ws.page))]
		args := make([]any, 0, 3*len(chunk))
		for _, t := range chunk {
			args = append(args, t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID)
		}
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
