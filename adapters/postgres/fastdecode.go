package postgres

import (
	"slices"

	"github.com/checkpointkit/checkpointkit/adapters/internal/msgpackread"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The read path decodes a checkpoint record, its exact metadata and its
// values for every row of a page. The general MessagePack decoder works by
// reflection and copies every string twice, which cost more than the page
// statement's server time, so the decoders here read the forms this
// package writes directly, with strings that share the memory of the row
// they come from (a buffer the page owns and never writes; see rawTuple).
// Whatever they do not expect goes to the general decoder, which stays the
// rule: fastdecode_test.go checks that both always agree.

// parseRecord is decodeRecord for a buffer the caller never writes again.
func parseRecord(id string, data []byte) (spec.Checkpoint, error) {
	r := msgpackread.New(data)
	if cp, ok := readRecord(&r, id); ok && r.Done() {
		return cp, nil
	}
	return decodeRecord(id, data)
}

// parseExactMetadata is decodeExactMetadata for a buffer the caller never
// writes again.
func parseExactMetadata(data []byte, serde spec.Serde) (map[string]any, error) {
	r := msgpackread.New(data)
	if m, ok := r.Map(); ok && r.Done() {
		return m, nil
	}
	if _, fixed := serde.(spec.MsgpackSerde); !fixed {
		// The fallback may decode with the saver's serde, which may alias
		// its input: give it bytes of its own, not the page's.
		data = slices.Clone(data)
	}
	return decodeExactMetadata(data, serde)
}

// decodeOwned is serde.Decode(data) for a buffer the caller never writes
// again: with the default serde, scalars, strings, lists, string-keyed maps
// and delta snapshots are read directly. Any other serde gets a copy of
// data: it may return values that alias its input, which a caller could
// then modify, and data shares its memory with the rest of the page.
func decodeOwned(serde spec.Serde, data []byte) (any, error) {
	if _, ok := serde.(spec.MsgpackSerde); !ok {
		return serde.Decode(slices.Clone(data))
	}
	r := msgpackread.New(data)
	if v, ok := r.Value(); ok && r.Done() {
		return v, nil
	}
	return serde.Decode(data)
}

// readRecord reads the record struct as encodeRecord writes it.
func readRecord(r *msgpackread.Reader, id string) (spec.Checkpoint, bool) {
	cp := spec.Checkpoint{ID: id}
	n, ok := r.MapLen()
	if !ok {
		return cp, false
	}
	for range n {
		key, ok := r.Str()
		if !ok {
			return cp, false
		}
		switch key {
		case "v":
			v, ok := r.Int()
			if !ok || v != int64(int(v)) {
				return cp, false
			}
			cp.V = int(v)
		case "ts":
			if cp.TS, ok = r.Str(); !ok {
				return cp, false
			}
		case "cv":
			if cp.ChannelVersions, ok = r.Versions(); !ok {
				return cp, false
			}
		case "vs":
			if r.Nil() {
				continue
			}
			m, ok := r.MapLen()
			if !ok {
				return cp, false
			}
			cp.VersionsSeen = make(map[string]spec.Versions, m)
			for range m {
				node, ok := r.Str()
				if !ok {
					return cp, false
				}
				vs, ok := r.Versions()
				if !ok {
					return cp, false
				}
				if vs == nil {
					vs = spec.Versions{}
				}
				cp.VersionsSeen[node] = vs
			}
		case "uc":
			if r.Nil() {
				cp.UpdatedChannels = nil
				continue
			}
			m, ok := r.ArrayLen()
			if !ok {
				return cp, false
			}
			cp.UpdatedChannels = make([]string, m)
			for j := range m {
				if cp.UpdatedChannels[j], ok = r.Str(); !ok {
					return cp, false
				}
			}
		default:
			return cp, false
		}
	}
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = spec.Versions{}
	}
	if cp.VersionsSeen == nil {
		cp.VersionsSeen = map[string]spec.Versions{}
	}
	return cp, true
}
