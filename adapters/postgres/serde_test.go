package postgres

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// prefixSerde wraps the default serde and marks what it writes, to show
// what WithSerde encodes.
type prefixSerde struct{}

func (prefixSerde) Encode(v any) ([]byte, error) {
	data, err := spec.DefaultSerde().Encode(v)
	return append([]byte("P:"), data...), err
}

func (prefixSerde) Decode(data []byte) (any, error) {
	rest, ok := bytes.CutPrefix(data, []byte("P:"))
	if !ok {
		return nil, errors.New("not written by prefixSerde")
	}
	return spec.DefaultSerde().Decode(rest)
}

// TestWithSerdeCoversValuesAndWrites checks that WithSerde encodes channel
// values and pending-write values, while metadata is stored as jsonb plus
// an exact copy in the fixed codec; and that an exact copy written with
// the serde (as earlier versions did) still reads back.
func TestWithSerdeCoversValuesAndWrites(t *testing.T) {
	s := newTestSaver(t, WithSerde(prefixSerde{}))
	ctx := context.Background()
	md := spec.Metadata{"source": "input", "n": 1.0, "step": int64(2)}
	cfg := spec.Config{ThreadID: "t"}
	cp := spec.Checkpoint{ID: "1", ChannelValues: map[string]any{"c": "value"}, ChannelVersions: spec.Versions{"c": "1"}}
	cfg = mustPutCfg(t, s, cfg, cp, md, cp.ChannelVersions)
	if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "w", Value: "write"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	var blob, write, exact []byte
	var source string
	if err := s.pool.QueryRow(ctx, "SELECT b.value, w.value, c.metadata_exact, c.metadata->>'source' FROM "+
		s.q.checkpoints+" c, "+s.q.blobs+" b, "+s.q.writes+" w").Scan(&blob, &write, &exact, &source); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(blob, []byte("P:")) || !bytes.HasPrefix(write, []byte("P:")) {
		t.Errorf("value %q or write %q not encoded by the serde", blob, write)
	}
	if got, err := metadataCodec.Decode(exact); err != nil || !reflect.DeepEqual(got, map[string]any(md)) {
		t.Errorf("exact metadata not in the fixed codec: %v, %v", got, err)
	}
	if source != "input" {
		t.Errorf("jsonb metadata source = %q", source)
	}
	want := []*spec.Tuple{mustGetTuple(t, s, cfg)}
	if !reflect.DeepEqual(want[0].Metadata, md) || want[0].Checkpoint.ChannelValues["c"] != "value" || want[0].PendingWrites[0].Value != "write" {
		t.Fatalf("round trip: %+v", want[0])
	}
	if got := listAll(t, s, spec.ListOptions{Filter: spec.Metadata{"source": "input", "n": int64(1)}}); len(got) != 1 {
		t.Errorf("filter found %d checkpoints, want 1", len(got))
	}

	// Exact metadata written with the serde, as before the fixed codec.
	legacy, err := prefixSerde{}.Encode(map[string]any(md))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "UPDATE "+s.q.checkpoints+" SET metadata_exact = $1", legacy); err != nil {
		t.Fatal(err)
	}
	if got := mustGetTuple(t, s, cfg); !reflect.DeepEqual(got.Metadata, md) {
		t.Errorf("legacy metadata read back as %#v", got.Metadata)
	}
	// A saver with another serde reads no values, but still reports that
	// it cannot, rather than garbage.
	other := unsetSaver(t, s.pool, WithSchema(s.Schema()))
	if _, err := other.GetTuple(ctx, cfg); err == nil {
		t.Error("a saver with the default serde decoded legacy serde-encoded data")
	}
}

func mustPutCfg(tb testing.TB, s *Saver, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) spec.Config {
	tb.Helper()
	got, err := s.Put(context.Background(), cfg, cp, md, nv)
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

func mustGetTuple(tb testing.TB, s *Saver, cfg spec.Config) *spec.Tuple {
	tb.Helper()
	tup, err := s.GetTuple(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return tup
}
