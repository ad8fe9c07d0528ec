// Package msgpackread reads MessagePack directly from a buffer, for the
// read paths of adapters that decode every row of a page.
//
// The general decoder behind [spec.MsgpackSerde] works by reflection and
// copies every string twice. A [Reader] reads the forms the adapters and
// the default serde write, with strings that share the buffer's memory, and
// reports false on anything else: the caller then decodes the whole input
// with the general decoder, which stays the rule (each adapter's tests
// check that both agree).
package msgpackread

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/checkpointkit/checkpointkit/spec"
)

// MaxDepth bounds the nesting (lists, maps and delta snapshots) that
// [Reader.Value] follows itself; deeper values go to the general decoder.
const MaxDepth = 64

// Reader reads MessagePack from a buffer that nobody writes while the
// values read from it live: the strings it returns share its memory. Every
// method reports false on a form it does not handle, leaving the position
// unspecified.
type Reader struct {
	b []byte
	i int
}

// New returns a Reader at the start of b.
func New(b []byte) Reader { return Reader{b: b} }

// Done reports whether the whole buffer has been read.
func (r *Reader) Done() bool { return r.i == len(r.b) }

// Nil reads a nil if one is next.
func (r *Reader) Nil() bool {
	if r.i < len(r.b) && r.b[r.i] == 0xc0 {
		r.i++
		return true
	}
	return false
}

// need reports whether n bytes follow a header of h bytes at the current
// position.
func (r *Reader) need(h, n int) bool { return n >= 0 && len(r.b)-r.i >= h+n }

// Str reads a string, sharing the buffer's memory.
func (r *Reader) Str() (string, bool) {
	if r.i >= len(r.b) {
		return "", false
	}
	var h, n int
	switch c := r.b[r.i]; {
	case c >= 0xa0 && c <= 0xbf:
		h, n = 1, int(c&0x1f)
	case c == 0xd9 && r.need(2, 0):
		h, n = 2, int(r.b[r.i+1])
	case c == 0xda && r.need(3, 0):
		h, n = 3, int(binary.BigEndian.Uint16(r.b[r.i+1:]))
	case c == 0xdb && r.need(5, 0):
		h, n = 5, int(binary.BigEndian.Uint32(r.b[r.i+1:]))
	default:
		return "", false
	}
	if !r.need(h, n) {
		return "", false
	}
	start := r.i + h
	r.i = start + n
	if n == 0 {
		return "", true
	}
	return unsafe.String(&r.b[start], n), true
}

// MapLen reads a map header. A length larger than the buffer could hold
// is refused.
func (r *Reader) MapLen() (int, bool) {
	return r.length(0x80, 0x8f, 0xde, 0xdf)
}

// ArrayLen reads an array header. A length larger than the buffer could
// hold is refused.
func (r *Reader) ArrayLen() (int, bool) {
	return r.length(0x90, 0x9f, 0xdc, 0xdd)
}

func (r *Reader) length(fixLo, fixHi, c16, c32 byte) (int, bool) {
	if r.i >= len(r.b) {
		return 0, false
	}
	switch c := r.b[r.i]; {
	case c >= fixLo && c <= fixHi:
		r.i++
		return int(c & 0x0f), true
	case c == c16 && r.need(3, 0):
		n := int(binary.BigEndian.Uint16(r.b[r.i+1:]))
		r.i += 3
		return n, n <= len(r.b)
	case c == c32 && r.need(5, 0):
		n := int(binary.BigEndian.Uint32(r.b[r.i+1:]))
		r.i += 5
		return n, n <= len(r.b)
	}
	return 0, false
}

// Int reads an integer in any MessagePack form whose value fits an int64.
func (r *Reader) Int() (int64, bool) {
	if r.i >= len(r.b) {
		return 0, false
	}
	c := r.b[r.i]
	var v int64
	switch {
	case c <= 0x7f:
		r.i++
		return int64(c), true
	case c >= 0xe0:
		r.i++
		return int64(int8(c)), true
	case c == 0xcc && r.need(2, 0):
		v, r.i = int64(r.b[r.i+1]), r.i+2
	case c == 0xcd && r.need(3, 0):
		v, r.i = int64(binary.BigEndian.Uint16(r.b[r.i+1:])), r.i+3
	case c == 0xce && r.need(5, 0):
		v, r.i = int64(binary.BigEndian.Uint32(r.b[r.i+1:])), r.i+5
	case c == 0xcf && r.need(9, 0):
		u := binary.BigEndian.Uint64(r.b[r.i+1:])
		if u > math.MaxInt64 {
			return 0, false
		}
		v, r.i = int64(u), r.i+9
	case c == 0xd0 && r.need(2, 0):
		v, r.i = int64(int8(r.b[r.i+1])), r.i+2
	case c == 0xd1 && r.need(3, 0):
		v, r.i = int64(int16(binary.BigEndian.Uint16(r.b[r.i+1:]))), r.i+3
	case c == 0xd2 && r.need(5, 0):
		v, r.i = int64(int32(binary.BigEndian.Uint32(r.b[r.i+1:]))), r.i+5
	case c == 0xd3 && r.need(9, 0):
		v, r.i = int64(binary.BigEndian.Uint64(r.b[r.i+1:])), r.i+9
	default:
		return 0, false
	}
	return v, true
}

