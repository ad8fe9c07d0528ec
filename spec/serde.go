package spec

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
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

// MsgpackSerde is a type-preserving MessagePack [Serde]. A [DeltaSnapshot]
// is MessagePack extension type [MsgpackExtDeltaSnapshot] whose payload is
// the MessagePack of its Value, as LangGraph Python stores `_DeltaSnapshot`,
// so that each side decodes the other's snapshots.
type MsgpackSerde struct{}

// MsgpackExtDeltaSnapshot is the MessagePack extension type of a
// [DeltaSnapshot] (LangGraph Python's EXT_DELTA_SNAPSHOT).
const MsgpackExtDeltaSnapshot = 7

// Encode normalises v and encodes it. Values outside the plain-value model
// give an error wrapping [ErrUnsupportedValue].
func (MsgpackSerde) Encode(v any) ([]byte, error) {
	nv, err := Normalize(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	if err := encodeValue(enc, nv); err != nil {
		return nil, fmt.Errorf("msgpack encode: %w", err)
	}
	return buf.Bytes(), nil
}

// encodeValue writes a normalised value: lists, maps and snapshots by
// itself (the library knows nothing of snapshots, even nested ones), the
// rest as the library encodes them.
func encodeValue(enc *msgpack.Encoder, v any) error {
	switch x := v.(type) {
	case []any:
		if err := enc.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, e := range x {
			if err := encodeValue(enc, e); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		if err := enc.EncodeMapLen(len(x)); err != nil {
			return err
		}
		for k, e := range x {
			if err := enc.EncodeString(k); err != nil {
				return err
			}
			if err := encodeValue(enc, e); err != nil {
				return err
			}
		}
		return nil
	case DeltaSnapshot:
		var payload bytes.Buffer
		if err := encodeValue(msgpack.NewEncoder(&payload), x.Value); err != nil {
			return err
		}
		if err := enc.EncodeExtHeader(MsgpackExtDeltaSnapshot, payload.Len()); err != nil {
			return err
		}
		_, err := enc.Writer().Write(payload.Bytes())
		return err
	}
	return enc.Encode(v)
}

// Decode decodes data produced by Encode, or by LangGraph Python's
// serialiser for values of the plain-value model (extension type
// [MsgpackExtDeltaSnapshot] included). Other extension types give an error
// wrapping [ErrUnsupportedValue].
func (MsgpackSerde) Decode(data []byte) (any, error) {
	rd := bytes.NewReader(data)
	d := decoder{dec: msgpack.NewDecoder(rd), rd: rd}
	v, err := d.value(0)
	if err != nil {
		return nil, fmt.Errorf("msgpack decode: %w", err)
	}
	return Normalize(v)
}

// decoder reads one MessagePack value. Lists, maps and extensions it reads
// itself, to find snapshots at any depth; scalars go to the library.
type decoder struct {
	dec *msgpack.Decoder
	rd  *bytes.Reader // read by dec directly, unbuffered
}

// allocHint caps what a length read from the input may preallocate.
const allocHint = 1 << 12

// value reads the value at the given depth (the lists, maps and snapshots
// around it).
func (d *decoder) value(depth int) (any, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		return d.list(depth + 1)
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		return d.mapOf(depth + 1)
	case msgpcode.IsExt(c):
		return d.ext(depth + 1)
	}
	return d.dec.DecodeInterface()
}

func (d *decoder) deep(depth int) error {
	if depth > MaxValueDepth {
		return fmt.Errorf("lists and maps nested deeper than %d levels: %w", MaxValueDepth, ErrUnsupportedValue)
	}
	return nil
}

func (d *decoder) list(depth int) (any, error) {
	if err := d.deep(depth); err != nil {
		return nil, err
	}
	n, err := d.dec.DecodeArrayLen()
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, min(n, allocHint))
	for range n {
		e, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (d *decoder) mapOf(depth int) (any, error) {
	if err := d.deep(depth); err != nil {
		return nil, err
	}
	n, err := d.dec.DecodeMapLen()
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, min(n, allocHint))
	for range n {
		k, err := d.dec.DecodeString()
		if err != nil {
			return nil, err
		}
		if out[k], err = d.value(depth); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ext reads an extension: a snapshot, whose payload must be exactly one
// value, or an error for any other type.
func (d *decoder) ext(depth int) (any, error) {
	id, n, err := d.dec.DecodeExtHeader()
	if err != nil {
		return nil, err
	}
	if id != MsgpackExtDeltaSnapshot {
		return nil, fmt.Errorf("extension type %d: %w", id, ErrUnsupportedValue)
	}
	if err := d.deep(depth); err != nil {
		return nil, err
	}
	if n > d.rd.Len() {
		return nil, fmt.Errorf("delta snapshot of %d bytes, %d left", n, d.rd.Len())
	}
	start := d.rd.Len()
	v, err := d.value(depth)
	if err != nil {
		return nil, err
	}
	if used := start - d.rd.Len(); used != n {
		return nil, fmt.Errorf("delta snapshot payload of %d bytes holds a value of %d", n, used)
	}
	return DeltaSnapshot{Value: v}, nil
}
