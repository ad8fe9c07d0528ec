package postgres

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The read path decodes a checkpoint record, its exact metadata and its
// values for every row of a page. The general MessagePack decoder works by
// reflection and copies every string twice, which cost more than the page
// statement's server time, so the decoders here read the forms this
// package writes directly, with strings that share the memory of the row
// they come from (a buffer the page owns and never writes; see rawTuple).
// Whatever they do not expect goes to the general decoder, which stays the
// rule: fastdecode_test.go checks that both always agree.

// parseRecord is decodeRecord for a buffer the caller never writes again.
func parseRecord(id string, data []byte) (spec.Checkpoint, error) {
	r := mpReader{b: data}
	if cp, ok := r.record(id); ok && r.i == len(r.b) {
		return cp, nil
	}
	return decodeRecord(id, data)
}

// parseExactMetadata is decodeExactMetadata for a buffer the caller never
// writes again.
func parseExactMetadata(data []byte, serde spec.Serde) (map[string]any, error) {
	r := mpReader{b: data}
	if m, ok := r.mapOf(0); ok && r.i == len(r.b) {
		return m, nil
	}
	if _, fixed := serde.(spec.MsgpackSerde); !fixed {
		// The fallback may decode with the saver's serde, which may alias
		// its input: give it bytes of its own, not the page's.
		data = slices.Clone(data)
	}
	return decodeExactMetadata(data, serde)
}

// decodeOwned is serde.Decode(data) for a buffer the caller never writes
// again: with the default serde, scalars, strings, lists and string-keyed
// maps are read directly. Any other serde gets a copy of data: it may
// return values that alias its input, which a caller could then modify,
// and data shares its memory with the rest of the page.
func decodeOwned(serde spec.Serde, data []byte) (any, error) {
	if _, ok := serde.(spec.MsgpackSerde); !ok {
		return serde.Decode(slices.Clone(data))
	}
	r := mpReader{b: data}
	if v, ok := r.value(0); ok && r.i == len(r.b) {
		return v, nil
	}
	return serde.Decode(data)
}

// mpReader reads MessagePack. Every method reports false on a form it does
// not handle, and the caller then decodes the whole input generally.
type mpReader struct {
	b []byte
	i int
}

// maxDepth bounds the nesting the reader follows itself.
const maxDepth = 64

// record reads the record struct as encodeRecord writes it.
func (r *mpReader) record(id string) (spec.Checkpoint, bool) {
	cp := spec.Checkpoint{ID: id}
	n, ok := r.mapLen()
	if !ok {
		return cp, false
	}
	for range n {
		key, ok := r.str()
		if !ok {
			return cp, false
		}
		switch key {
		case "v":
			v, ok := r.int()
			if !ok || v != int64(int(v)) {
				return cp, false
			}
			cp.V = int(v)
		case "ts":
			if cp.TS, ok = r.str(); !ok {
				return cp, false
			}
		case "cv":
			if cp.ChannelVersions, ok = r.versions(); !ok {
				return cp, false
			}
		case "vs":
			if r.nil() {
				continue
			}
			m, ok := r.mapLen()
			if !ok {
				return cp, false
			}
			cp.VersionsSeen = make(map[string]spec.Versions, m)
			for range m {
				node, ok := r.str()
				if !ok {
					return cp, false
				}
				vs, ok := r.versions()
				if !ok {
					return cp, false
				}
				if vs == nil {
					vs = spec.Versions{}
				}
				cp.VersionsSeen[node] = vs
			}
		case "uc":
			if r.nil() {
				cp.UpdatedChannels = nil
				continue
			}
			m, ok := r.arrayLen()
			if !ok {
				return cp, false
			}
			cp.UpdatedChannels = make([]string, m)
			for j := range m {
				if cp.UpdatedChannels[j], ok = r.str(); !ok {
					return cp, false
				}
			}
		default:
			return cp, false
		}
	}
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = spec.Versions{}
	}
	if cp.VersionsSeen == nil {
		cp.VersionsSeen = map[string]spec.Versions{}
	}
	return cp, true
}

// versions reads a map of strings to strings, or nil.
func (r *mpReader) versions() (spec.Versions, bool) {
	if r.nil() {
		return nil, true
	}
	n, ok := r.mapLen()
	if !ok {
		return nil, false
	}
	vs := make(spec.Versions, n)
	for range n {
		k, ok := r.str()
		if !ok {
			return nil, false
		}
		v, ok := r.str()
		if !ok {
			return nil, false
		}
		vs[k] = spec.Version(v)
	}
	return vs, true
}

// value reads one value as the default serde decodes it: nil, bool, int64,
// float64, string, []any or map[string]any.
func (r *mpReader) value(depth int) (any, bool) {
	if r.i >= len(r.b) || depth > maxDepth {
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
		return r.str()
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		m, ok := r.mapOf(depth + 1)
		return m, ok
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		n, ok := r.arrayLen()
		if !ok {
			return nil, false
		}
		out := make([]any, n)
		for j := range n {
			if out[j], ok = r.value(depth + 1); !ok {
				return nil, false
			}
		}
		return out, true
	}
	return r.int()
}

// mapOf reads a map with string keys.
func (r *mpReader) mapOf(depth int) (map[string]any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	n, ok := r.mapLen()
	if !ok {
		return nil, false
	}
	m := make(map[string]any, n)
	for range n {
		k, ok := r.str()
		if !ok {
			return nil, false
		}
		if m[k], ok = r.value(depth + 1); !ok {
			return nil, false
		}
	}
	return m, true
}

func (r *mpReader) nil() bool {
	if r.i < len(r.b) && r.b[r.i] == 0xc0 {
		r.i++
		return true
	}
	return false
}

// need reports whether n bytes follow a header of h bytes at the current
// position.
func (r *mpReader) need(h, n int) bool { return n >= 0 && len(r.b)-r.i >= h+n }

func (r *mpReader) str() (string, bool) {
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
	return str(r.b[start:r.i]), true
}

func (r *mpReader) mapLen() (int, bool) {
	if r.i >= len(r.b) {
		return 0, false
	}
	switch c := r.b[r.i]; {
	case c >= 0x80 && c <= 0x8f:
		r.i++
		return int(c & 0x0f), true
	case c == 0xde && r.need(3, 0):
		n := int(binary.BigEndian.Uint16(r.b[r.i+1:]))
		r.i += 3
		return n, n <= len(r.b)
	case c == 0xdf && r.need(5, 0):
		n := int(binary.BigEndian.Uint32(r.b[r.i+1:]))
		r.i += 5
		return n, n <= len(r.b)
	}
	return 0, false
}

func (r *mpReader) arrayLen() (int, bool) {
	if r.i >= len(r.b) {
		return 0, false
	}
	switch c := r.b[r.i]; {
	case c >= 0x90 && c <= 0x9f:
		r.i++
		return int(c & 0x0f), true
	case c == 0xdc && r.need(3, 0):
		n := int(binary.BigEndian.Uint16(r.b[r.i+1:]))
		r.i += 3
		return n, n <= len(r.b)
	case c == 0xdd && r.need(5, 0):
		n := int(binary.BigEndian.Uint32(r.b[r.i+1:]))
		r.i += 5
		return n, n <= len(r.b)
	}
	return 0, false
}

// int reads an integer in any MessagePack form whose value fits an int64.
func (r *mpReader) int() (int64, bool) {
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
