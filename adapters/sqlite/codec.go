package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Metadata is stored as JSON text so that SQLite's JSON functions can look
// into it (filters, the run_id index). encoding/json would lose the
// difference between int64 1 and float64 1.0 and round large integers
// through float64, so metadata uses this small codec instead: integers are
// written as integer literals, floats always carry a '.' or an exponent, and
// the decoder maps each literal back to the type that produced it.

// encodeMetadata returns md, which must be normalised, as JSON text with
// sorted keys.
func encodeMetadata(md spec.Metadata) (string, error) {
	b, err := appendJSON(make([]byte, 0, 128), map[string]any(md))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// decodeMetadata parses JSON text written by encodeMetadata.
func decodeMetadata(text string) (spec.Metadata, error) {
	return decodeMetadataBytes([]byte(text))
}

// decodeMetadataBytes parses JSON text written by encodeMetadata; it keeps
// no reference to text.
func decodeMetadataBytes(text []byte) (spec.Metadata, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("decode metadata: %w", err)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("decode metadata: top level is %T, not an object", raw)
	}
	v, err := fromJSON(m)
	if err != nil {
		return nil, err
	}
	return spec.Metadata(v.(map[string]any)), nil
}

// fromJSON replaces every json.Number in v, in place, by an int64 (integer
// literal that fits) or a float64 (anything else).
func fromJSON(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !bytes.ContainsAny([]byte(s), ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("decode metadata: number %q: %w", s, err)
		}
		return f, nil
	case []any:
		for i, e := range x {
			ne, err := fromJSON(e)
			if err != nil {
				return nil, err
			}
			x[i] = ne
		}
		return x, nil
	case map[string]any:
		for k, e := range x {
			ne, err := fromJSON(e)
			if err != nil {
				return nil, err
			}
			x[k] = ne
		}
		return x, nil
	}
	return v, nil
}

// appendJSON appends the JSON text of a normalised metadata value.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("metadata number %v: %w", x, spec.ErrUnsupportedValue)
		}
		start := len(b)
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
		if !bytes.ContainsAny(b[start:], ".eE") {
			b = append(b, ".0"...)
		}
		return b, nil
	case string:
		return appendJSONString(b, x), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("metadata value of type %T: %w", v, spec.ErrUnsupportedValue)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Control characters, quotes
// and backslashes are escaped; everything else is copied as UTF-8.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// body is everything of a checkpoint but its ID (a column) and its channel
// values (the blobs table). It is internal to the schema, so it is always
// MessagePack decoded straight into these types, whatever serde encodes the
// values: no generic map to walk and normalise on every read.
type body struct {
	V               int                      `msgpack:"v"`
	TS              string                   `msgpack:"ts"`
	ChannelVersions spec.Versions            `msgpack:"channel_versions"`
	VersionsSeen    map[string]spec.Versions `msgpack:"versions_seen"`
	// UpdatedChannels keeps nil ("unknown") apart from an empty list.
	UpdatedChannels []string `msgpack:"updated_channels"`
}

// encodeBody encodes cp without its ID and channel values.
func encodeBody(cp spec.Checkpoint) ([]byte, error) {
	data, err := msgpack.Marshal(body{
		V:               cp.V,
		TS:              cp.TS,
		ChannelVersions: cp.ChannelVersions,
		VersionsSeen:    cp.VersionsSeen,
		UpdatedChannels: cp.UpdatedChannels,
	})
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return data, nil
}

// decodeBody decodes a body written by encodeBody into a checkpoint with ID
// id and no channel values. Maps are never nil.
func decodeBody(id string, data []byte) (spec.Checkpoint, error) {
	var b body
	if err := msgpack.Unmarshal(data, &b); err != nil {
		return spec.Checkpoint{}, fmt.Errorf("decode checkpoint: %w", err)
	}
	cp := spec.Checkpoint{
		V:               b.V,
		ID:              id,
		TS:              b.TS,
		ChannelVersions: b.ChannelVersions,
		VersionsSeen:    b.VersionsSeen,
		UpdatedChannels: b.UpdatedChannels,
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
	return cp, nil
}
