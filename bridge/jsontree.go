package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// decodeJSON parses one JSON text into a generic tree: map[string]any,
// []any, string, bool, nil, and json.Number for numbers, so that integers
// and floats stay apart (a number keeps its exact text). It reads tokens
// with jsontext rather than unmarshalling with encoding/json, which was the
// largest part of a call's CPU time. Strings must be valid UTF-8, as the
// protocol requires; a repeated object name keeps its last value, as
// encoding/json does.
func decodeJSON(data []byte) (any, error) {
	dr := decoders.Get().(*decoder)
	defer decoders.Put(dr)
	dr.r.Reset(data)
	d := &dr.d
	d.Reset(&dr.r, jsontext.AllowDuplicateNames(true))
	v, err := readTree(d)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trailing data after the JSON value at offset %d", d.InputOffset())
	}
	return v, nil
}

// decoder is a reusable jsontext.Decoder with its reader: every bridge
// message is decoded, so they are pooled.
type decoder struct {
	r bytes.Reader
	d jsontext.Decoder
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// readTree reads one JSON value from d.
func readTree(d *jsontext.Decoder) (any, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '{':
		m := map[string]any{}
		for d.PeekKind() == '"' {
			tok, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			v, err := readTree(d)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		if _, err := d.ReadToken(); err != nil { // '}', or the syntax error
			return nil, err
		}
		return m, nil
	case '[':
		l := []any{}
		for k := d.PeekKind(); k != ']' && k != 0; k = d.PeekKind() {
			v, err := readTree(d)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		if _, err := d.ReadToken(); err != nil { // ']', or the syntax error
			return nil, err
		}
		return l, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok.Kind())
}
