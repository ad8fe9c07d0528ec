package sqlite

import (
	"strconv"
	"unicode/utf8"

	"github.com/checkpointkit/checkpointkit/adapters/internal/msgpackread"
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
	r := msgpackread.New(data)
	if cp, ok := readBody(&r, id); ok && r.Done() {
		return cp, nil
	}
	return decodeBody(id, data)
}

// readBody reads the body struct as encodeBody writes it.
func readBody(r *msgpackread.Reader, id string) (spec.Checkpoint, bool) {
	cp := spec.Checkpoint{ID: id}
	n, ok := r.MapLen()
	if !ok {
		return cp, false
	}
	for range n {
		key, ok := r.Str()
		if !ok {
			return cp, false
		}
		switch key {
		case "v":
			v, ok := r.Int()
			if !ok {
				return cp, false
			}
			cp.V = int(v)
		case "ts":
			if cp.TS, ok = r.Str(); !ok {
				return cp, false
			}
		case "channel_versions":
			if cp.ChannelVersions, ok = r.Versions(); !ok {
				return cp, false
			}
		case "versions_seen":
			if r.Nil() {
				continue
			}
			m, ok := r.MapLen()
			if !ok {
				return cp, false
			}
			cp.VersionsSeen = make(map[string]spec.Versions, m)
			for range m {
				node, ok := r.Str()
				if !ok {
					return cp, false
				}
				if cp.VersionsSeen[node], ok = r.Versions(); !ok {
					return cp, false
				}
			}
		case "updated_channels":
			if r.Nil() {
				cp.UpdatedChannels = nil
				continue
			}
			m, ok := r.ArrayLen()
			if !ok {
				return cp, false
			}
			cp.UpdatedChannels = make([]string, m)
			for j := range m {
				if cp.UpdatedChannels[j], ok = r.Str(); !ok {
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
