package spec

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Serde encodes plain values for storage and decodes them back. Decode must
// return exactly the normalised value that was encoded, types included.
type Serde interface {
	Encode(v any) ([]byte, error)
	Decode(data []byte) (any, error)
}

// DefaultSerde returns the serde adapters use unless configured otherwise:
// [MsgpackSerde], MessagePack being LangGraph's own wire format. It preserves
// types: int64 stays int64, []byte stays []byte, nil stays nil and an empty
// list stays an empty list.
func DefaultSerde() Serde { return MsgpackSerde{} }

// MsgpackSerde is a type-preserving MessagePack [Serde].
type MsgpackSerde struct{}

// Encode normalises v and encodes it. Values outside the plain-value model
// give an error wrapping [ErrUnsupportedValue].
func (MsgpackSerde) Encode(v any) ([]byte, error) {
	nv, err := Normalize(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	if err := enc.Encode(nv); err != nil {
		return nil, fmt.Errorf("msgpack encode: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode decodes data produced by Encode.
func (MsgpackSerde) Decode(data []byte) (any, error) {
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) { return d.DecodeMap() })
	v, err := dec.DecodeInterface()
	if err != nil {
		return nil, fmt.Errorf("msgpack decode: %w", err)
	}
	return Normalize(v)
}
