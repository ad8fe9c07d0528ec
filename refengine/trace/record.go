package trace

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Saver method names as they appear in a [Call].
const (
	MethodPut          = "Put"
	MethodPutWrites    = "PutWrites"
	MethodGetTuple     = "GetTuple"
	MethodList         = "List"
	MethodDeleteThread = "DeleteThread"
	// MethodDeltaHistory is a read of delta channel histories
	// (spec.DeltaHistoryReader; LangGraph Python's
	// get_delta_channel_history).
	MethodDeltaHistory = "delta_history"
	// MethodNextVersion is a version minted by the saver's
	// spec.VersionGenerator (LangGraph's get_next_version), recorded only
	// by a Recorder made with [WithNextVersion].
	MethodNextVersion = "NextVersion"
)

// Call is one recorded saver call: the method, its arguments and its
// results. Only the fields of the method are set.
type Call struct {
	Method string
	// Config is the config argument (Put, PutWrites, GetTuple).
	Config spec.Config
	// Checkpoint, Metadata and NewVersions are Put's arguments.
	Checkpoint  *spec.Checkpoint
	Metadata    spec.Metadata
	NewVersions spec.Versions
	// Writes, TaskID and TaskPath are PutWrites' arguments.
	Writes   []spec.Write
	TaskID   string
	TaskPath string
	// List is List's argument.
	List *spec.ListOptions
	// ThreadID is DeleteThread's argument.
	ThreadID string
	// Channels are the channels a delta history read asked for (Config
	// names the checkpoint).
	Channels []string
	// Current is NextVersion's argument and Version its result. Later
	// calls of the trace use Version where the recording engine used the
	// minted version; a replay mints its own and uses that in their place.
	Current, Version spec.Version

	// Result is Put's returned config.
	Result *spec.Config
	// Tuple is GetTuple's result.
	Tuple *spec.Tuple
	// Tuples are the tuples List yielded, in order.
	Tuples []*spec.Tuple
	// Histories is a delta history read's result.
	Histories map[string]spec.DeltaHistory
	// Stopped reports that the consumer of List stopped before the end.
	Stopped bool
	// Err is the error message, if the call failed; NotFound reports that
	// the error was spec.ErrNotFound.
	Err      string
	NotFound bool
}

// Recorder is a spec.Saver that forwards every call to another saver and
// records it. It implements spec.VersionGenerator (delegating when the
// wrapped saver does, else using spec.NextVersion), so an engine driving it
// mints the same kind of versions as one driving the wrapped saver;
// NextVersion calls are recorded only with [WithNextVersion].
type Recorder struct {
	inner    spec.Saver
	versions bool
	mu       sync.Mutex
	calls    []Call
}

// RecordOption adjusts what a [Recorder] records.
type RecordOption func(*Recorder)

// WithNextVersion records NextVersion calls too ([MethodNextVersion]).
// Engine traces leave them out, since each engine mints versions its own
// way; a reproduction of a versioning bug (two forks minting the same
// version) needs them, so that its replay mints versions on the saver
// under test instead of reusing the recorded ones.
func WithNextVersion() RecordOption { return func(r *Recorder) { r.versions = true } }

// Record wraps s in a Recorder.
func Record(s spec.Saver, opts ...RecordOption) *Recorder {
	r := &Recorder{inner: s}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Calls returns a copy of the calls recorded so far, in completion order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Reset forgets the recorded calls.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.calls = nil
	r.mu.Unlock()
}

// Unwrap returns the wrapped saver.
func (r *Recorder) Unwrap() spec.Saver { return r.inner }

func (r *Recorder) add(c Call, err error) {
	if err != nil {
		c.Err = err.Error()
		c.NotFound = errors.Is(err, spec.ErrNotFound)
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// Put records and forwards a Put.
func (r *Recorder) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	c := Call{Method: MethodPut, Config: cfg, Checkpoint: cloneCheckpoint(&cp), Metadata: cloneValue(md), NewVersions: cloneVersions(nv)}
	out, err := r.inner.Put(ctx, cfg, cp, md, nv)
	if err == nil {
		c.Result = &out
	}
	r.add(c, err)
	return out, err
}

// PutWrites records and forwards a PutWrites.
func (r *Recorder) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	c := Call{Method: MethodPutWrites, Config: cfg, Writes: cloneWrites(writes), TaskID: taskID, TaskPath: taskPath}
	err := r.inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
	r.add(c, err)
	return err
}

// GetTuple records and forwards a GetTuple.
func (r *Recorder) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	tup, err := r.inner.GetTuple(ctx, cfg)
	r.add(Call{Method: MethodGetTuple, Config: cfg, Tuple: cloneTuple(tup)}, err)
	return tup, err
}

