package mongo

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/checkpointkit/checkpointkit/spec"
)

// docKey builds a document _id from its key parts. Each part is written as
// its byte length, a colon and the part itself, so the encoding is
// injective for arbitrary strings (NULs, '|', ':' and non-UTF-8 bytes
// included) and two different keys never share an _id. Only equality on _id
// is ever used; the order of _id values carries no meaning.
func docKey(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p) + 4
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

func checkpointKey(thread, ns, id string) string { return docKey(thread, ns, id) }

func valueKey(thread, ns, channel string, version spec.Version) string {
	return docKey(thread, ns, channel, string(version))
}

func writeKey(thread, ns, checkpointID, taskID string, idx int) string {
	return docKey(thread, ns, checkpointID, taskID, strconv.Itoa(idx))
}

// canonical appends an encoding of the normalised value v to buf such that
// two values have the same encoding exactly when [spec.Equal] holds for
// them: numbers are encoded by value (an integral float64 that fits in
// int64 is encoded as that integer, so 1 and 1.0 coincide), booleans,
// strings and numbers have distinct tags, lists keep their order, maps
// are written with sorted keys and a delta snapshot is tagged apart from
// its value.
func canonical(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, 'n')
	case bool:
		if x {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case int64:
		return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(x))
	case float64:
		// [-2^63, 2^63) is exactly the int64 range; both bounds are exact
		// float64 values.
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(int64(x)))
		}
		return binary.BigEndian.AppendUint64(append(buf, 'd'), math.Float64bits(x))
	case string:
		return append(binary.AppendUvarint(append(buf, 's'), uint64(len(x))), x...)
	case []byte:
		return append(binary.AppendUvarint(append(buf, 'b'), uint64(len(x))), x...)
	case []any:
		buf = binary.AppendUvarint(append(buf, 'l'), uint64(len(x)))
		for _, e := range x {
			buf = canonical(buf, e)
		}
		return buf
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = binary.AppendUvarint(append(buf, 'm'), uint64(len(x)))
		for _, k := range keys {
			buf = canonical(buf, k)
			buf = canonical(buf, x[k])
		}
		return buf
	case spec.Metadata:
		return canonical(buf, map[string]any(x))
	case spec.DeltaSnapshot:
		return canonical(append(buf, 'D'), x.Value)
	}
	// Not reachable for normalised values; keep the encoding total anyway.
	return append(buf, '?')
}

// filterToken is the token stored in a checkpoint's "mdx" array for the
// top-level metadata entry (key, value), and looked up for the filter entry
// (key, value). It is the first 16 bytes of the SHA-256 of the canonical
// encoding of the pair, so equal pairs under [spec.Equal] always share a
// token; a collision between unequal pairs is astronomically unlikely and is
// caught anyway by the exact check List runs on every candidate.
func filterToken(key string, value any) []byte {
	buf := canonical(canonical(make([]byte, 0, 64), key), value)
	sum := sha256.Sum256(buf)
	return sum[:16]
}

// metadataTokens returns the filter tokens of every top-level entry of md.
func metadataTokens(md spec.Metadata) [][]byte {
	toks := make([][]byte, 0, len(md))
	for k, v := range md {
		toks = append(toks, filterToken(k, v))
	}
	slices.SortFunc(toks, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
	return toks
}

// escapeKey makes a metadata key usable as a BSON field name on every
// server: '%' becomes "%25", '$' "%24", '.' "%2E" and NUL "%00". MongoDB
// cannot address '$'-prefixed or dotted field names in queries without
// $getField, FerretDB v1 rejects them outright, and BSON field names cannot
// hold NUL.
func escapeKey(k string) string {
	if !strings.ContainsAny(k, "%$.\x00") {
		return k
	}
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		switch c := k[i]; c {
		case '%':
			b.WriteString("%25")
		case '$':
			b.WriteString("%24")
		case '.':
			b.WriteString("%2E")
		case 0:
			b.WriteString("%00")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// bsonMetadata converts normalised metadata to the readable BSON
// sub-document stored in the "metadata" field: keys escaped with escapeKey
// and sorted at every level, values as native BSON types, arrays inside
// arrays wrapped (see nestedArrayKey).
func bsonMetadata(v any) any {
	switch x := v.(type) {
	case spec.Metadata:
		return bsonMetadata(map[string]any(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		d := make(bson.D, 0, len(keys))
		for _, k := range keys {
			d = append(d, bson.E{Key: escapeKey(k), Value: bsonMetadata(x[k])})
		}
		return d
	case []any:
		a := make(bson.A, len(x))
		for i, e := range x {
			if inner, ok := e.([]any); ok {
				// FerretDB v1 rejects arrays nested directly in arrays.
				a[i] = bson.D{{Key: nestedArrayKey, Value: bsonMetadata(inner)}}
				continue
			}
			a[i] = bsonMetadata(e)
		}
		return a
	}
	return v
}

// nestedArrayKey wraps an array that is an element of another array in the
// readable metadata sub-document: [[1], 2] is stored as [{"%array": [1]}, 2].
// No escaped key can start with '%' followed by a letter, so the wrapper
// never collides with a real metadata key.
const nestedArrayKey = "%array"

// blobID names the chunks of a large payload owned by the document ownerKey.
// It depends on the owner and the content, so a retried write reuses the
// same chunks instead of leaving orphans behind.
func blobID(ownerKey string, data []byte) string {
	h := sha256.New()
	h.Write([]byte(ownerKey))
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// copiedBlobID names the copy, made for thread dst, of blob id.
func copiedBlobID(dst, id string) string {
	sum := sha256.Sum256([]byte(docKey(dst, id)))
	return hex.EncodeToString(sum[:16])
}

func chunkKey(blob string, n int) string { return blob + ":" + strconv.Itoa(n) }