// Versions reads a map of strings to strings as [spec.Versions], or nil.
func (r *Reader) Versions() (spec.Versions, bool) {
	if r.Nil() {
		return nil, true
	}
	n, ok := r.MapLen()
	if !ok {
		return nil, false
	}
	vs := make(spec.Versions, n)
	for range n {
		k, ok := r.Str()
		if !ok {
			return nil, false
		}
		v, ok := r.Str()
		if !ok {
			return nil, false
		}
		vs[k] = spec.Version(v)
	}
	return vs, true
}

// Value reads one value as [spec.MsgpackSerde] decodes it, when it is made
// of nil, booleans, integers, float64s, strings, lists, string-keyed maps
// and delta snapshots (extension type [spec.MsgpackExtDeltaSnapshot]),
// nested at most [MaxDepth] deep. Byte strings, float32s and other
// extensions are left to the serde.
func (r *Reader) Value() (any, bool) { return r.value(0) }

// Map reads a string-keyed map of values as [Reader.Value] does.
func (r *Reader) Map() (map[string]any, bool) { return r.mapOf(1) }

func (r *Reader) value(depth int) (any, bool) {
	if r.i >= len(r.b) || depth > MaxDepth {
		return nil, false
	}
	c := r.b[r.i]
	switch {
	case c == 0xc0:
		r.i++
		return nil, true
	case c == 0xc2 || c == 0xc3:
		r.i++
		return c == 0xc3, true
	case c == 0xcb && r.need(9, 0):
		f := math.Float64frombits(binary.BigEndian.Uint64(r.b[r.i+1:]))
		r.i += 9
		return f, true
	case c >= 0xa0 && c <= 0xbf, c == 0xd9, c == 0xda, c == 0xdb:
		return r.Str()
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		m, ok := r.mapOf(depth + 1)
		return m, ok
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		return r.list(depth + 1)
	case c >= 0xd4 && c <= 0xd8, c >= 0xc7 && c <= 0xc9:
		return r.snapshot(depth + 1)
	}
	return r.Int()
}

func (r *Reader) list(depth int) (any, bool) {
	if depth > MaxDepth {
		return nil, false
	}
	n, ok := r.ArrayLen()
	if !ok {
		return nil, false
	}
	out := make([]any, n)
	for j := range n {
		if out[j], ok = r.value(depth); !ok {
			return nil, false
		}
	}
	return out, true
}

func (r *Reader) mapOf(depth int) (map[string]any, bool) {
	if depth > MaxDepth {
		return nil, false
	}
	n, ok := r.MapLen()
	if !ok {
		return nil, false
	}
	m := make(map[string]any, n)
	for range n {
		k, ok := r.Str()
		if !ok {
			return nil, false
		}
		if m[k], ok = r.value(depth); !ok {
			return nil, false
		}
	}
	return m, true
}

// snapshot reads an extension of type [spec.MsgpackExtDeltaSnapshot] whose
// payload is exactly one value.
func (r *Reader) snapshot(depth int) (any, bool) {
	if depth > MaxDepth {
		return nil, false
	}
	var h, n int
	switch c := r.b[r.i]; {
	case c >= 0xd4 && c <= 0xd8:
		h, n = 2, 1<<(c-0xd4)
	case c == 0xc7 && r.need(2, 0):
		h, n = 3, int(r.b[r.i+1])
	case c == 0xc8 && r.need(3, 0):
		h, n = 4, int(binary.BigEndian.Uint16(r.b[r.i+1:]))
	case c == 0xc9 && r.need(5, 0):
		h, n = 6, int(binary.BigEndian.Uint32(r.b[r.i+1:]))
	default:
		return nil, false
	}
	if !r.need(h, n) || r.b[r.i+h-1] != spec.MsgpackExtDeltaSnapshot {
		return nil, false
	}
	r.i += h
	end := r.i + n
	v, ok := r.value(depth)
	if !ok || r.i != end {
		return nil, false
	}
	return spec.DeltaSnapshot{Value: v}, true
}
