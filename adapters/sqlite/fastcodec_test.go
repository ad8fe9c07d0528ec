package sqlite

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestParseMetadataAgrees checks that the read path's metadata parser gives
// exactly what decodeMetadataBytes gives, on the JSON this package writes
// and on JSON it hands to the general decoder (escapes, whitespace, invalid
// UTF-8, deep nesting, malformed text).
func TestParseMetadataAgrees(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	texts := []string{
		`{}`, `{"a":1}`, `{"a":-1.5e3,"b":"x","c":[1,2.0,"y",[],{}],"d":{"e":null,"f":true,"g":false}}`,
		`{"big":9223372036854775807,"over":9223372036854775808,"neg":-9223372036854775808}`,
		`{"f":1.0,"z":-0.0,"t":5e-324,"h":1e300}`,
		`{"esc":"a\"b","nl":"\n","u":"\u00e9"}`, `{ "ws" : 1 }`, "{\"bad\":\"\xff\"}",
		deep, `{"a":1`, `{"a":}`, `[1]`, `{"a":1}x`, `{"a":tru}`, `{"a":01}`, `{"a":1.}`, `{"":"empty"}`,
	}
	md, err := encodeMetadata(spec.Metadata{"source": "loop", "step": int64(3), "parents": map[string]any{"": "1"},
		"list": []any{int64(1), 2.5, nil, "é"}, "n": int64(math.MaxInt64)})
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, md)
	for _, text := range texts {
		want, wantErr := decodeMetadataBytes([]byte(text))
		got, gotErr := parseMetadata(text)
		if (wantErr == nil) != (gotErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("parseMetadata(%q) = %#v, %v; decodeMetadataBytes gives %#v, %v", text, got, gotErr, want, wantErr)
		}
	}
}

// TestParseBodyAgrees checks that the read path's body parser gives exactly
// what decodeBody gives.
func TestParseBodyAgrees(t *testing.T) {
	cps := []spec.Checkpoint{
		{},
		{V: 4, TS: "2026-01-01T00:00:00Z", ChannelVersions: spec.Versions{"a": "1", "b": spec.Version(strings.Repeat("9", 40))}},
		{V: 1 << 20, VersionsSeen: map[string]spec.Versions{"n": {"a": "1"}, "m": nil, "o": {}}, UpdatedChannels: []string{}},
		{V: -3, UpdatedChannels: []string{"a", strings.Repeat("c", 300)}, ChannelVersions: spec.Versions{}},
	}
	many := spec.Versions{}
	for i := range 40 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	cps = append(cps, spec.Checkpoint{ChannelVersions: many})
	for _, cp := range cps {
		data, err := encodeBody(cp)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range [][]byte{data, data[:len(data)-1], append(data[:len(data):len(data)], 0)} {
			want, wantErr := decodeBody("id", d)
			got, gotErr := parseBody("id", d)
			if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
				t.Errorf("parseBody(%x) = %#v, %v; decodeBody gives %#v, %v", d, got, gotErr, want, wantErr)
			}
		}
	}
}

// TestDecodeOwnedAgrees checks that values decoded from an owned buffer are
// exactly what the default serde decodes, for every integer form.
func TestDecodeOwnedAgrees(t *testing.T) {
	serde := spec.DefaultSerde()
	raw := [][]byte{
		{0xcc, 0xff}, {0xd0, 0x80}, {0xcd, 0xff, 0xff}, {0xd1, 0x80, 0x00}, {0xce, 0xff, 0xff, 0xff, 0xff},
		{0xd2, 0x80, 0, 0, 0}, {0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, {0xd3, 0, 0, 0, 0, 0, 0, 0, 9}, {0xcc, 1, 2}, {0xd3, 1},
	}
	for _, v := range []any{int64(0), int64(200), int64(-200), int64(70000), int64(-70000), int64(1 << 40), int64(math.MinInt64),
		"", "a", strings.Repeat("s", 70000), true, nil, 1.5, []any{int64(1)}, map[string]any{"k": "v"}} {
		data, err := serde.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, data)
	}
	for _, data := range raw {
		want, wantErr := serde.Decode(data)
		got, gotErr := decodeOwned(serde, append([]byte(nil), data...))
		if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("decodeOwned(%x) = %#v (%T), %v; serde gives %#v (%T), %v", data, got, got, gotErr, want, want, wantErr)
		}
	}
}
