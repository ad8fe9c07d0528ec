// Package fastvalue decodes the commonest stored values without going
// through a MessagePack decoder.
//
// [spec.MsgpackSerde.Decode] builds a decoder, reads a string into a fresh
// buffer and copies it again into a Go string, then normalises the result.
// For the values graphs store most (strings such as message text, small
// integers, booleans, nil), the encoded form says everything: Decode reads
// those directly, with one allocation for a string and none otherwise, and
// gives exactly what the serde would. Everything else, and every value of
// another serde, goes to the serde.
package fastvalue

import (
	"encoding/binary"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Decode returns serde.Decode(data). When serde is the default
// [spec.MsgpackSerde] and data is a whole MessagePack string, positive or
// negative fixint, boolean or nil, it decodes data itself.
//
// data is not retained: a caller may pass a buffer it reuses (such as
// database/sql's RawBytes) when Aliases(serde) is false.
func Decode(serde spec.Serde, data []byte) (any, error) {
	if _, ok := serde.(spec.MsgpackSerde); ok {
		if v, ok := direct(data); ok {
			return v, nil
		}
	}
	return serde.Decode(data)
}

// Immutable returns the value of data and true when serde is the default
// [spec.MsgpackSerde] and data holds a string, small integer, boolean or
// nil: a value that callers may share, as nobody can modify it. It returns
// false for every other value, which the caller decodes with Decode for
// each reader.
func Immutable(serde spec.Serde, data []byte) (any, bool) {
	if _, ok := serde.(spec.MsgpackSerde); !ok {
		return nil, false
	}
	return direct(data)
}

// Aliases reports whether values decoded by serde may share memory with the
// encoded bytes: false for the default serde, whose decoder copies strings
// and byte strings, true (unknown) for any other.
func Aliases(serde spec.Serde) bool {
	_, ok := serde.(spec.MsgpackSerde)
	return !ok
}

func direct(data []byte) (any, bool) {
	if len(data) == 0 {
		return nil, false
	}
	b := data[0]
	switch {
	case b <= 0x7f: // positive fixint
		if len(data) == 1 {
			return int64(b), true
		}
	case b >= 0xe0: // negative fixint
		if len(data) == 1 {
			return int64(int8(b)), true
		}
	case b >= 0xa0 && b <= 0xbf: // fixstr
		return str(data, 1, int(b&0x1f))
	case b == 0xd9: // str 8
		if len(data) >= 2 {
			return str(data, 2, int(data[1]))
		}
	case b == 0xda: // str 16
		if len(data) >= 3 {
			return str(data, 3, int(binary.BigEndian.Uint16(data[1:])))
		}
	case b == 0xdb: // str 32
		if len(data) >= 5 {
			n := binary.BigEndian.Uint32(data[1:])
			if uint64(n) == uint64(len(data)-5) {
				return string(data[5:]), true
			}
		}
	case b == 0xc0:
		if len(data) == 1 {
			return nil, true
		}
	case b == 0xc2, b == 0xc3:
		if len(data) == 1 {
			return b == 0xc3, true
		}
	}
	return nil, false
}

// str returns the string of n bytes after a header of h bytes when that is
// exactly data.
func str(data []byte, h, n int) (any, bool) {
	if len(data) != h+n {
		return nil, false
	}
	return string(data[h:]), true
}
