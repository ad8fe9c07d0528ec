package postgres

import (
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestDecodeOwnedDeltaSnapshots checks that the page decoder reads delta
// snapshots (ours and LangGraph Python's, malformed ones too) exactly as
// the serde does.
func TestDecodeOwnedDeltaSnapshots(t *testing.T) {
	serde := spec.DefaultSerde()
	inputs := []string{
		"d6079201a161",               // Python: _DeltaSnapshot([1, "a"])
		"81a178c7070781a16b91d40702", // Python: {"x": _DeltaSnapshot({"k": [_DeltaSnapshot(2)]})}
		"d5070102",                   // payload longer than its value
		"c70a07a161",                 // payload past the end
		"d40501",                     // another extension type
	}
	for _, v := range []any{
		spec.DeltaSnapshot{},
		spec.DeltaSnapshot{Value: map[string]any{"l": []any{int64(1), 2.5, "s"}}},
		[]any{spec.DeltaSnapshot{Value: spec.DeltaSnapshot{Value: []byte("bin")}}},
	} {
		data, err := serde.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, hex.EncodeToString(data))
	}
	for _, h := range inputs {
		data, _ := hex.DecodeString(h)
		want, wantErr := serde.Decode(data)
		got, gotErr := decodeOwned(serde, data)
		if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("decodeOwned(%s) = %#v, %v; serde gives %#v, %v", h, got, gotErr, want, wantErr)
		}
	}
}
