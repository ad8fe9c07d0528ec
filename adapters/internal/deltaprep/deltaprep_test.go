package deltaprep_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/deltaprep"
	"github.com/checkpointkit/checkpointkit/spec"
)

func TestPrepare(t *testing.T) {
	ctx := context.Background()
	out, want, err := deltaprep.Prepare(ctx, "test", spec.Config{ThreadID: "t"}, []string{"b", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	empty := spec.DeltaHistory{Writes: []spec.PendingWrite{}}
	if !reflect.DeepEqual(out, map[string]spec.DeltaHistory{"a": empty, "b": empty}) || !reflect.DeepEqual(want, []string{"a", "b"}) {
		t.Errorf("got %#v, %v", out, want)
	}
	if out, want, err := deltaprep.Prepare(ctx, "test", spec.Config{ThreadID: "t"}, nil); err != nil || out == nil || len(out) != 0 || len(want) != 0 {
		t.Errorf("no channels: %#v, %v, %v", out, want, err)
	}
	for name, c := range map[string]struct {
		cfg spec.Config
		chs []string
	}{
		"no thread":   {spec.Config{}, []string{"a"}},
		"NUL channel": {spec.Config{ThreadID: "t"}, []string{"a\x00"}},
		"bad UTF-8":   {spec.Config{ThreadID: "t"}, []string{"\xff"}},
	} {
		if _, _, err := deltaprep.Prepare(ctx, "test", c.cfg, c.chs); !errors.Is(err, spec.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := deltaprep.Prepare(cctx, "test", spec.Config{ThreadID: "t"}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
