package memory_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

// largeList is the value of ci/bench-delta's "messages" at step 1,000: a
// list of 1,000 strings of 500 bytes.
func largeList() []any {
	out := make([]any, 1000)
	for i := range out {
		out[i] = strings.Repeat(string(rune('a'+i%26)), 500)
	}
	return out
}

// largeMessages is a list of 1,000 messages as maps, each with a 500-byte
// content.
func largeMessages() []any {
	out := make([]any, 1000)
	for i := range out {
		out[i] = map[string]any{"type": "human", "id": int64(i), "content": strings.Repeat("m", 500)}
	}
	return out
}

// putLarge stores one checkpoint whose channel "messages" holds v, and
// returns the saver.
func putLarge(tb testing.TB, opts []memory.Option, v any) *memory.Saver {
	tb.Helper()
	s := memory.New(opts...)
	cp := spec.Checkpoint{
		V: 4, ID: spec.NewCheckpointID(0),
		ChannelValues:   map[string]any{"messages": v},
		ChannelVersions: spec.Versions{"messages": "1"},
	}
	if _, err := s.Put(context.Background(), spec.Config{ThreadID: "t"}, cp, spec.Metadata{"step": 1000}, spec.Versions{"messages": "1"}); err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkLargeRead reads a checkpoint whose channel holds a 500 KB list,
// bare and wrapped in a delta snapshot, and a list of 1,000 message maps, with GetTuple and List(limit 1)
// (issues #21 and #24), with the default serde and with a custom one (the
// default's bytes behind another type, which takes the decode-every-read
// path).
func BenchmarkLargeRead(b *testing.B) {
	ctx := context.Background()
	values := []struct {
		name string
		v    any
	}{
		{"list", largeList()},
		{"snapshot", spec.DeltaSnapshot{Value: largeList()}},
		{"messages", largeMessages()},
	}
	serdes := []struct {
		name string
		opts []memory.Option
	}{
		{"default", nil},
		{"custom", []memory.Option{memory.WithSerde(otherSerde{})}},
	}
	for _, sd := range serdes {
		for _, val := range values {
			s := putLarge(b, sd.opts, val.v)
			b.Run(sd.name+"/"+val.name+"/GetTuple", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(sd.name+"/"+val.name+"/List1", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, err := range s.List(ctx, spec.ListOptions{ThreadID: "t", Limit: 1}) {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// otherSerde is the default serde under another type, so that the saver
// treats it as a custom one.
type otherSerde struct{}

func (otherSerde) Encode(v any) ([]byte, error)    { return spec.DefaultSerde().Encode(v) }
func (otherSerde) Decode(data []byte) (any, error) { return spec.DefaultSerde().Decode(data) }

// BenchmarkLargePut stores the values of BenchmarkLargeRead, each Put a new
// checkpoint with a new version of the channel.
func BenchmarkLargePut(b *testing.B) {
	ctx := context.Background()
	values := []struct {
		name string
		v    any
	}{
		{"list", largeList()},
		{"messages", largeMessages()},
	}
	for _, val := range values {
		b.Run(val.name, func(b *testing.B) {
			b.ReportAllocs()
			s := memory.New()
			i := 0
			for b.Loop() {
				i++
				ver := spec.Version(strconv.Itoa(i))
				cp := spec.Checkpoint{
					V: 4, ID: spec.NewCheckpointID(i),
					ChannelValues:   map[string]any{"messages": val.v},
					ChannelVersions: spec.Versions{"messages": ver},
				}
				if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, spec.Versions{"messages": ver}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
