package memory

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Saver is an in-memory [spec.Saver]. The zero value is not usable; call
// [New].
type Saver struct {
	serde spec.Serde

	mu      sync.RWMutex
	threads map[string]*thread
}

// New returns an empty in-memory saver, ready to use. It has no error to
// return, so an invalid option (a nil one, or [WithSerde](nil)) makes it
// panic with an error wrapping [spec.ErrInvalidArgument].
func New(opts ...Option) *Saver {
	o, err := newOptions(opts)
	if err != nil {
		panic(err)
	}
	return &Saver{serde: o.serde, threads: make(map[string]*thread)}
}

// Setup does nothing and returns ctx.Err(): an in-memory saver has no
// schema. It exists so that every checkpointkit adapter has the same
// shape, and is safe to call at any time, concurrently with anything.
func (m *Saver) Setup(ctx context.Context) error { return ctx.Err() }

// Close does nothing and returns nil, however often it is called: the
// saver holds no resource but memory, which the garbage collector frees
// with the saver. The data stays readable after Close. It exists so that
// every checkpointkit adapter is an [io.Closer].
func (m *Saver) Close() error { return nil }

var (
	_ io.Closer             = (*Saver)(nil)
	_ spec.Saver            = (*Saver)(nil)
	_ spec.ThreadCopier     = (*Saver)(nil)
	_ spec.RunDeleter       = (*Saver)(nil)
	_ spec.Pruner           = (*Saver)(nil)
	_ spec.VersionGenerator = (*Saver)(nil)
)

// thread holds every namespace of one thread.
type thread struct {
	namespaces map[string]*namespace
}

// namespace holds the checkpoints, writes and values of one (thread,
// namespace).
type namespace struct {
	// ids is every checkpoint ID, sorted ascending byte-wise.
	ids         []string
	checkpoints map[string]*storedCheckpoint
	// writes maps a checkpoint ID to its pending writes. Writes may exist
	// for a checkpoint that has not been put yet.
	writes map[string]map[writeKey]storedWrite
	// values maps a channel and version to its stored value.
	values map[valueKey]storedValue
}

type storedCheckpoint struct {
	parent string
	// cp holds everything but ChannelValues; its maps are private copies.
	cp spec.Checkpoint
	// md is normalised metadata; it is copied on the way out.
	md spec.Metadata
}

type writeKey struct {
	taskID string
	idx    int
}

type storedWrite struct {
	channel  string
	val      value
	taskPath string
}

type valueKey struct {
	channel string
	version spec.Version
}

// storedValue is a channel's value at one version; present is false when
// the channel had no value at that version.
type storedValue struct {
	val     value
	present bool
}

func newNamespace() *namespace {
	return &namespace{
		checkpoints: make(map[string]*storedCheckpoint),
		writes:      make(map[string]map[writeKey]storedWrite),
		values:      make(map[valueKey]storedValue),
	}
}

// ns returns the namespace, creating it and its thread when create is set.
// The caller holds the appropriate lock.
func (m *Saver) ns(threadID, name string, create bool) *namespace {
	t := m.threads[threadID]
	if t == nil {
		if !create {
			return nil
		}
		t = &thread{namespaces: make(map[string]*namespace)}
		m.threads[threadID] = t
	}
	n := t.namespaces[name]
	if n == nil && create {
		n = newNamespace()
		t.namespaces[name] = n
	}
	return n
}

// Put stores cp and its metadata, and the values of the channels named in
// newVersions. See [spec.Saver.Put].
func (m *Saver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) (spec.Config, error) {
	if err := ctx.Err(); err != nil {
		return spec.Config{}, err
	}
	if err := spec.ValidatePut(cfg, cp, newVersions); err != nil {
		return spec.Config{}, err
	}
	nmd, err := spec.NormalizeMetadata(md)
	if err != nil {
		return spec.Config{}, fmt.Errorf("memory: put thread %q: metadata: %w", cfg.ThreadID, err)
	}
	// Store every value before taking the lock so that a bad value stores
	// nothing.
	values := make(map[valueKey]storedValue, len(newVersions))
	for ch, ver := range newVersions {
		v, ok := cp.ChannelValues[ch]
		if !ok {
			values[valueKey{ch, ver}] = storedValue{}
			continue
		}
		sv, err := m.store(v)
		if err != nil {
			return spec.Config{}, fmt.Errorf("memory: put thread %q: channel %q: %w", cfg.ThreadID, ch, err)
		}
		values[valueKey{ch, ver}] = storedValue{val: sv, present: true}
	}
	stored := &storedCheckpoint{parent: cfg.CheckpointID, cp: copyCheckpointMeta(cp), md: nmd}

	m.mu.Lock()
	defer m.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return spec.Config{}, err
	}
	n := m.ns(cfg.ThreadID, cfg.Namespace, true)
	for k, v := range values {
		n.values[k] = v
	}
	if _, exists := n.checkpoints[cp.ID]; !exists {
		i, _ := slices.BinarySearch(n.ids, cp.ID)
		n.ids = slices.Insert(n.ids, i, cp.ID)
	}
	n.checkpoints[cp.ID] = stored
	return spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}, nil
}

