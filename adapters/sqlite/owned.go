package sqlite

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/checkpointkit/checkpointkit/adapters/internal/fastvalue"
	"github.com/checkpointkit/checkpointkit/adapters/internal/msgpackread"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The read path gets every column as a []byte (BLOB) or string (TEXT) that
// go-sqlite3 has just copied out of SQLite and that nobody else holds (see
// rawConn). A MessagePack string in such a buffer is handed out as a
// string over the buffer itself instead of a second copy: the buffer is
// never written, so the string is as immutable as any other.

// immutableOwned is [fastvalue.Immutable] for a buffer the caller owns: a
// string value shares data's memory.
func immutableOwned(serde spec.Serde, data []byte) (any, bool) {
	if _, ok := serde.(spec.MsgpackSerde); !ok {
		return nil, false
	}
	if s, ok := msgpackString(data); ok {
		return s, true
	}
	if n, ok := msgpackInt(data); ok {
		return n, true
	}
	return fastvalue.Immutable(serde, data)
}

// decodeOwned is serde.Decode(data) for a buffer the caller owns and will
// not modify. With the default serde, values made of nil, booleans,
// integers, float64s, strings, lists, string-keyed maps and delta
// snapshots are read directly (msgpackread), their strings sharing data:
// no general decoder, no copy of a string. Any other serde gets a copy of
// data: it may return values that alias its input, which a caller could
// then modify, and data may be shared with other strings of the read (see
// columnBytes).
func decodeOwned(serde spec.Serde, data []byte) (any, error) {
	if _, ok := serde.(spec.MsgpackSerde); !ok {
		return serde.Decode(slices.Clone(data))
	}
	if v, ok := readOwned(data); ok {
		return v, nil
	}
	return serde.Decode(data)
}

// readOwned reads data whole as [spec.MsgpackSerde] decodes it, when
// msgpackread handles every form in it.
func readOwned(data []byte) (any, bool) {
	if s, ok := msgpackString(data); ok {
		return s, true
	}
	r := msgpackread.New(data)
	v, ok := r.Value()
	return v, ok && r.Done()
}

// columnBytes returns the bytes of a TEXT or BLOB column without copying
// them (nil for anything else). A TEXT column arrives as a string, so its
// bytes must only be read, never written: the read path's readers never
// write, and decodeOwned copies them for any serde but the default one.
func columnBytes(v driver.Value) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		return unsafe.Slice(unsafe.StringData(x), len(x))
	}
	return nil
}

// msgpackString returns the string data encodes, over data's memory, when
// data is exactly one MessagePack string.
func msgpackString(data []byte) (string, bool) {
	if len(data) == 0 {
		return "", false
	}
	var h, n int
	switch b := data[0]; {
	case b >= 0xa0 && b <= 0xbf:
		h, n = 1, int(b&0x1f)
	case b == 0xd9 && len(data) >= 2:
		h, n = 2, int(data[1])
	case b == 0xda && len(data) >= 3:
		h, n = 3, int(binary.BigEndian.Uint16(data[1:]))
	case b == 0xdb && len(data) >= 5:
		h, n = 5, int(binary.BigEndian.Uint32(data[1:]))
	default:
		return "", false
	}
	if n < 0 || len(data) != h+n {
		return "", false
	}
	if n == 0 {
		return "", true
	}
	return unsafe.String(&data[h], n), true
}

// msgpackInt returns the integer data encodes when data is exactly one
// MessagePack integer of a sized form that fits an int64 (the serde
// normalises every integer to int64).
func msgpackInt(data []byte) (int64, bool) {
	if len(data) < 2 {
		return 0, false
	}
	b := data[1:]
	switch data[0] {
	case 0xcc:
		return int64(b[0]), len(b) == 1
	case 0xd0:
		return int64(int8(b[0])), len(b) == 1
	case 0xcd, 0xd1:
		if len(b) != 2 {
			return 0, false
		}
		u := binary.BigEndian.Uint16(b)
		if data[0] == 0xd1 {
			return int64(int16(u)), true
		}
		return int64(u), true
	case 0xce, 0xd2:
		if len(b) != 4 {
			return 0, false
		}
		u := binary.BigEndian.Uint32(b)
		if data[0] == 0xd2 {
			return int64(int32(u)), true
		}
		return int64(u), true
	case 0xcf, 0xd3:
		if len(b) != 8 {
			return 0, false
		}
		u := binary.BigEndian.Uint64(b)
		if data[0] == 0xcf && u > math.MaxInt64 {
			return 0, false
		}
		return int64(u), true
	}
	return 0, false
}

// decodeMetadataText decodes a metadata column (TEXT, read as a string;
// a BLOB is accepted too).
func decodeMetadataText(v driver.Value) (spec.Metadata, error) {
	switch x := v.(type) {
	case string:
		return parseMetadata(x)
	case []byte:
		return decodeMetadataBytes(x)
	}
	return nil, fmt.Errorf("decode metadata: column holds %T", v)
}
