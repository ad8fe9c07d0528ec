package fastvalue

import (
	"math"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestDecodeMatchesSerde checks that Decode gives exactly what the default
// serde gives, on the values it decodes itself and on the ones it hands on.
func TestDecodeMatchesSerde(t *testing.T) {
	serde := spec.DefaultSerde()
	values := []any{
		nil, true, false, 0, 1, 127, 128, -1, -32, -33, 255, 1 << 40, int64(math.MinInt64),
		1.5, "", "a", strings.Repeat("x", 31), strings.Repeat("x", 32), strings.Repeat("y", 255),
		strings.Repeat("z", 256), strings.Repeat("é", 40_000), "\x00\xff", []byte("bin"), []byte{},
		[]any{1, "a"}, map[string]any{"k": "v"},
	}
	for _, v := range values {
		data, err := serde.Encode(v)
		if err != nil {
			t.Fatalf("encode %#v: %v", v, err)
		}
		want, err := serde.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(serde, data)
		if err != nil {
			t.Fatalf("Decode(%#v): %v", v, err)
		}
		if !spec.Equal(got, want) {
			t.Errorf("Decode of %#v = %#v (%T), serde gives %#v (%T)", v, got, got, want, want)
		}
		if got, ok := Immutable(serde, data); ok {
			switch want.(type) {
			case nil, string, bool, int64:
			default:
				t.Errorf("%#v decoded directly as %T", v, want)
			}
			if !spec.Equal(got, want) {
				t.Errorf("Immutable of %#v = %#v, serde gives %#v", v, got, want)
			}
		}
	}
	// Truncated or padded input is the serde's to judge.
	for _, data := range [][]byte{{0xa3, 'a'}, {0xd9}, {0xd9, 5, 'a'}, {0xc0, 0}, {0x01, 0x02}, {0xdb, 0, 0, 0}} {
		if _, ok := direct(data); ok {
			t.Errorf("direct decoded malformed %x", data)
		}
	}
}

// TestDecodeOtherSerde checks that another serde is always called.
func TestDecodeOtherSerde(t *testing.T) {
	s := upper{}
	v, err := Decode(s, []byte{0xa1, 'a'})
	if err != nil || v != "called" {
		t.Errorf("Decode with another serde = %v, %v; want the serde's result", v, err)
	}
	if _, ok := Immutable(s, []byte{0xa1, 'a'}); ok {
		t.Error("Immutable with another serde: want false")
	}
	if !Aliases(s) || Aliases(spec.DefaultSerde()) {
		t.Error("Aliases: want true for an unknown serde, false for the default")
	}
}

type upper struct{}

func (upper) Encode(any) ([]byte, error) { return nil, nil }
func (upper) Decode([]byte) (any, error) { return "called", nil }
