package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// walker is a memory saver that reads delta history by LangGraph's base
// walk, so that the bridge's delta_history can be tested whether or not the
// memory adapter has a reader of its own.
type walker struct{ *memory.Saver }

func (w walker) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	return spec.WalkDeltaHistory(ctx, w.Saver, cfg, channels)
}

// deltaThread stores a chain of six checkpoints on thread t: a snapshot of
// "m" at the second, writes to "m" against every checkpoint (two tasks at
// the fourth, stored out of order), and a plain value of "p" at the root.
// It returns the config of the newest checkpoint.
func deltaThread(ctx context.Context, t *testing.T, s spec.Saver) spec.Config {
	t.Helper()
	parent := spec.Config{ThreadID: "t"}
	for i := range 6 {
		values, versions := map[string]any{}, spec.Versions{}
		switch i {
		case 0:
			values["p"] = []any{"plain"}
		case 1:
			values["m"] = spec.DeltaSnapshot{Value: []any{"a", "b", map[string]any{"$k": []byte{1}}}}
		}
		for ch := range values {
			versions[ch] = spec.Version(fmt.Sprint(i + 1))
		}
		cp := spec.Checkpoint{V: 4, ID: fmt.Sprintf("1f0%02d", i), TS: time.Unix(int64(i), 0).UTC().Format(time.RFC3339), ChannelValues: values,
			ChannelVersions: versions, VersionsSeen: map[string]spec.Versions{}}
		cfg, err := s.Put(ctx, parent, cp, spec.Metadata{"step": int64(i - 1)}, versions)
		if err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			for _, task := range []string{"task-b", "task-a"} {
				if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "m", Value: task}, {Channel: "p", Value: int64(i)}}, task, "~"+task); err != nil {
					t.Fatal(err)
				}
			}
		} else if err := s.PutWrites(ctx, cfg, []spec.Write{{Channel: "m", Value: spec.DeltaSnapshot{Value: int64(i)}}}, "task", "~"); err != nil {
			t.Fatal(err)
		}
		parent = cfg
	}
	return parent
}

func TestDeltaHistoryThroughTheBridge(t *testing.T) {
	for _, mode := range []string{"walker", "adapter"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var p *bridge.Process
			if mode == "walker" {
				p = startHelper(t, mode)
			} else {
				p = bridgetest.Start(t, "-adapter", "memory")
			}
			if !slices.Contains(p.Capabilities(), "delta_history") {
				t.Fatalf("capabilities %v lack delta_history", p.Capabilities())
			}
			s, err := p.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			head := deltaThread(ctx, t, s)
			direct, err := spec.WalkDeltaHistory(ctx, s, head, []string{"m", "p", "none"})
			if err != nil {
				t.Fatal(err)
			}
			for _, cfg := range []spec.Config{head, {ThreadID: "t"}, {ThreadID: "t", CheckpointID: "1f003"}, {ThreadID: "nobody"}} {
				got, err := s.(spec.DeltaHistoryReader).DeltaHistory(ctx, cfg, []string{"m", "p", "none"})
				if err != nil {
					t.Fatal(err)
				}
				want, err := spec.WalkDeltaHistory(ctx, s, cfg, []string{"m", "p", "none"})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%+v: got %#v\nwant %#v", cfg, got, want)
				}
			}
			m := direct["m"]
			if snap, ok := m.Seed.(spec.DeltaSnapshot); !m.HasSeed || !ok {
				t.Fatalf("seed of m is %#v (has %v), want a snapshot", m.Seed, m.HasSeed)
			} else if want := []any{"a", "b", map[string]any{"$k": []byte{1}}}; !reflect.DeepEqual(snap.Value, want) {
				t.Fatalf("snapshot value %#v, want %#v", snap.Value, want)
			}
			if n := len(m.Writes); n != 5 { // one each at 1, 2, 4; two at 3
				t.Fatalf("m has %d writes, want 5: %#v", n, m.Writes)
			}
		})
	}
}

func TestDeltaHistoryUnsupported(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := startHelper(t, "limited")
	if slices.Contains(p.Capabilities(), "delta_history") {
		t.Fatalf("capabilities %v advertise delta_history", p.Capabilities())
	}
	s, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := s.(spec.DeltaHistoryReader)
	if !ok {
		t.Fatal("a bridged saver is not a spec.DeltaHistoryReader")
	}
	if _, err := r.DeltaHistory(ctx, spec.Config{ThreadID: "t"}, []string{"m"}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("err %v, want errors.ErrUnsupported", err)
	}
}
