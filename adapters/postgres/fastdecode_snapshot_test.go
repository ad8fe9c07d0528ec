package postgres

import (
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
	for _, v := range deltavectors.All() {
		data := v.Bytes()
		want, wantErr := serde.Decode(data)
		got, gotErr := decodeOwned(serde, data)
		if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: decodeOwned(%s) = %#v, %v; serde gives %#v, %v", v.Name, v.Hex, got, gotErr, want, wantErr)
		}
	}
}
