package bridge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceJSON is what encoding/json makes of data: the tree of a Decoder
// with UseNumber, for the texts json.Valid accepts. Invalid UTF-8, which
// encoding/json replaces and the protocol forbids, is refused.
func referenceJSON(data []byte) (any, bool) {
	if !json.Valid(data) || !utf8.Valid(data) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

var jsonSeeds = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e`, `-1.25e-7`, `1e999`,
	`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u2028"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\ud83dx"`, `"\ud83d\u0041"`,
	`"\ud83d\ud83d\ude00"`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\tb\"", "\"\xff\"", "\"é\xc3\"", `"abc`,
	`[]`, `[1,]`, `[,1]`, `[1 2]`, `[[],[[]]]`, `{}`, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1,"a":2}`,
	`{"a":[1,{"b":null}],"c":"d"}`, ` {"x" : [ 1 , 2 ] } `, `{} {}`, `[] x`, `{"a":1}}`, `"\u0000"`,
}

func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		checkAgainstEncodingJSON(t, []byte(s))
	}
}

// FuzzDecodeJSON checks decodeJSON against encoding/json on any input.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkAgainstEncodingJSON(t, data) })
}

func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	want, ok := referenceJSON(data)
	got, err := decodeJSON(data)
	switch {
	case ok && err != nil && hasReplacement(want):
		// encoding/json turned an escaped lone surrogate into U+FFFD; the
		// protocol allows only valid Unicode, so refusing it is right.
	case ok && err != nil:
		t.Fatalf("%q: decodeJSON failed (%v), encoding/json accepts it", data, err)
	case !ok && err == nil:
		t.Fatalf("%q: decodeJSON accepts it (%#v), encoding/json does not", data, got)
	case ok && !reflect.DeepEqual(got, want):
		t.Fatalf("%q: decodeJSON gave %#v, encoding/json %#v", data, got, want)
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	line := []byte(`{"id":7,"result":{"config":{"thread_id":"t","checkpoint_ns":"","checkpoint_id":"1"},"checkpoint":{"v":4,"id":"1","ts":"2026-01-01T00:00:00Z","channel_values":{"messages":["hello","world"],"count":3,"score":0.5},"channel_versions":{"messages":"1","count":"1","score":"1"},"versions_seen":{"node":{"messages":"1"}},"updated_channels":null},"metadata":{"step":1,"source":"loop"},"parent_config":null,"pending_writes":[["task-0","messages","hi"],["task-0","count",4]]}}`)
	b.Run("decodeJSON", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeJSON(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			if _, ok := referenceJSON(line); !ok {
				b.Fatal("invalid")
			}
		}
	})
}

// hasReplacement reports whether a string or key in tree holds U+FFFD.
func hasReplacement(tree any) bool {
	switch v := tree.(type) {
	case string:
		return strings.ContainsRune(v, utf8.RuneError)
	case []any:
		return slices.ContainsFunc(v, hasReplacement)
	case map[string]any:
		for k, e := range v {
			if hasReplacement(k) || hasReplacement(e) {
				return true
			}
		}
	}
	return false
}
