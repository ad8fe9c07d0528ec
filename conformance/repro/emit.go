package repro

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
)

// Trace returns the shrunk sequence as a JSON trace (refengine/trace's
// format): the calls with the results the contract expects, so that
// trace.Replay against the saver stops at the differing call.
func (r *Repro) Trace() ([]byte, error) { return trace.Marshal(r.Calls) }

// CheckTrace replays data, a JSON trace, on a fresh saver and returns the
// difference trace.Replay finds (a *trace.ReplayError), or an error
// saying that the replay agreed with the trace. It confirms that a trace
// still shows its difference after the round trip through JSON (values
// JSON cannot carry, such as byte slices, would not).
func CheckTrace(ctx context.Context, saver Opener, data []byte) (*trace.ReplayError, error) {
	calls, err := trace.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	s, cleanup, err := saver(ctx)
	if err != nil {
		return nil, fmt.Errorf("repro: opening the saver: %w", err)
	}
	if cleanup != nil {
		defer cleanup()
	}
	err = trace.Replay(ctx, s, calls)
	if re := (*trace.ReplayError)(nil); errors.As(err, &re) {
		return re, nil
	}
	if err != nil {
		return nil, err
	}
	return nil, ErrNotReproduced
}
