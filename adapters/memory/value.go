package memory

import "github.com/checkpointkit/checkpointkit/spec"

// value is one stored channel or pending-write value.
//
// With the default serde it is the normalised value itself (tree, maps
// held as [frozenMap]), built once when stored and never modified
// afterwards: a read hands out a copy of its lists, maps, delta snapshots
// and byte strings, and shares the rest (strings, numbers, booleans and
// nil), which no reader can modify. That is what the serde would give
// back, since the [spec.Serde] contract is that Decode returns exactly the
// normalised value that was encoded, without the cost of decoding
// MessagePack on every read.
//
// With any other serde it is the encoded bytes (data), decoded on every
// read, as that serde may give values of its own making.
type value struct {
	tree    any
	data    []byte
	encoded bool
}

// store turns v into a value to keep: normalised with the default serde,
// encoded with any other. Its errors are the serde's (the default serde's
// Encode returns [spec.Normalize]'s errors as they are).
func (m *Saver) store(v any) (value, error) {
	if _, ok := m.serde.(spec.MsgpackSerde); ok {
		tree, err := spec.Normalize(v)
		if err != nil {
			return value{}, err
		}
		return value{tree: freeze(tree)}, nil
	}
	data, err := m.serde.Encode(v)
	if err != nil {
		return value{}, err
	}
	return value{data: data, encoded: true}, nil
}

// load returns the value for a reader: a copy that shares nothing mutable
// with what the saver keeps.
func (m *Saver) load(v value) (any, error) {
	if v.encoded {
		return m.serde.Decode(v.data)
	}
	return copyTree(v.tree), nil
}

// frozenMap is how a stored tree holds a map: its entries in a slice, a
// third to a half of the memory of a Go map of a few entries. copyTree
// turns it back into a map[string]any.
type frozenMap []mapEntry

type mapEntry struct {
	key string
	val any
}

// freeze returns v, a normalised value the saver owns alone, with every
// map turned into a [frozenMap]. It reuses v's lists.
func freeze(v any) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = freeze(e)
		}
		return x
	case map[string]any:
		out := make(frozenMap, 0, len(x))
		for k, e := range x {
			out = append(out, mapEntry{k, freeze(e)})
		}
		return out
	case spec.DeltaSnapshot:
		return spec.DeltaSnapshot{Value: freeze(x.Value)}
	}
	return v
}

// copyTree returns the value a stored tree v stands for, sharing nothing a
// caller can modify with it: lists, maps, delta snapshots and byte strings
// are made afresh, at any depth; strings, numbers, booleans and nil, being
// immutable, are shared.
func copyTree(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if mutable(e) {
				e = copyTree(e)
			}
			out[i] = e
		}
		return out
	case frozenMap:
		out := make(map[string]any, len(x))
		for _, e := range x {
			if mutable(e.val) {
				out[e.key] = copyTree(e.val)
			} else {
				out[e.key] = e.val
			}
		}
		return out
	case spec.DeltaSnapshot:
		return spec.DeltaSnapshot{Value: copyTree(x.Value)}
	case []byte:
		return append([]byte{}, x...)
	}
	return v
}

// mutable reports whether copyTree must copy v: whether it is, or holds, a
// list, map or byte string.
func mutable(v any) bool {
	switch v.(type) {
	case nil, string, int64, float64, bool:
		return false
	}
	return true
}
