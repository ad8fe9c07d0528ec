package trace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// ReplayError reports the first call of a replayed trace whose outcome
// differs from the recording.
type ReplayError struct {
	// Index is the position of the call in the trace.
	Index  int
	Method string
	// Detail says what differed.
	Detail string
}

// Error implements error.
func (e *ReplayError) Error() string {
	return fmt.Sprintf("trace: replay call %d (%s): %s", e.Index, e.Method, e.Detail)
}

// Replay issues the recorded calls, in order, against s, and checks that
// every call fails or succeeds as recorded and that every read (GetTuple,
// List, the config Put returns) returns what was recorded. Values are
// compared with spec.Equal, so a trace round-tripped through JSON still
// matches. It returns a *ReplayError at the first difference.
func Replay(ctx context.Context, s spec.Saver, calls []Call) error {
	return ReplayWith(ctx, s, calls, ReplayOptions{})
}

// ReplayOptions adjusts what [ReplayWith] expects of the saver.
type ReplayOptions struct {
	// WholeSnapshots expects a checkpoint to read back the channel values
	// it was put with, as savers that store whole snapshots return them,
	// instead of the values its channel versions name (what the recording
	// saver returned). The two differ where the engine leaves a channel out
	// of a Put on purpose: a delta channel between two snapshots.
	WholeSnapshots bool
	// EitherValues accepts a read's channel values when they equal the
	// recorded ones or the ones the checkpoint was put with, for a saver
	// that may or may not store whole snapshots (LangGraph's SQLite and
	// MongoDB savers do; the contract's PUT-5 and PUT-6 recognise it).
	EitherValues bool
}

// ReplayWith is [Replay] with options.
func ReplayWith(ctx context.Context, s spec.Saver, calls []Call, opts ReplayOptions) error {
	put := map[spec.Config]map[string]any{} // a checkpoint's values as put
	asPut := func(want *spec.Tuple) *spec.Tuple {
		vals, ok := put[want.Config]
		if !ok {
			return want
		}
		w := *want
		w.Checkpoint.ChannelValues = vals
		return &w
	}
	// diff compares a read tuple with the recorded one, as opts say.
	diff := func(want, got *spec.Tuple) string {
		if opts.WholeSnapshots {
			return diffTuple(asPut(want), got)
		}
		d := diffTuple(want, got)
		if d != "" && opts.EitherValues && diffTuple(asPut(want), got) == "" {
			return ""
		}
		return d
	}
	for i, c := range calls {
		fail := func(format string, args ...any) error {
			return &ReplayError{Index: i, Method: c.Method, Detail: fmt.Sprintf(format, args...)}
		}
		var err error
		switch c.Method {
		case MethodPut:
			if c.Checkpoint == nil {
				return fail("no checkpoint recorded")
			}
			var out spec.Config
			out, err = s.Put(ctx, c.Config, *c.Checkpoint, c.Metadata, c.NewVersions)
			if err == nil && c.Result != nil && out != *c.Result {
				return fail("returned config %+v, recorded %+v", out, *c.Result)
			}
			if err == nil {
				put[out] = c.Checkpoint.ChannelValues
			}
		case MethodPutWrites:
			err = s.PutWrites(ctx, c.Config, c.Writes, c.TaskID, c.TaskPath)
		case MethodGetTuple:
			var tup *spec.Tuple
			tup, err = s.GetTuple(ctx, c.Config)
			if err == nil {
				if c.Tuple == nil {
					return fail("returned checkpoint %s, recorded none", tup.Config.CheckpointID)
				}
				if d := diff(c.Tuple, tup); d != "" {
					return fail("%s", d)
				}
			}
		case MethodList:
			if c.List == nil {
				return fail("no list options recorded")
			}
			var got []*spec.Tuple
			for tup, lerr := range s.List(ctx, *c.List) {
				if lerr != nil {
					err = lerr
					break
				}
				got = append(got, tup)
				if c.Stopped && len(got) == len(c.Tuples) {
					break // the recorded consumer stopped here
				}
			}
			if err == nil {
				if len(got) != len(c.Tuples) {
					return fail("listed %d checkpoints, recorded %d", len(got), len(c.Tuples))
				}
				for j := range got {
					if d := diff(c.Tuples[j], got[j]); d != "" {
						return fail("result %d: %s", j, d)
					}
				}
			}
		case MethodDeleteThread:
			err = s.DeleteThread(ctx, c.ThreadID)
		case MethodDeltaHistory:
			var got map[string]spec.DeltaHistory
			got, err = spec.ReadDeltaHistory(ctx, s, c.Config, c.Channels)
			if err == nil && c.Histories != nil {
				if d := diffHistories(c.Histories, got); d != "" {
					return fail("%s", d)
				}
			}
		default:
			return fail("unknown method")
		}
		switch {
		case err == nil && c.Err != "":
			return fail("succeeded, recorded error %q", c.Err)
		case err != nil && c.Err == "":
			return fail("failed: %v", err)
		case err != nil && c.NotFound != errors.Is(err, spec.ErrNotFound):
			return fail("error %v, recorded %q (not found: %v)", err, c.Err, c.NotFound)
		}
	}
	return nil
}

