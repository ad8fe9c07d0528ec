package memory_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

// markSerde wraps the default serde and counts what it encodes, to show
// which values go through WithSerde.
type markSerde struct {
	mu      sync.Mutex
	encoded []any
}

func (m *markSerde) Encode(v any) ([]byte, error) {
	m.mu.Lock()
	m.encoded = append(m.encoded, v)
	m.mu.Unlock()
	data, err := spec.DefaultSerde().Encode(v)
	return append([]byte("M:"), data...), err
}

func (m *markSerde) Decode(data []byte) (any, error) {
	rest, ok := strings.CutPrefix(string(data), "M:")
	if !ok {
		return nil, errors.New("not written by markSerde")
	}
	return spec.DefaultSerde().Decode([]byte(rest))
}

// TestWithSerde checks that the serde encodes channel values and
// pending-write values, and nothing else (not metadata).
func TestWithSerde(t *testing.T) {
	sd := &markSerde{}
	s := memory.New(memory.WithSerde(sd))
	mustPut(t, s, "t", "", "", cp("1", map[string]any{"c": "value"}, spec.Versions{"c": "1"}),
		spec.Metadata{"source": "input"}, spec.Versions{"c": "1"})
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, []spec.Write{wr("w", "write")}, "task", ""); err != nil {
		t.Fatal(err)
	}
	tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if tu.Checkpoint.ChannelValues["c"] != "value" || tu.PendingWrites[0].Value != "write" || tu.Metadata["source"] != "input" {
		t.Errorf("round trip through the serde: %+v", tu)
	}
	if want := []any{"value", "write"}; !equalAny(sd.encoded, want) {
		t.Errorf("serde encoded %v, want %v", sd.encoded, want)
	}
}

func equalAny(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !spec.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestInvalidOptionsPanic checks that New, which returns no error, panics
// with ErrInvalidArgument on an invalid option.
func TestInvalidOptionsPanic(t *testing.T) {
	for name, opt := range map[string]memory.Option{
		"nil serde":  memory.WithSerde(nil),
		"nil option": nil,
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, spec.ErrInvalidArgument) {
					t.Errorf("New panicked with %v, want an error wrapping ErrInvalidArgument", err)
				}
			}()
			memory.New(opt)
			t.Error("New accepted the option")
		})
	}
}

// TestSetupAndClose checks that Setup and Close are safe no-ops: called
// concurrently with each other and with writes (run with -race), they
// leave the data alone, and Setup reports a cancelled context.
func TestSetupAndClose(t *testing.T) {
	s := memory.New()
	var closer io.Closer = s
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 20 {
				if err := s.Setup(ctx); err != nil {
					t.Error(err)
				}
				id := string(rune('a'+w)) + string(rune('a'+i))
				if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp(id, nil, nil), nil, nil); err != nil {
					t.Error(err)
				}
				if err := closer.Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := len(ids(t, s, spec.ListOptions{ThreadID: "t"})); n != 80 {
		t.Errorf("%d checkpoints after concurrent Setup and Close, want 80", n)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Setup(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Setup with a cancelled context: %v", err)
	}
}
