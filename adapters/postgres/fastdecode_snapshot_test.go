package postgres

import (
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/deltavectors"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestDecodeOwnedDeltaSnapshots checks that the page decoder reads delta
// snapshots (ours and LangGraph Python's, malformed ones too) exactly as
// the serde does.
func TestDecodeOwnedDeltaSnapshots(t *testing.T) {
	serde := spec.DefaultSerde()
	vectors := append(deltavectors.Python(), deltavectors.Malformed()...)
	for _, v := range []any{
		spec.DeltaSnapshot{},
		spec.DeltaSnapshot{Value: map[string]any{"l": []any{int64(1), 2.5, "s"}}},
		[]any{spec.DeltaSnapshot{Value: spec.DeltaSnapshot{Value: []byte("bin")}}},
	} {
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
	}
}
