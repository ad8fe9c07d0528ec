package sqlite

import (
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
	for _, v := range deltavectors.All() {
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
