// Package deltaprep holds what the DeltaHistory method of every adapter of
// checkpointkit does before it reads anything: the argument checks and the
// result holding an empty history for each channel asked for.
package deltaprep

import (
	"context"
	"fmt"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Prepare checks the arguments of a DeltaHistory call: cfg as
// [spec.ValidateGetTuple] does, every channel name with
// [spec.ValidateIdentifier] (both fail with an error wrapping
// [spec.ErrInvalidConfig]), then ctx (an error wrapping ctx.Err()); errors
// begin with adapter, e.g. "postgres: delta history: ". It returns the
// result to fill, an empty, non-nil history for each distinct channel
// (SPEC.md DELTA-6), and those channels sorted. With no channels both are
// empty and the call has nothing more to do.
func Prepare(ctx context.Context, adapter string, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, []string, error) {
	if err := spec.ValidateGetTuple(cfg); err != nil {
		return nil, nil, fmt.Errorf("%s: delta history: %w", adapter, err)
	}
	for _, ch := range channels {
		if err := spec.ValidateIdentifier("channel", ch); err != nil {
			return nil, nil, fmt.Errorf("%s: delta history: %w", adapter, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: delta history thread %q: %w", adapter, cfg.ThreadID, err)
	}
	out := make(map[string]spec.DeltaHistory, len(channels))
	for _, ch := range channels {
		out[ch] = spec.DeltaHistory{Writes: []spec.PendingWrite{}}
	}
	return out, slices.Compact(slices.Sorted(slices.Values(channels))), nil
}
