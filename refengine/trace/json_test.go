package trace_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Values that plain JSON would lose keep their type through a trace file:
// byte strings, whole and non-finite floats, maps that look like tags, and
// delta snapshots, in channel values, writes, metadata and filters.
func TestTraceKeepsValueTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"bytes", []byte{0, 1, 2, 255}},
		{"whole float", 2.0},
		{"negative zero", math.Copysign(0, -1)},
		{"infinity", math.Inf(1)},
		{"minus infinity", math.Inf(-1)},
		{"fraction", 1.5},
		{"large integer", int64(math.MaxInt64)},
		{"tag-like map", map[string]any{"$bytes": "AAE="}},
		{"tag-like map of a float", map[string]any{"$float": 1.0}},
		{"two-key map", map[string]any{"$a": int64(1), "b": "c"}},
		{"snapshot", spec.DeltaSnapshot{Value: []any{[]byte("x"), 3.0}}},
		{"nested", []any{map[string]any{"k": []byte("v")}, 4.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := &spec.Checkpoint{V: 4, ID: "c1", ChannelValues: map[string]any{"a": tc.v}}
			calls := []trace.Call{
				{Method: trace.MethodPut, Config: spec.Config{ThreadID: "t"}, Checkpoint: cp, Metadata: spec.Metadata{"m": tc.v}},
				{Method: trace.MethodPutWrites, Config: spec.Config{ThreadID: "t", CheckpointID: "c1"}, Writes: []spec.Write{{Channel: "w", Value: tc.v}}},
				{Method: trace.MethodList, List: &spec.ListOptions{ThreadID: "t", Filter: map[string]any{"m": tc.v}}},
			}
			data, err := trace.Marshal(calls)
			if err != nil {
				t.Fatal(err)
			}
			back, err := trace.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []any{
				back[0].Checkpoint.ChannelValues["a"], back[0].Metadata["m"], back[1].Writes[0].Value, back[2].List.Filter["m"],
			} {
				if !reflect.DeepEqual(got, tc.v) && !(isNegZero(tc.v) && isNegZero(got)) {
					t.Errorf("read back %#v, want %#v; trace:\n%s", got, tc.v, data)
				}
			}
		})
	}
	// A plain map with a tag's key and a malformed value stays a map.
	back, err := trace.Unmarshal([]byte(`{"calls":[{"method":"PutWrites","config":{"thread_id":"t","checkpoint_ns":""},"writes":[{"channel":"w","value":{"$bytes":"%%%"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := back[0].Writes[0].Value.(map[string]any); !ok || !strings.Contains(m["$bytes"].(string), "%") {
		t.Errorf("malformed tag read as %#v", back[0].Writes[0].Value)
	}
}

func isNegZero(v any) bool {
	f, ok := v.(float64)
	return ok && f == 0 && math.Signbit(f)
}
