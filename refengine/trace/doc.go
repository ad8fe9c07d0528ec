// Package trace records, stores and replays the saver traffic of a
// checkpoint engine, so that a run against one spec.Saver can be checked
// against any other.
//
// [Record] wraps a saver and logs every call with its arguments and results
// as a [Call]; [Marshal] writes a log as a JSON trace and [Unmarshal] reads
// it back; [Normalize] rewrites a trace so that two runs of the same
// scenario compare equal whatever their IDs and clocks; [Replay] issues a
// trace against another saver and checks that every read returns what was
// recorded. For byte-identical traces, drive refengine with
// RunConfig.Deterministic and RunConfig.NewCheckpointID = [SequentialIDs].
//
// A trace is a JSON document {"calls": [...]}. Values travel as JSON:
// integers come back as int64, other numbers as float64; byte slices are not
// representable (they come back as base64 strings), so traces are meant for
// graphs whose state is JSON-like.
//
// The golden traces of refengine's scenarios, and the test that keeps them
// current, live in package refengine/enginetest.
package trace

import (
	"time"

	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
)

// SequentialIDs returns a checkpoint-ID generator for reproducible traces,
// to set as refengine's RunConfig.NewCheckpointID: IDs in the layout of
// spec.NewCheckpointID (UUIDv6, clock sequence = step) whose timestamps
// start at start and advance by one 100-ns tick per ID, and whose random
// bits are zero. Two runs with generators built from the same start mint the
// same IDs, hence the same task IDs. It is safe for concurrent use.
func SequentialIDs(start time.Time) func(step int) string { return ids.Sequential(start) }