// PutWrites stores the writes of a task against the checkpoint named by cfg.
// Regular writes are first-wins and special writes last-wins. See
// [spec.Saver.PutWrites].
func (m *Saver) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := spec.ValidatePutWrites(cfg, writes, taskID, taskPath); err != nil {
		return err
	}
	type encoded struct {
		key writeKey
		w   storedWrite
	}
	enc := make([]encoded, len(writes))
	for i, w := range writes {
		sv, err := m.store(w.Value)
		if err != nil {
			return fmt.Errorf("memory: put writes thread %q: write %d to %q: %w", cfg.ThreadID, i, w.Channel, err)
		}
		enc[i] = encoded{
			key: writeKey{taskID: taskID, idx: spec.WriteIndex(w.Channel, i)},
			w:   storedWrite{channel: w.Channel, val: sv, taskPath: taskPath},
		}
	}
	if len(enc) == 0 {
		return nil
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	n := m.ns(cfg.ThreadID, cfg.Namespace, true)
	set := n.writes[cfg.CheckpointID]
	if set == nil {
		set = make(map[writeKey]storedWrite, len(enc))
		n.writes[cfg.CheckpointID] = set
	}
	for _, e := range enc {
		if _, exists := set[e.key]; exists && e.key.idx >= 0 {
			continue // regular writes: first write wins
		}
		set[e.key] = e.w
	}
	return nil
}

// GetTuple returns the checkpoint named by cfg, or the latest of its thread
// and namespace. See [spec.Saver.GetTuple].
func (m *Saver) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := spec.ValidateGetTuple(cfg); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := m.ns(cfg.ThreadID, cfg.Namespace, false)
	if n == nil || len(n.ids) == 0 {
		return nil, fmt.Errorf("memory: get thread %q namespace %q: %w", cfg.ThreadID, cfg.Namespace, spec.ErrNotFound)
	}
	id := cfg.CheckpointID
	if id == "" {
		id = n.ids[len(n.ids)-1]
	}
	t, err := m.tuple(cfg.ThreadID, cfg.Namespace, n, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("memory: get thread %q namespace %q checkpoint %q: %w", cfg.ThreadID, cfg.Namespace, id, spec.ErrNotFound)
	}
	return t, nil
}

// tuple builds the tuple of checkpoint id, or returns nil when it does not
// exist. The caller holds at least the read lock.
func (m *Saver) tuple(threadID, nsName string, n *namespace, id string) (*spec.Tuple, error) {
	sc := n.checkpoints[id]
	if sc == nil {
		return nil, nil
	}
	cp := copyCheckpointMeta(sc.cp)
	cp.ChannelValues = make(map[string]any, len(cp.ChannelVersions))
	for ch, ver := range cp.ChannelVersions {
		sv, ok := n.values[valueKey{ch, ver}]
		if !ok || !sv.present {
			continue
		}
		v, err := m.load(sv.val)
		if err != nil {
			return nil, fmt.Errorf("memory: decode thread %q channel %q: %w", threadID, ch, err)
		}
		cp.ChannelValues[ch] = v
	}
	md, err := copyMetadata(sc.md)
	if err != nil {
		return nil, err
	}
	set := n.writes[id]
	t := &spec.Tuple{
		Config:        spec.Config{ThreadID: threadID, Namespace: nsName, CheckpointID: id},
		Checkpoint:    cp,
		Metadata:      md,
		PendingWrites: make([]spec.PendingWrite, 0, len(set)),
	}
	if sc.parent != "" {
		t.Parent = &spec.Config{ThreadID: threadID, Namespace: nsName, CheckpointID: sc.parent}
	}
	var buf [16]writeKey // most tasks write a few channels: no allocation
	keys := buf[:0]
	for k := range set {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareWriteKeys)
	for _, k := range keys {
		w := set[k]
		v, err := m.load(w.val)
		if err != nil {
			return nil, fmt.Errorf("memory: decode thread %q write %q: %w", threadID, w.channel, err)
		}
		t.PendingWrites = append(t.PendingWrites, spec.PendingWrite{TaskID: k.taskID, Channel: w.channel, Value: v})
	}
	return t, nil
}

func compareWriteKeys(a, b writeKey) int {
	if a.taskID != b.taskID {
		if a.taskID < b.taskID {
			return -1
		}
		return 1
	}
	return a.idx - b.idx
}

// copyCheckpointMeta copies everything of cp except ChannelValues, which it
// leaves nil. Maps come back non-nil; UpdatedChannels keeps nil as nil.
func copyCheckpointMeta(cp spec.Checkpoint) spec.Checkpoint {
	out := spec.Checkpoint{
		V:               cp.V,
		ID:              cp.ID,
		TS:              cp.TS,
		ChannelVersions: copyVersions(cp.ChannelVersions),
		VersionsSeen:    make(map[string]spec.Versions, len(cp.VersionsSeen)),
	}
	for node, vs := range cp.VersionsSeen {
		out.VersionsSeen[node] = copyVersions(vs)
	}
	if cp.UpdatedChannels != nil {
		out.UpdatedChannels = slices.Clone(cp.UpdatedChannels)
	}
	return out
}

// copyMetadata returns a copy of normalised metadata that shares nothing
// mutable with md: scalar values are copied as they are, nested maps and
// lists through spec.NormalizeMetadata, which copies deeply.
func copyMetadata(md spec.Metadata) (spec.Metadata, error) {
	out := make(spec.Metadata, len(md))
	for k, v := range md {
		switch v.(type) {
		case nil, string, bool, int64, float64:
			out[k] = v
		default:
			return spec.NormalizeMetadata(md)
		}
	}
	return out, nil
}

func copyVersions(vs spec.Versions) spec.Versions {
	out := make(spec.Versions, len(vs))
	for k, v := range vs {
		out[k] = v
	}
	return out
}

// DeleteThread removes every checkpoint, write and value of a thread. See
// [spec.Saver.DeleteThread].
func (m *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("delete thread", threadID); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.threads, threadID)
	return nil
}

// NextVersion returns [spec.NextVersion] of current.
func (m *Saver) NextVersion(current spec.Version) spec.Version {
	return spec.NextVersion(current)
}
