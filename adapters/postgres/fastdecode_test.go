package postgres

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestParseRecordAgrees checks that the read path's record reader gives
// exactly what decodeRecord gives, on records this package writes and on
// cut or padded ones, which it must hand to the general decoder.
func TestParseRecordAgrees(t *testing.T) {
	many := spec.Versions{}
	for i := range 40 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	cps := []spec.Checkpoint{
		{},
		{V: 4, TS: "2026-01-01T00:00:00Z", ChannelVersions: spec.Versions{"a": "1", "b": spec.Version(strings.Repeat("9", 40))}},
		{V: 1 << 20, VersionsSeen: map[string]spec.Versions{"n": {"a": "1"}, "m": nil, "o": {}}, UpdatedChannels: []string{}},
		{V: -3, UpdatedChannels: []string{"a", strings.Repeat("c", 300)}, ChannelVersions: spec.Versions{}},
		{V: math.MaxInt32 + 1, ChannelVersions: many},
	}
	for _, cp := range cps {
		data, err := encodeRecord(cp)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range [][]byte{data, data[:len(data)-1], append(data[:len(data):len(data)], 0)} {
			want, wantErr := decodeRecord("id", d)
			got, gotErr := parseRecord("id", d)
			if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
				t.Errorf("parseRecord(%x) = %#v, %v; decodeRecord gives %#v, %v", d, got, gotErr, want, wantErr)
			}
		}
	}
}

// TestDecodeOwnedAgrees checks that values and exact metadata read in place
// are exactly what the default serde decodes, for every integer form,
// floats, nesting and forms the reader leaves to the serde.
func TestDecodeOwnedAgrees(t *testing.T) {
	serde := spec.DefaultSerde()
	raw := [][]byte{
		{0xcc, 0xff}, {0xd0, 0x80}, {0xcd, 0xff, 0xff}, {0xd1, 0x80, 0x00}, {0xce, 0xff, 0xff, 0xff, 0xff},
		{0xd2, 0x80, 0, 0, 0}, {0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, {0xd3, 0, 0, 0, 0, 0, 0, 0, 9}, {0xcc, 1, 2}, {0xd3, 1},
		{0xca, 0x3f, 0xc0, 0, 0}, {0xc4, 1, 'x'}, {0x81, 0x01, 0x02}, {0x92, 0x01},
	}
	deep := any("leaf")
	for range 100 {
		deep = map[string]any{"d": deep}
	}
	for _, v := range []any{int64(0), int64(200), int64(-200), int64(70000), int64(-70000), int64(1 << 40), int64(math.MinInt64),
		"", "a", strings.Repeat("s", 70000), "\xff\x00", true, false, nil, 1.5, math.Inf(-1), []any{int64(1), "x", nil},
		map[string]any{"k": "v", "n": map[string]any{"l": []any{1.25, map[string]any{}}}}, []byte("bin"), deep,
		map[string]any{"source": "loop", "step": int64(3), "parents": map[string]any{}}} {
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
		wantMD, wantErr := decodeExactMetadata(data, serde)
		gotMD, gotErr := parseExactMetadata(append([]byte(nil), data...), serde)
		if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && !reflect.DeepEqual(gotMD, wantMD)) {
			t.Errorf("parseExactMetadata(%x) = %#v, %v; decodeExactMetadata gives %#v, %v", data, gotMD, gotErr, wantMD, wantErr)
		}
	}
}

// TestNewPGArrayRejectsMalformed checks that a binary array that is cut,
// padded, multi-dimensional or holds NULLs or elements of the wrong width
// is refused rather than read out of bounds.
func TestNewPGArrayRejectsMalformed(t *testing.T) {
	good := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 2, 'b', 'c'}
	a, err := newPGArray(good, 0)
	if err != nil || a.len() != 2 {
		t.Fatalf("newPGArray(good) = %d elements, %v", a.len(), err)
	}
	c := a.cursor()
	if e0, e1 := string(c.next()), string(c.next()); e0 != "a" || e1 != "bc" {
		t.Errorf("elements %q %q, want a bc", e0, e1)
	}
	bad := map[string][]byte{
		"cut":        good[:len(good)-1],
		"padded":     append(append([]byte(nil), good...), 0),
		"2 dims":     append([]byte{0, 0, 0, 2}, good[4:]...),
		"short":      good[:10],
		"null":       {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 25, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff},
		"huge count": {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1},
	}
	for name, b := range bad {
		if _, err := newPGArray(b, 0); err == nil {
			t.Errorf("%s: newPGArray accepted %x", name, b)
		}
	}
	if _, err := newPGArray(good, 4); err == nil {
		t.Error("newPGArray accepted elements of the wrong width")
	}
	if a, err := newPGArray([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25}, 0); err != nil || a.len() != 0 {
		t.Errorf("empty array: %d elements, %v", a.len(), err)
	}
}

// TestListSameInEveryQueryMode checks that the simple protocol, whose rows
// come as text and are scanned by pgx, reads the same tuples as the binary
// rows read in place, writes out of key order included.
func TestListSameInEveryQueryMode(t *testing.T) {
	ctx := context.Background()
	s := newTestSaver(t)
	simple, err := New(ctx, s.pool, WithSchema(s.schema), WithQueryExecMode(pgx.QueryExecModeSimpleProtocol))
	if err != nil {
		t.Fatal(err)
	}
	cfg := spec.Config{ThreadID: "t"}
	for i := range 3 {
		cp := spec.Checkpoint{V: 4, ID: spec.NewCheckpointID(i), ChannelValues: map[string]any{"a": "x", "b": int64(i)},
			ChannelVersions: spec.Versions{"a": "1", "b": spec.Version(strings.Repeat("0", i+1))}}
		next, err := s.Put(ctx, cfg, cp, spec.Metadata{"step": i, "who": "é"}, cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range []string{"z", "a", "m"} {
			writes := []spec.Write{{Channel: "c", Value: task}, {Channel: spec.ErrorChannel, Value: "boom"}, {Channel: "d", Value: 1.5}}
			if err := s.PutWrites(ctx, next, writes, task, ""); err != nil {
				t.Fatal(err)
			}
		}
		cfg = next
	}
	collect := func(sv *Saver) []*spec.Tuple {
		var out []*spec.Tuple
		for tp, err := range sv.List(ctx, spec.ListOptions{ThreadID: "t"}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tp)
		}
		return out
	}
	bin, txt := collect(s), collect(simple)
	if len(bin) != 3 || !reflect.DeepEqual(bin, txt) {
		t.Fatalf("binary rows and simple-protocol rows differ:\n%#v\n%#v", bin, txt)
	}
	for _, tp := range bin {
		for i := 1; i < len(tp.PendingWrites); i++ {
			if tp.PendingWrites[i-1].TaskID > tp.PendingWrites[i].TaskID {
				t.Fatalf("pending writes out of task order: %#v", tp.PendingWrites)
			}
		}
	}
}
