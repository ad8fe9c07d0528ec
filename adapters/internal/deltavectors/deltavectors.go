// Package deltavectors holds MessagePack test vectors of delta snapshots
// ([spec.DeltaSnapshot], extension type [spec.MsgpackExtDeltaSnapshot]):
// bytes LangGraph Python wrote, and malformed extensions that no reader may
// take for a snapshot. The tests of msgpackread and of the adapters' read
// paths share them, so that every reader is checked against the same bytes.
//
// It is an ordinary package, not a _test file, so that tests in other
// packages can import it; nothing outside tests uses it.
package deltavectors

import (
	"encoding/hex"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Vector is one encoded value.
type Vector struct {
	// Name says what the bytes are.
	Name string
	// Hex is the MessagePack encoding, in hexadecimal.
	Hex string
	// Want is what [spec.MsgpackSerde] decodes Hex to; nil for a
	// malformed vector.
	Want any
}

// Bytes returns the decoded Hex. It panics on a vector that is not
// hexadecimal, which is a bug in this package.
func (v Vector) Bytes() []byte {
	b, err := hex.DecodeString(v.Hex)
	if err != nil {
		panic("deltavectors: " + v.Name + ": " + err.Error())
	}
	return b
}

// Python returns the bytes LangGraph Python 1.x's
// JsonPlusSerializer.dumps_typed produced (its "msgpack" type) for delta
// snapshots, with their decoded values. Each call returns fresh values.
func Python() []Vector {
	return []Vector{
		{
			Name: `Python _DeltaSnapshot([1, "a"])`,
			Hex:  "d6079201a161",
			Want: spec.DeltaSnapshot{Value: []any{int64(1), "a"}},
		},
		{
			Name: `Python {"x": _DeltaSnapshot({"k": [_DeltaSnapshot(2)]})}`,
			Hex:  "81a178c7070781a16b91d40702",
			Want: map[string]any{"x": spec.DeltaSnapshot{Value: map[string]any{
				"k": []any{spec.DeltaSnapshot{Value: int64(2)}},
			}}},
		},
	}
}

// Malformed returns extensions that are not well-formed delta snapshots:
// readers must refuse them (and leave them to the serde, which rejects them
// or decodes them as something else). Want is nil.
func Malformed() []Vector {
	return []Vector{
		{Name: "another extension type", Hex: "d40501"},
		{Name: "payload longer than its value", Hex: "d5070102"},
		{Name: "payload shorter than its value", Hex: "d50792a1"},
		{Name: "payload past the end", Hex: "c70a07a161"},
		{Name: "truncated", Hex: "d607"},
		{Name: "truncated length", Hex: "c807"},
	}
}

// Ours returns snapshots as [spec.MsgpackSerde] encodes them: empty, a
// scalar, a list, a map of mixed values, and a snapshot of a snapshot of
// bytes inside a list.
func Ours() []Vector {
	var out []Vector
	for _, v := range []any{
		spec.DeltaSnapshot{},
		spec.DeltaSnapshot{Value: "s"},
		spec.DeltaSnapshot{Value: []any{int64(1)}},
		spec.DeltaSnapshot{Value: map[string]any{"l": []any{int64(1), 2.5, "s"}}},
		[]any{spec.DeltaSnapshot{Value: spec.DeltaSnapshot{Value: []byte("bin")}}},
	} {
		data, err := spec.DefaultSerde().Encode(v)
		if err != nil {
			panic("deltavectors: encoding our own snapshot: " + err.Error())
		}
		out = append(out, Vector{Name: "ours", Hex: hex.EncodeToString(data), Want: v})
	}
	return out
}

// All returns the vectors of Python, Malformed and Ours.
func All() []Vector {
	return append(append(Python(), Malformed()...), Ours()...)
}
