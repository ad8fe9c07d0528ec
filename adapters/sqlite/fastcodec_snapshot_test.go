package sqlite

import (
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestDecodeOwnedDeltaSnapshots checks that the read path decodes delta
// snapshots (ours and LangGraph Python's) as the serde does, and never
// shares one among readers as an immutable value.
func TestDecodeOwnedDeltaSnapshots(t *testing.T) {
	serde := spec.DefaultSerde()
	inputs := []string{
		"d6079201a161",               // Python: _DeltaSnapshot([1, "a"])
		"81a178c7070781a16b91d40702", // Python: {"x": _DeltaSnapshot({"k": [_DeltaSnapshot(2)]})}
	}
	for _, v := range []any{spec.DeltaSnapshot{}, spec.DeltaSnapshot{Value: "s"}, spec.DeltaSnapshot{Value: []any{int64(1)}}} {
		data, err := serde.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, hex.EncodeToString(data))
	}
	for _, h := range inputs {
		data, _ := hex.DecodeString(h)
		want, err := serde.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeOwned(serde, data)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("decodeOwned(%s) = %#v, %v; serde gives %#v", h, got, err, want)
		}
		if v, ok := immutableOwned(serde, data); ok {
			t.Errorf("immutableOwned(%s) = %#v: a snapshot is not shared", h, v)
		}
	}
}
