package sqlite

import (
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/deltavectors"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestDecodeOwnedDeltaSnapshots checks that the read path decodes delta
// snapshots (ours, LangGraph Python's, malformed ones) exactly as the serde
// does, and never shares one among readers as an immutable value.
func TestDecodeOwnedDeltaSnapshots(t *testing.T) {
	serde := spec.DefaultSerde()
	vectors := append(deltavectors.Python(), deltavectors.Malformed()...)
	for _, v := range []any{spec.DeltaSnapshot{}, spec.DeltaSnapshot{Value: "s"}, spec.DeltaSnapshot{Value: []any{int64(1)}}} {
		data, err := serde.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		vectors = append(vectors, deltavectors.Vector{Name: "ours", Hex: hex.EncodeToString(data)})
	}
	for _, v := range vectors {
		data := v.Bytes()
		want, wantErr := serde.Decode(data)
		got, gotErr := decodeOwned(serde, data)
		if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: decodeOwned(%s) = %#v, %v; serde gives %#v, %v", v.Name, v.Hex, got, gotErr, want, wantErr)
		}
		if p, ok := immutableOwned(serde, data); ok {
			t.Errorf("%s: immutableOwned(%s) = %#v: a snapshot is not shared", v.Name, v.Hex, p)
		}
	}
}
