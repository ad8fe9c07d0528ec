package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/checkpointkit/checkpointkit/spec"
)

// record is the part of a checkpoint stored in the checkpoint column. The
// ID lives in the key columns and the values in the blobs table. On the way
// out, maps are always non-nil (as every saver of the kit returns them) and
// UpdatedChannels keeps nil ("unknown") apart from empty.
type record struct {
	V               int                      `msgpack:"v"`
	TS              string                   `msgpack:"ts"`
	ChannelVersions spec.Versions            `msgpack:"cv"`
	VersionsSeen    map[string]spec.Versions `msgpack:"vs"`
	UpdatedChannels []string                 `msgpack:"uc"`
}

func encodeRecord(cp spec.Checkpoint) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	err := enc.Encode(record{
		V:               cp.V,
		TS:              cp.TS,
		ChannelVersions: cp.ChannelVersions,
		VersionsSeen:    cp.VersionsSeen,
		UpdatedChannels: cp.UpdatedChannels,
	})
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return buf.Bytes(), nil
}

func decodeRecord(id string, data []byte) (spec.Checkpoint, error) {
	var r record
	if err := msgpack.Unmarshal(data, &r); err != nil {
		return spec.Checkpoint{}, fmt.Errorf("decode checkpoint %q: %w", id, err)
	}
	if r.ChannelVersions == nil {
		r.ChannelVersions = spec.Versions{}
	}
	if r.VersionsSeen == nil {
		r.VersionsSeen = map[string]spec.Versions{}
	}
	for node, vs := range r.VersionsSeen {
		if vs == nil {
			r.VersionsSeen[node] = spec.Versions{}
		}
	}
	return spec.Checkpoint{
		V:               r.V,
		ID:              id,
		TS:              r.TS,
		ChannelVersions: r.ChannelVersions,
		VersionsSeen:    r.VersionsSeen,
		UpdatedChannels: r.UpdatedChannels,
	}, nil
}

// metadataCodec encodes the exact copy of metadata (metadata_exact). It is
// fixed rather than the saver's serde: [WithSerde] is for channel and write
// values, and metadata must read back the same whatever serde a saver of
// the schema was opened with.
var metadataCodec spec.Serde = spec.MsgpackSerde{}

// decodeExactMetadata decodes an exact metadata copy. Versions of this
// package before metadataCodec wrote it with the saver's serde: when data
// is not a map in metadataCodec's encoding, serde is tried as well, so a
// schema written with a custom serde stays readable.
func decodeExactMetadata(data []byte, serde spec.Serde) (map[string]any, error) {
	v, err := metadataCodec.Decode(data)
	if m, ok := v.(map[string]any); ok && err == nil {
		return m, nil
	}
	if _, fixed := serde.(spec.MsgpackSerde); !fixed {
		if lv, lerr := serde.Decode(data); lerr == nil {
			if m, ok := lv.(map[string]any); ok {
				return m, nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("decoded %T, want a map", v)
}

// The jsonb copy of metadata exists only to filter in SQL. It must make
// PostgreSQL's jsonb equality coincide with spec.Equal, which takes two
// adjustments:
//
//   - jsonb cannot hold U+0000. Every string (keys included, at every depth)
//     goes through escapeNUL, an injective rewrite: NUL becomes "\x01" "0"
//     and "\x01" becomes "\x01" "1". Filter keys and values are rewritten the
//     same way, so equal strings stay equal and different ones different.
//   - jsonb compares numbers as numeric, exactly. Integers are written in
//     full. A float64 that is an integer is written as its exact decimal
//     expansion (the shortest round-trip form of 2^60+256 would read back as
//     a different integer and could equal an unrelated int64); other floats
//     use their shortest round-trip form, which two floats share only when
//     they are equal and which is never an integer.
//
// The exact metadata, types included, is read back from metadata_exact.

const nulEscape = '\x01'

// escapeNUL rewrites s so that it holds no NUL byte; see above.
func escapeNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 && strings.IndexByte(s, nulEscape) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteByte(nulEscape)
			b.WriteByte('0')
		case nulEscape:
			b.WriteByte(nulEscape)
			b.WriteByte('1')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// filterJSON encodes a normalised metadata value as the jsonb text described
// above.
func filterJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendFilterJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendFilterJSON(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("metadata number %v: %w", x, spec.ErrUnsupportedValue)
		}
		if x == math.Trunc(x) {
			buf.WriteString(new(big.Float).SetFloat64(x).Text('f', 0))
		} else {
			buf.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case string:
		appendJSONString(buf, x)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := appendFilterJSON(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			appendJSONString(buf, k)
			buf.WriteByte(':')
			if err := appendFilterJSON(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case spec.Metadata:
		return appendFilterJSON(buf, map[string]any(x))
	default:
		return fmt.Errorf("metadata value of type %T: %w", v, spec.ErrUnsupportedValue)
	}
	return nil
}

func appendJSONString(buf *bytes.Buffer, s string) {
	// json.Marshal of a string cannot fail; it escapes control characters
	// and keeps the UTF-8 that normalisation already validated.
	b, _ := json.Marshal(escapeNUL(s))
	buf.Write(b)
}
