package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeJSON parses one JSON text into a generic tree: map[string]any,
// []any, string, bool, nil, and json.Number for numbers, so that integers
// and floats stay apart. It accepts exactly what encoding/json accepts and
// builds the same tree as a json.Decoder with UseNumber (FuzzDecodeJSON
// checks both against encoding/json). It exists for speed: every message
// of the bridge goes through it, parsing with encoding/json was the largest
// part of a call's CPU time, and this single pass takes about half as long.
func decodeJSON(data []byte) (any, error) {
	p := jsonParser{data: data}
	p.space()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, p.errorf("trailing data after the JSON value")
	}
	return v, nil
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

type jsonParser struct {
	data  []byte
	pos   int
	depth int
}

var errEOF = errors.New("unexpected end of JSON input")

func (p *jsonParser) errorf(format string, a ...any) error {
	return fmt.Errorf("JSON: %s at offset %d", fmt.Sprintf(format, a...), p.pos)
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	if p.pos >= len(p.data) {
		return nil, errEOF
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("invalid character %q looking for a value", c)
	}
}

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.pos < len(word) {
		return errEOF
	}
	if string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.errorf("invalid literal")
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) nest() error {
	if p.depth++; p.depth > maxDepth {
		return p.errorf("exceeded max depth")
	}
	return nil
}

func (p *jsonParser) object() (any, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	p.pos++ // {
	m := map[string]any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return m, nil
	}
	for {
		if p.pos >= len(p.data) {
			return nil, errEOF
		}
		if p.data[p.pos] != '"' {
			return nil, p.errorf("invalid character %q looking for an object key", p.data[p.pos])
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.data) {
			return nil, errEOF
		}
		if p.data[p.pos] != ':' {
			return nil, p.errorf("invalid character %q after an object key", p.data[p.pos])
		}
		p.pos++
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[k.(string)] = v
		p.space()
		if p.pos >= len(p.data) {
			return nil, errEOF
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.space()
		case '}':
			p.pos++
			p.depth--
			return m, nil
		default:
			return nil, p.errorf("invalid character %q after an object value", p.data[p.pos])
		}
	}
}

func (p *jsonParser) array() (any, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	p.pos++ // [
	a := []any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.pos >= len(p.data) {
			return nil, errEOF
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.space()
		case ']':
			p.pos++
			p.depth--
			return a, nil
		default:
			return nil, p.errorf("invalid character %q after an array element", p.data[p.pos])
		}
	}
}

// number reads a number with JSON's grammar:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func (p *jsonParser) number() (any, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos >= len(p.data):
		return nil, errEOF
	case p.data[p.pos] == '0':
		p.pos++
	case p.data[p.pos] >= '1' && p.data[p.pos] <= '9':
		p.digits()
	default:
		return nil, p.errorf("invalid character %q in a number", p.data[p.pos])
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return nil, p.numberEnd()
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return nil, p.numberEnd()
		}
	}
	return json.Number(p.data[start:p.pos]), nil
}

func (p *jsonParser) numberEnd() error {
	if p.pos >= len(p.data) {
		return errEOF
	}
	return p.errorf("invalid character %q in a number", p.data[p.pos])
}

func (p *jsonParser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

// string reads a string; like encoding/json, it replaces invalid UTF-8 and
// unpaired surrogates with U+FFFD.
func (p *jsonParser) string() (any, error) {
	p.pos++ // "
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return p.slowString(start)
		}
		p.pos++
	}
	return nil, errEOF
}

func (p *jsonParser) slowString(start int) (any, error) {
	b := append(make([]byte, 0, p.pos-start+16), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b), nil
		case c < 0x20:
			return nil, p.errorf("invalid control character %q in a string", c)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, p.data[p.pos:p.pos+size]...)
			}
			p.pos += size
		case c != '\\':
			b = append(b, c)
			p.pos++
		default:
			p.pos++
			if p.pos >= len(p.data) {
				return nil, errEOF
			}
			e := p.data[p.pos]
			p.pos++
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if utf16.IsSurrogate(r) {
					r = p.lowSurrogate(r)
				}
				b = utf8.AppendRune(b, r)
			default:
				return nil, p.errorf("invalid escape %q in a string", e)
			}
		}
	}
	return nil, errEOF
}

// lowSurrogate completes the surrogate pair started by hi when a \u escape
// of a low surrogate follows, and returns U+FFFD otherwise, leaving what
// follows to be read on its own.
func (p *jsonParser) lowSurrogate(hi rune) rune {
	if len(p.data)-p.pos >= 6 && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
		save := p.pos
		p.pos += 2
		if lo, err := p.hex4(); err == nil {
			if r := utf16.DecodeRune(hi, lo); r != utf8.RuneError {
				return r
			}
		}
		p.pos = save
	}
	return utf8.RuneError
}

func (p *jsonParser) hex4() (rune, error) {
	if len(p.data)-p.pos < 4 {
		return 0, errEOF
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.pos += 4
	return rune(n), nil
}