// List records and forwards a List; the call is recorded when the
// iteration ends, with every tuple the consumer received.
func (r *Recorder) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		o := opts
		o.Filter = cloneValue(opts.Filter)
		c := Call{Method: MethodList, List: &o, Tuples: []*spec.Tuple{}}
		var ferr error
		defer func() { r.add(c, ferr) }()
		for tup, err := range r.inner.List(ctx, opts) {
			if err != nil {
				ferr = err
				yield(nil, err)
				return
			}
			c.Tuples = append(c.Tuples, cloneTuple(tup))
			if !yield(tup, nil) {
				c.Stopped = true
				return
			}
		}
	}
}

// DeltaHistory records a delta history read and answers it with
// spec.ReadDeltaHistory on the wrapped saver: through its
// spec.DeltaHistoryReader, or by its GetTuple walk (those GetTuple calls
// are not recorded), so that an engine reads histories in one recorded
// call whatever the saver, as LangGraph's savers answer them.
func (r *Recorder) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	out, err := spec.ReadDeltaHistory(ctx, r.inner, cfg, channels)
	c := Call{Method: MethodDeltaHistory, Config: cfg, Channels: slices.Clone(channels)}
	if err == nil {
		c.Histories = cloneHistories(out)
	}
	r.add(c, err)
	return out, err
}

func cloneHistories(hs map[string]spec.DeltaHistory) map[string]spec.DeltaHistory {
	out := make(map[string]spec.DeltaHistory, len(hs))
	for ch, h := range hs {
		c := spec.DeltaHistory{Seed: h.Seed, HasSeed: h.HasSeed, Writes: make([]spec.PendingWrite, len(h.Writes))}
		copy(c.Writes, h.Writes)
		out[ch] = c
	}
	return out
}

// DeleteThread records and forwards a DeleteThread.
func (r *Recorder) DeleteThread(ctx context.Context, threadID string) error {
	err := r.inner.DeleteThread(ctx, threadID)
	r.add(Call{Method: MethodDeleteThread, ThreadID: threadID}, err)
	return err
}

// NextVersion delegates to the wrapped saver's generator, or
// spec.NextVersion, and records the call with [WithNextVersion].
func (r *Recorder) NextVersion(cur spec.Version) spec.Version {
	v := nextVersion(r.inner, cur)
	if r.versions {
		r.add(Call{Method: MethodNextVersion, Current: cur, Version: v}, nil)
	}
	return v
}

// nextVersion mints the version after cur as s does: through its
// spec.VersionGenerator, or spec.NextVersion.
func nextVersion(s spec.Saver, cur spec.Version) spec.Version {
	if vg, ok := s.(spec.VersionGenerator); ok {
		return vg.NextVersion(cur)
	}
	return spec.NextVersion(cur)
}

func cloneValue[M ~map[string]any](m M) M {
	if m == nil {
		return nil
	}
	v, err := spec.Normalize(map[string]any(m))
	if err != nil {
		return m
	}
	return M(v.(map[string]any))
}

func cloneVersions(vs spec.Versions) spec.Versions {
	if vs == nil {
		return nil
	}
	out := make(spec.Versions, len(vs))
	for k, v := range vs {
		out[k] = v
	}
	return out
}

func cloneWrites(ws []spec.Write) []spec.Write {
	out := make([]spec.Write, len(ws))
	for i, w := range ws {
		v, err := spec.Normalize(w.Value)
		if err != nil {
			v = w.Value
		}
		out[i] = spec.Write{Channel: w.Channel, Value: v}
	}
	return out
}

func cloneCheckpoint(cp *spec.Checkpoint) *spec.Checkpoint {
	out := *cp
	out.ChannelValues = cloneValue(cp.ChannelValues)
	out.ChannelVersions = cloneVersions(cp.ChannelVersions)
	if cp.VersionsSeen != nil {
		out.VersionsSeen = make(map[string]spec.Versions, len(cp.VersionsSeen))
		for k, v := range cp.VersionsSeen {
			out.VersionsSeen[k] = cloneVersions(v)
		}
	}
	out.UpdatedChannels = slices.Clone(cp.UpdatedChannels)
	return &out
}

func cloneTuple(t *spec.Tuple) *spec.Tuple {
	if t == nil {
		return nil
	}
	out := *t
	out.Checkpoint = *cloneCheckpoint(&t.Checkpoint)
	out.Metadata = cloneValue(t.Metadata)
	if t.Parent != nil {
		p := *t.Parent
		out.Parent = &p
	}
	out.PendingWrites = make([]spec.PendingWrite, len(t.PendingWrites))
	for i, w := range t.PendingWrites {
		v, err := spec.Normalize(w.Value)
		if err != nil {
			v = w.Value
		}
		out.PendingWrites[i] = spec.PendingWrite{TaskID: w.TaskID, Channel: w.Channel, Value: v}
	}
	return &out
}
