package sqlite

import (
	"math"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestMetadataCodecKeepsTypes checks the JSON round trip that encoding/json
// would get wrong: integral floats, integers beyond 2^53, and nesting.
func TestMetadataCodecKeepsTypes(t *testing.T) {
	in := spec.Metadata{
		"int":         int64(1),
		"float":       1.0,
		"negzero":     math.Copysign(0, -1),
		"big":         int64(math.MaxInt64),
		"small":       int64(math.MinInt64),
		"beyond53":    int64(1<<53 + 1),
		"huge":        1e300,
		"tiny":        5e-324,
		"frac":        0.1,
		"bool":        true,
		"null":        nil,
		"str":         "a\"b\\c\n\x01\u2028é",
		"list":        []any{int64(1), 2.0, "x", []any{}, map[string]any{}},
		"map":         map[string]any{"k": 3.5, "n": int64(-7), "deep": map[string]any{"z": nil}},
		"a.b":         "dot",
		`q"uote$`:     "key",
		"":            "empty key",
		"\x00nul-key": "x",
	}
	text, err := encodeMetadata(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeMetadata(text)
	if err != nil {
		t.Fatalf("decode %s: %v", text, err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip changed metadata\n in: %#v\nout: %#v\njson: %s", in, out, text)
	}
	if math.Signbit(out["negzero"].(float64)) != true {
		t.Errorf("-0.0 lost its sign")
	}
}

func TestMetadataCodecRejectsNonJSON(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), []byte("x"), struct{}{}} {
		if _, err := encodeMetadata(spec.Metadata{"k": v}); err == nil {
			t.Errorf("encodeMetadata(%#v) succeeded", v)
		}
	}
}

// TestBodyCodec checks that everything but the values survives, with nil
// UpdatedChannels ("unknown") kept apart from an empty list.
func TestBodyCodec(t *testing.T) {
	for _, uc := range [][]string{nil, {}, {"a", "b"}} {
		cp := spec.Checkpoint{
			V: 4, ID: "id", TS: "2026-11-22T00:00:00Z",
			ChannelValues:   map[string]any{"a": "not stored in the body"},
			ChannelVersions: spec.Versions{"a": "00001.5", "b": "2"},
			VersionsSeen:    map[string]spec.Versions{"node": {"a": "1"}, "empty": {}},
			UpdatedChannels: uc,
		}
		data, err := encodeBody(cp)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeBody("id", data)
		if err != nil {
			t.Fatal(err)
		}
		cp.ChannelValues = nil
		if !reflect.DeepEqual(got, cp) {
			t.Errorf("body round trip:\n got %#v\nwant %#v", got, cp)
		}
	}
	// Nil maps come back as empty maps, as from the in-memory saver.
	got, err := decodeBody("x", mustEncodeBody(t, spec.Checkpoint{ID: "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.ChannelVersions == nil || got.VersionsSeen == nil {
		t.Errorf("nil maps not returned as empty maps: %#v", got)
	}
}

func mustEncodeBody(t *testing.T, cp spec.Checkpoint) []byte {
	t.Helper()
	data, err := encodeBody(cp)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
