package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

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
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
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

// Checkpoint body keys. The body is everything of a checkpoint but its
// channel values, which live in the blobs table.
const (
	bodyV               = "v"
	bodyTS              = "ts"
	bodyChannelVersions = "channel_versions"
	bodyVersionsSeen    = "versions_seen"
	bodyUpdatedChannels = "updated_channels"
)

// encodeBody encodes cp without its channel values.
func encodeBody(serde spec.Serde, cp spec.Checkpoint) ([]byte, error) {
	seen := make(map[string]any, len(cp.VersionsSeen))
	for node, vs := range cp.VersionsSeen {
		seen[node] = versionsToMap(vs)
	}
	body := map[string]any{
		bodyV:               int64(cp.V),
		bodyTS:              cp.TS,
		bodyChannelVersions: versionsToMap(cp.ChannelVersions),
		bodyVersionsSeen:    seen,
		bodyUpdatedChannels: nil,
	}
	if cp.UpdatedChannels != nil {
		uc := make([]any, len(cp.UpdatedChannels))
		for i, c := range cp.UpdatedChannels {
			uc[i] = c
		}
		body[bodyUpdatedChannels] = uc
	}
	return serde.Encode(body)
}

// decodeBody decodes a body written by encodeBody into a checkpoint with ID
// id and no channel values.
func decodeBody(serde spec.Serde, id string, data []byte) (spec.Checkpoint, error) {
	raw, err := serde.Decode(data)
	if err != nil {
		return spec.Checkpoint{}, err
	}
	body, ok := raw.(map[string]any)
	if !ok {
		return spec.Checkpoint{}, fmt.Errorf("checkpoint body is %T, not a map", raw)
	}
	cp := spec.Checkpoint{ID: id}
	if v, ok := body[bodyV].(int64); ok {
		cp.V = int(v)
	}
	cp.TS, _ = body[bodyTS].(string)
	cp.ChannelVersions = mapToVersions(body[bodyChannelVersions])
	seen, _ := body[bodyVersionsSeen].(map[string]any)
	cp.VersionsSeen = make(map[string]spec.Versions, len(seen))
	for node, vs := range seen {
		cp.VersionsSeen[node] = mapToVersions(vs)
	}
	if uc, ok := body[bodyUpdatedChannels].([]any); ok {
		cp.UpdatedChannels = make([]string, 0, len(uc))
		for _, c := range uc {
			s, _ := c.(string)
			cp.UpdatedChannels = append(cp.UpdatedChannels, s)
		}
	}
	return cp, nil
}

func versionsToMap(vs spec.Versions) map[string]any {
	m := make(map[string]any, len(vs))
	for k, v := range vs {
		m[k] = string(v)
	}
	return m
}

func mapToVersions(v any) spec.Versions {
	m, _ := v.(map[string]any)
	vs := make(spec.Versions, len(m))
	for k, e := range m {
		s, _ := e.(string)
		vs[k] = spec.Version(s)
	}
	return vs
}
