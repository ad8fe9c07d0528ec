package sqlite

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The read path decodes a checkpoint body and its metadata for every row.
// The general decoders (msgpack.Unmarshal by reflection, encoding/json into
// interfaces) cost more than the SQLite statements themselves, so these two
// read exactly the forms this package writes, and their strings share the
// memory of the column they come from (a buffer the read owns and never
// writes; see rawConn). Anything they do not expect sends the whole value
// to the general decoder, which stays the rule: fastcodec_test.go checks
// that both always agree.

// parseMetadata decodes metadata JSON text written by encodeMetadata. Its
// strings share text's memory.
func parseMetadata(text string) (spec.Metadata, error) {
	p := jsonParser{s: text}
	if m, ok := p.object(0); ok && p.i == len(p.s) {
		return spec.Metadata(m), nil
	}
	return decodeMetadataBytes([]byte(text))
}

// jsonParser reads the compact JSON of appendJSON: no whitespace, strings
// without escapes. It reports false on anything else.
type jsonParser struct {
	s string
	i int
}

// maxJSONDepth bounds the nesting parseMetadata follows itself.
const maxJSONDepth = 64

func (p *jsonParser) value(depth int) (any, bool) {
	if p.i >= len(p.s) || depth > maxJSONDepth {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		return p.str()
	case c == '{':
		m, ok := p.object(depth + 1)
		return m, ok
	case c == '[':
		return p.array(depth + 1)
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, false
}

func (p *jsonParser) lit(word string) bool {
	if len(p.s)-p.i < len(word) || p.s[p.i:p.i+len(word)] != word {
		return false
	}
	p.i += len(word)
	return true
}

// str reads a string without escapes, holding valid UTF-8 only (what
// encoding/json would replace or unescape goes to the general decoder).
func (p *jsonParser) str() (string, bool) {
	start := p.i + 1
	for j := start; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '"':
			v := p.s[start:j]
			if !utf8.ValidString(v) {
				return "", false
			}
			p.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// number reads a number in JSON's grammar: an integer literal becomes an
// int64 when it fits, anything else a float64 (as fromJSON decides).
func (p *jsonParser) number() (any, bool) {
	start, isFloat := p.i, false
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		isFloat = true
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		isFloat = true
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	text := p.s[start:p.i]
	if !isFloat {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, true
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	return f, err == nil
}

func (p *jsonParser) object(depth int) (map[string]any, bool) {
	if p.i >= len(p.s) || p.s[p.i] != '{' || depth > maxJSONDepth {
		return nil, false
	}
	p.i++
	m := make(map[string]any, 4)
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok || p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value(depth)
		if !ok || p.i >= len(p.s) {
			return nil, false
		}
		m[k] = v
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *jsonParser) array(depth int) ([]any, bool) {
	p.i++ // '['
	a := []any{}
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth)
		if !ok || p.i >= len(p.s) {
			return nil, false
		}
		a = append(a, v)
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// parseBody decodes a body written by encodeBody, like decodeBody. Its
// strings share data's memory, which the caller must never modify.
func parseBody(id string, data []byte) (spec.Checkpoint, error) {
	r := mpReader{b: data}
	if cp, ok := r.body(id); ok && r.i == len(r.b) {
		return cp, nil
	}
	return decodeBody(id, data)
}

// mpReader reads the MessagePack of the body struct. It reports false on
// anything it does not expect.
type mpReader struct {
	b []byte
	i int
}

func (r *mpReader) body(id string) (spec.Checkpoint, bool) {
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
			if !ok {
				return cp, false
			}
			cp.V = int(v)
		case "ts":
			if cp.TS, ok = r.str(); !ok {
				return cp, false
			}
		case "channel_versions":
			if cp.ChannelVersions, ok = r.versions(); !ok {
				return cp, false
			}
		case "versions_seen":
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
				if cp.VersionsSeen[node], ok = r.versions(); !ok {
					return cp, false
				}
			}
		case "updated_channels":
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
	for node, vs := range cp.VersionsSeen {
		if vs == nil {
			cp.VersionsSeen[node] = spec.Versions{}
		}
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

func (r *mpReader) nil() bool {
	if r.i < len(r.b) && r.b[r.i] == 0xc0 {
		r.i++
		return true
	}
	return false
}

// need reports whether n more bytes follow the current one's header of h
// bytes.
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
	if n == 0 {
		return "", true
	}
	return unsafe.String(&r.b[start], n), true
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
		return n, true
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
		return n, true
	}
	return 0, false
}

// int reads an integer that fits an int32 in any MessagePack integer form.
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
		v = int64(r.b[r.i+1])
		r.i += 2
	case c == 0xcd && r.need(3, 0):
		v = int64(binary.BigEndian.Uint16(r.b[r.i+1:]))
		r.i += 3
	case c == 0xce && r.need(5, 0):
		v = int64(binary.BigEndian.Uint32(r.b[r.i+1:]))
		r.i += 5
	case c == 0xd0 && r.need(2, 0):
		v = int64(int8(r.b[r.i+1]))
		r.i += 2
	case c == 0xd1 && r.need(3, 0):
		v = int64(int16(binary.BigEndian.Uint16(r.b[r.i+1:])))
		r.i += 3
	case c == 0xd2 && r.need(5, 0):
		v = int64(int32(binary.BigEndian.Uint32(r.b[r.i+1:])))
		r.i += 5
	default:
		return 0, false // 64-bit forms: left to the general decoder
	}
	return v, true
}