// diffTuple describes the first difference between a recorded and a read
// tuple, or returns "".
func diffTuple(want, got *spec.Tuple) string {
	switch {
	case want.Config != got.Config:
		return fmt.Sprintf("config %+v, recorded %+v", got.Config, want.Config)
	case (want.Parent == nil) != (got.Parent == nil):
		return fmt.Sprintf("parent %v, recorded %v", got.Parent, want.Parent)
	case want.Parent != nil && *want.Parent != *got.Parent:
		return fmt.Sprintf("parent %+v, recorded %+v", *got.Parent, *want.Parent)
	}
	if d := diffCheckpoint(&want.Checkpoint, &got.Checkpoint); d != "" {
		return d
	}
	if !spec.Equal(map[string]any(want.Metadata), map[string]any(got.Metadata)) {
		return fmt.Sprintf("metadata %v, recorded %v", got.Metadata, want.Metadata)
	}
	if len(want.PendingWrites) != len(got.PendingWrites) {
		return fmt.Sprintf("%d pending writes %v, recorded %d %v", len(got.PendingWrites), got.PendingWrites, len(want.PendingWrites), want.PendingWrites)
	}
	// The order across tasks is the saver's to choose (SPEC.md WRITES-9),
	// each task's own order is not (WRITES-13): compare both lists ordered
	// by task ID, each task's writes in the order read.
	wantWs, gotWs := byTask(want.PendingWrites), byTask(got.PendingWrites)
	for i, w := range wantWs {
		g := gotWs[i]
		if w.TaskID != g.TaskID || w.Channel != g.Channel || !spec.Equal(w.Value, g.Value) {
			return fmt.Sprintf("pending write %d is %v, recorded %v", i, g, w)
		}
	}
	return ""
}

// byTask returns ws ordered by task ID, keeping the order of each task's
// writes.
func byTask(ws []spec.PendingWrite) []spec.PendingWrite {
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(a, b spec.PendingWrite) int { return strings.Compare(a.TaskID, b.TaskID) })
	return ws
}

func diffCheckpoint(want, got *spec.Checkpoint) string {
	switch {
	case want.ID != got.ID || want.V != got.V || want.TS != got.TS:
		return fmt.Sprintf("checkpoint %s v%d ts %s, recorded %s v%d ts %s", got.ID, got.V, got.TS, want.ID, want.V, want.TS)
	case !spec.Equal(anyMap(want.ChannelValues), anyMap(got.ChannelValues)):
		return fmt.Sprintf("channel values %v, recorded %v", got.ChannelValues, want.ChannelValues)
	case !maps.Equal(want.ChannelVersions, got.ChannelVersions) && (len(want.ChannelVersions) > 0 || len(got.ChannelVersions) > 0):
		return fmt.Sprintf("channel versions %v, recorded %v", got.ChannelVersions, want.ChannelVersions)
	case (want.UpdatedChannels == nil) != (got.UpdatedChannels == nil) || !slices.Equal(want.UpdatedChannels, got.UpdatedChannels):
		return fmt.Sprintf("updated channels %#v, recorded %#v", got.UpdatedChannels, want.UpdatedChannels)
	}
	if len(want.VersionsSeen) != len(got.VersionsSeen) {
		return fmt.Sprintf("versions seen %v, recorded %v", got.VersionsSeen, want.VersionsSeen)
	}
	for k, w := range want.VersionsSeen {
		g, ok := got.VersionsSeen[k]
		if !ok || (len(w) > 0 || len(g) > 0) && !maps.Equal(w, g) {
			return fmt.Sprintf("versions seen[%s] %v, recorded %v", k, g, w)
		}
	}
	return ""
}

func anyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
