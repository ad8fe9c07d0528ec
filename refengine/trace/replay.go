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
	r := NewReplayer(s, opts)
	for _, c := range calls {
		if err := r.Next(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// Replayer replays a trace on a saver one call at a time, keeping what
// later calls depend on: the values each checkpoint was put with (for
// [ReplayOptions]) and the versions the saver minted in place of the
// recorded ones. A recorded NextVersion call ([WithNextVersion]) mints a
// version on the saver; every later argument that names the recorded
// version names the minted one instead, and so does every expected result,
// so versions are judged by what they do (a fork reads its own value),
// never by their spelling.
type Replayer struct {
	s      spec.Saver
	opts   ReplayOptions
	n      int
	put    map[spec.Config]map[string]any
	minted map[spec.Version]spec.Version
}

// NewReplayer returns a Replayer issuing calls on s.
func NewReplayer(s spec.Saver, opts ReplayOptions) *Replayer {
	return &Replayer{s: s, opts: opts, put: map[spec.Config]map[string]any{}, minted: map[spec.Version]spec.Version{}}
}

// replayed is what a replayed call returned.
type replayed struct {
	config    spec.Config
	tuple     *spec.Tuple
	tuples    []*spec.Tuple
	histories map[string]spec.DeltaHistory
	version   spec.Version
	err       error
}

// Issue makes c's call on the saver, with the versions it minted in place
// of the recorded ones, and does not judge the result: the saver's error is
// its answer. It fails only for a call that cannot be replayed.
func (r *Replayer) Issue(ctx context.Context, c Call) error {
	_, err := r.do(ctx, c)
	r.n++
	return err
}

// Next replays c and checks that it fails or succeeds as recorded and that
// a read (GetTuple, List, a delta history, the config Put returns) returns
// what was recorded, and that a minted version is greater than the one it
// follows. A difference is a *ReplayError whose Index counts the calls
// replayed before c.
func (r *Replayer) Next(ctx context.Context, c Call) error {
	i := r.n
	r.n++
	fail := func(format string, args ...any) error {
		return &ReplayError{Index: i, Method: c.Method, Detail: fmt.Sprintf(format, args...)}
	}
	got, err := r.do(ctx, c)
	if err != nil {
		return fail("%v", err)
	}
	if got.err == nil {
		if d := r.compare(c, got); d != "" {
			return fail("%s", d)
		}
	}
	switch err := got.err; {
	case err == nil && c.Err != "":
		return fail("succeeded, recorded error %q", c.Err)
	case err != nil && c.Err == "":
		return fail("failed: %v", err)
	case err != nil && c.NotFound != errors.Is(err, spec.ErrNotFound):
		return fail("error %v, recorded %q (not found: %v)", err, c.Err, c.NotFound)
	}
	return nil
}

// do makes c's call, with minted versions in place of recorded ones.
func (r *Replayer) do(ctx context.Context, c Call) (replayed, error) {
	var out replayed
	switch c.Method {
	case MethodPut:
		if c.Checkpoint == nil {
			return out, errors.New("no checkpoint recorded")
		}
		cp := r.checkpoint(*c.Checkpoint)
		out.config, out.err = r.s.Put(ctx, c.Config, cp, c.Metadata, r.versions(c.NewVersions))
		if out.err == nil {
			r.put[out.config] = c.Checkpoint.ChannelValues
		}
	case MethodPutWrites:
		out.err = r.s.PutWrites(ctx, c.Config, c.Writes, c.TaskID, c.TaskPath)
	case MethodGetTuple:
		out.tuple, out.err = r.s.GetTuple(ctx, c.Config)
	case MethodList:
		if c.List == nil {
			return out, errors.New("no list options recorded")
		}
		for tup, err := range r.s.List(ctx, *c.List) {
			if err != nil {
				out.err = err
				break
			}
			out.tuples = append(out.tuples, tup)
			if c.Stopped && len(out.tuples) == len(c.Tuples) {
				break // the recorded consumer stopped here
			}
		}
	case MethodDeleteThread:
		out.err = r.s.DeleteThread(ctx, c.ThreadID)
	case MethodDeltaHistory:
		out.histories, out.err = spec.ReadDeltaHistory(ctx, r.s, c.Config, c.Channels)
	case MethodNextVersion:
		out.version = nextVersion(r.s, r.version(c.Current))
		r.minted[c.Version] = out.version
	default:
		return out, errors.New("unknown method")
	}
	return out, nil
}

// compare describes the first difference between what c recorded and
// what its replay returned, or returns "".
func (r *Replayer) compare(c Call, got replayed) string {
	switch c.Method {
	case MethodPut:
		if c.Result != nil && got.config != *c.Result {
			return fmt.Sprintf("returned config %+v, recorded %+v", got.config, *c.Result)
		}
	case MethodGetTuple:
		switch {
		case c.Tuple == nil && got.tuple != nil:
			return fmt.Sprintf("returned checkpoint %s, recorded none", got.tuple.Config.CheckpointID)
		case c.Tuple != nil && got.tuple == nil:
			return fmt.Sprintf("returned no checkpoint, recorded %s", c.Tuple.Config.CheckpointID)
		case c.Tuple != nil:
			return r.diff(c.Tuple, got.tuple)
		}
	case MethodList:
		if len(got.tuples) != len(c.Tuples) {
			return fmt.Sprintf("listed %d checkpoints, recorded %d", len(got.tuples), len(c.Tuples))
		}
		for j := range got.tuples {
			if d := r.diff(c.Tuples[j], got.tuples[j]); d != "" {
				return fmt.Sprintf("result %d: %s", j, d)
			}
		}
	case MethodDeltaHistory:
		if c.Histories != nil {
			return diffHistories(c.Histories, got.histories)
		}
	case MethodNextVersion:
		if cur := r.version(c.Current); spec.CompareVersions(got.version, cur) != 1 {
			return fmt.Sprintf("minted %q after %q, not a greater version", got.version, cur)
		}
	}
	return ""
}

// diff compares a read tuple with the recorded one, as the options say.
func (r *Replayer) diff(want, got *spec.Tuple) string {
	want = r.tuple(want)
	if r.opts.WholeSnapshots {
		return diffTuple(r.asPut(want), got)
	}
	d := diffTuple(want, got)
	if d != "" && r.opts.EitherValues && diffTuple(r.asPut(want), got) == "" {
		return ""
	}
	return d
}

// asPut returns want with the channel values its checkpoint was put with.
func (r *Replayer) asPut(want *spec.Tuple) *spec.Tuple {
	vals, ok := r.put[want.Config]
	if !ok {
		return want
	}
	w := *want
	w.Checkpoint.ChannelValues = vals
	return &w
}

// version returns the version minted in place of the recorded v, or v.
func (r *Replayer) version(v spec.Version) spec.Version {
	if m, ok := r.minted[v]; ok {
		return m
	}
	return v
}

// versions returns vs with minted versions in place of recorded ones.
func (r *Replayer) versions(vs spec.Versions) spec.Versions {
	if len(r.minted) == 0 || vs == nil {
		return vs
	}
	out := make(spec.Versions, len(vs))
	for k, v := range vs {
		out[k] = r.version(v)
	}
	return out
}

// checkpoint returns cp with minted versions in place of recorded ones.
func (r *Replayer) checkpoint(cp spec.Checkpoint) spec.Checkpoint {
	if len(r.minted) == 0 {
		return cp
	}
	cp.ChannelVersions = r.versions(cp.ChannelVersions)
	if cp.VersionsSeen != nil {
		seen := make(map[string]spec.Versions, len(cp.VersionsSeen))
		for k, vs := range cp.VersionsSeen {
			seen[k] = r.versions(vs)
		}
		cp.VersionsSeen = seen
	}
	return cp
}

// tuple returns t with minted versions in place of recorded ones.
func (r *Replayer) tuple(t *spec.Tuple) *spec.Tuple {
	if len(r.minted) == 0 {
		return t
	}
	out := *t
	out.Checkpoint = r.checkpoint(t.Checkpoint)
	return &out
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
