package postgres

import (
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The page statement's columns, in order: see queries.pageOuter.
const (
	colThread = iota
	colNS
	colID
	colParent
	colCheckpoint
	colMetadata
	colBlobChannels
	colBlobValues
	colTaskIDs
	colWriteIdx
	colWriteChannels
	colWriteValues
	pageColumns
)

// pageColumnOIDs are the types of the page statement's columns.
var pageColumnOIDs = [pageColumns]uint32{
	pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.ByteaOID, pgtype.ByteaOID,
	pgtype.TextArrayOID, pgtype.ByteaArrayOID, pgtype.TextArrayOID, pgtype.Int4ArrayOID, pgtype.TextArrayOID, pgtype.ByteaArrayOID,
}

// rawTuple is one row of a page, in memory the page owns: every string
// and byte slice in it shares the page's buffers, which nothing ever writes
// again, so decoded strings may share them too. The array columns stay in
// their binary form (see pgArray) and are read in place.
type rawTuple struct {
	thread, ns, id string
	parent         string
	hasParent      bool
	checkpoint     []byte
	metadata       []byte
	blobChannels   pgArray
	blobValues     pgArray
	taskIDs        pgArray
	writeIdx       pgArray
	writeChannels  pgArray
	writeValues    pgArray
}

// binaryPage reports whether rows come in the formats readRawRow reads:
// binary, as pgx asks for them in every query mode but the simple
// protocol, or text for text columns.
func binaryPage(rows pgx.Rows) bool {
	fds := rows.FieldDescriptions()
	if len(fds) != pageColumns {
		return false
	}
	for i, fd := range fds {
		if fd.DataTypeOID != pageColumnOIDs[i] {
			return false
		}
		// text is the same bytes in both formats, and pgx asks for it as
		// text.
		if fd.Format != pgtype.BinaryFormatCode && fd.DataTypeOID != pgtype.TextOID {
			return false
		}
	}
	return true
}

// errMalformedRow reports a page row that is not what the statement returns.
var errMalformedRow = errors.New("malformed page row")

// arena hands out the memory rows are copied into: a row goes into the
// current chunk when it fits, else into a new chunk sized for the rows
// still expected (like the row just read, at most arenaChunk bytes unless
// the row alone is larger), so that a page of similar rows costs one
// allocation with little waste. A tuple kept by a caller keeps its chunk
// alive: at most arenaChunk bytes, or its own row.
type arena struct {
	buf      []byte
	expected int // rows still expected in the page
}

// arenaChunk bounds a chunk made for several rows.
const arenaChunk = 64 << 10

func (a *arena) alloc(size int) []byte {
	if cap(a.buf)-len(a.buf) < size {
		n := size
		if a.expected > 1 {
			n = max(size, min(size*a.expected, arenaChunk))
		}
		a.buf = make([]byte, 0, n)
	}
	a.expected--
	start := len(a.buf)
	a.buf = a.buf[:start+size]
	return a.buf[start : start+size : start+size]
}

// readRawRow reads the current row, whose forms are: text and bytea their
// bytes, an array as pgArray reads it. What the tuple keeps (every column
// but the write indexes, arrays without their headers) is copied into the
// arena; the write indexes stay in raw, valid until the next row.
func readRawRow(raw [][]byte, a *arena) (rawTuple, error) {
	var r rawTuple
	if len(raw) != pageColumns {
		return r, errMalformedRow
	}
	if raw[colThread] == nil || raw[colNS] == nil || raw[colID] == nil || raw[colCheckpoint] == nil || raw[colMetadata] == nil {
		return r, errMalformedRow
	}
	arrays := [...]struct {
		dst   *pgArray
		col   int
		width int // fixed element size, 0: any
	}{
		{&r.blobChannels, colBlobChannels, 0}, {&r.blobValues, colBlobValues, 0}, {&r.taskIDs, colTaskIDs, 0},
		{&r.writeIdx, colWriteIdx, 4}, {&r.writeChannels, colWriteChannels, 0}, {&r.writeValues, colWriteValues, 0},
	}
	size := 0
	for i := colThread; i <= colMetadata; i++ {
		size += len(raw[i])
	}
	for _, x := range arrays {
		arr, err := newPGArray(raw[x.col], x.width)
		if err != nil {
			return r, err
		}
		*x.dst = arr
		if x.col != colWriteIdx {
			size += len(arr.data)
		}
	}
	buf := a.alloc(size)[:0]
	keep := func(b []byte) []byte {
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	r.thread, r.ns, r.id = str(keep(raw[colThread])), str(keep(raw[colNS])), str(keep(raw[colID]))
	if raw[colParent] != nil {
		r.parent, r.hasParent = str(keep(raw[colParent])), true
	}
	r.checkpoint, r.metadata = keep(raw[colCheckpoint]), keep(raw[colMetadata])
	for _, x := range arrays {
		if x.col != colWriteIdx && x.dst.data != nil {
			x.dst.data = keep(x.dst.data)
		}
	}
	return r, nil
}

// str returns b as a string sharing b's memory; the caller never writes b
// again.
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// pgArray is a one-dimensional array in PostgreSQL's binary form, or the
// elements of one already decoded (scanned). The binary form: int32 number
// of dimensions (0: empty), int32 has-NULL flag, uint32 element type, per
// dimension int32 length and int32 lower bound, then per element int32
// length (-1: NULL) and its bytes.
type pgArray struct {
	data    []byte   // the elements of the binary form; nil when scanned
	n       int      // number of elements
	scanned [][]byte // when not binary
}

// newPGArray checks a binary array (nil: SQL NULL, no elements) and that
// every element is width bytes long when width > 0.
func newPGArray(b []byte, width int) (pgArray, error) {
	if b == nil {
		return pgArray{}, nil
	}
	if len(b) < 12 {
		return pgArray{}, errMalformedRow
	}
	switch binary.BigEndian.Uint32(b) {
	case 0:
		return pgArray{}, nil
	case 1:
	default:
		return pgArray{}, errMalformedRow
	}
	if len(b) < 20 {
		return pgArray{}, errMalformedRow
	}
	n := int(int32(binary.BigEndian.Uint32(b[12:])))
	if n < 0 || n > len(b) {
		return pgArray{}, errMalformedRow
	}
	data := b[20:]
	for p, i := 0, 0; ; i++ {
		if i == n {
			if p != len(data) {
				return pgArray{}, errMalformedRow
			}
			break
		}
		if len(data)-p < 4 {
			return pgArray{}, errMalformedRow
		}
		l := int(int32(binary.BigEndian.Uint32(data[p:])))
		p += 4
		if l < 0 || len(data)-p < l || (width > 0 && l != width) {
			return pgArray{}, errMalformedRow // no element of the page is NULL
		}
		p += l
	}
	return pgArray{data: data, n: n}, nil
}

// len returns the number of elements.
func (a *pgArray) len() int { return a.n }

// cursor returns a reader of the elements in order.
func (a *pgArray) cursor() arrayCursor { return arrayCursor{a: a} }

// arrayCursor reads a checked pgArray's elements one after the other.
type arrayCursor struct {
	a    *pgArray
	i, p int
}

// next returns the next element; there must be one.
func (c *arrayCursor) next() []byte {
	i := c.i
	c.i++
	if c.a.data == nil {
		return c.a.scanned[i]
	}
	l := int(binary.BigEndian.Uint32(c.a.data[c.p:]))
	c.p += 4 + l
	return c.a.data[c.p-l : c.p : c.p]
}

// rawFromScan converts a row scanned by pgx (the simple protocol's text
// formats) into a rawTuple.
func rawFromScan(thread, ns, id string, parent *string, checkpoint, metadata []byte,
	blobChannels []string, blobValues [][]byte, taskIDs []string, writeIdx []int32,
	writeChannels []string, writeValues [][]byte) rawTuple {
	strs := func(ss []string) pgArray {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return pgArray{n: len(out), scanned: out}
	}
	idx := make([][]byte, len(writeIdx))
	for i, v := range writeIdx {
		idx[i] = binary.BigEndian.AppendUint32(nil, uint32(v))
	}
	r := rawTuple{
		thread: thread, ns: ns, id: id, checkpoint: checkpoint, metadata: metadata,
		blobChannels: strs(blobChannels), blobValues: pgArray{n: len(blobValues), scanned: blobValues},
		taskIDs: strs(taskIDs), writeIdx: pgArray{n: len(idx), scanned: idx},
		writeChannels: strs(writeChannels), writeValues: pgArray{n: len(writeValues), scanned: writeValues},
	}
	if parent != nil {
		r.parent, r.hasParent = *parent, true
	}
	return r
}

// comparePage orders tuples as List returns them: checkpoint ID
// descending, then thread and namespace ascending (bytewise, as the
// columns' "C" collation does).
func comparePage(a, b *spec.Tuple) int {
	if c := cmp.Compare(b.Config.CheckpointID, a.Config.CheckpointID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Config.ThreadID, b.Config.ThreadID); c != 0 {
		return c
	}
	return cmp.Compare(a.Config.Namespace, b.Config.Namespace)
}

// sortPage puts a page's tuples in list order. The statement reads them in
// that order and joins each row's values and writes to it, which keeps the
// order in practice; SQL does not promise it without a final ORDER BY,
// whose sort cost more than the rest of a GetTuple's execution, so the
// page is checked and, if need be, sorted here.
func sortPage(page []*spec.Tuple) {
	if !slices.IsSortedFunc(page, comparePage) {
		slices.SortStableFunc(page, comparePage)
	}
}

// int32s appends the elements of an int4 array to dst.
func (a *pgArray) int32s(dst []int32) []int32 {
	c := a.cursor()
	for range a.n {
		dst = append(dst, int32(binary.BigEndian.Uint32(c.next())))
	}
	return dst
}
