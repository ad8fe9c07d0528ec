// Package wrapexample_test is the worked example of the conformance
// package's guide to wrapping an existing saver: typedSaver stores
// checkpoints in records with typed fields, as a store designed without
// checkpointkit in mind might (int64 versions, a time.Time, a metadata
// struct), and maps checkpointkit's strings and maps onto them without
// losing anything. TestConformance runs the suite on it; it reaches
// LangGraph core FULL.
package wrapexample_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// record is one stored checkpoint, in the existing store's shape.
type record struct {
	thread, ns, id, parent string
	v                      int
	// ts is the typed timestamp the store indexes, written back in layout
	// tsLayout; tsRaw keeps cp.TS when no layout gives it back byte for
	// byte.
	ts       time.Time
	tsLayout string
	tsRaw    string
	// versions are the store's int64 versions; rawVersions keeps every
	// version that is not a canonical decimal integer.
	versions    map[string]int64
	rawVersions map[string]string
	seen        map[string]spec.Versions
	updated     []string
	meta        meta
	// values is the whole snapshot of channel values, each channel's value
	// encoded on its own: the store keeps no values per version (the
	// WholeSnapshots variant). Encoding the snapshot as one map would nest
	// every value a level deeper than it was put, so that a value at
	// spec.MaxValueDepth could not be stored (VALUE-10).
	values map[string][]byte
}

// meta is the store's typed metadata: the keys LangGraph writes get
// fields; every other key, and a known key whose value has another type,
// goes to extra, so that nothing is lost.
type meta struct {
	source  *string
	step    *int64
	parents map[string]string // nil: absent
	extra   spec.Metadata
}

func toMeta(md spec.Metadata) meta {
	m := meta{extra: spec.Metadata{}}
	for k, v := range md {
		switch x := v.(type) {
		case string:
			if k == "source" {
				m.source = &x
				continue
			}
		case int64:
			if k == "step" {
				m.step = &x
				continue
			}
		case map[string]any:
			if p, ok := stringMap(x); ok && k == "parents" {
				m.parents = p
				continue
			}
		}
		m.extra[k] = v
	}
	return m
}

func stringMap(x map[string]any) (map[string]string, bool) {
	out := make(map[string]string, len(x))
	for k, v := range x {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

func (m meta) metadata() spec.Metadata {
	md := spec.Metadata{}
	for k, v := range m.extra {
		md[k], _ = spec.Normalize(v) // a deep copy
	}
	if m.source != nil {
		md["source"] = *m.source
	}
	if m.step != nil {
		md["step"] = *m.step
	}
	if m.parents != nil {
		p := map[string]any{}
		for k, v := range m.parents {
			p[k] = v
		}
		md["parents"] = p
	}
	return md
}

// tsLayouts are the layouts the typed timestamp is tried in.
var tsLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.000000Z07:00"}

// setTS stores ts typed when a layout gives it back byte for byte.
func (r *record) setTS(ts string) {
	for _, l := range tsLayouts {
		if t, err := time.Parse(l, ts); err == nil && t.Format(l) == ts {
			r.ts, r.tsLayout = t, l
			return
		}
	}
	r.tsRaw = ts
}

func (r *record) tsString() string {
	if r.tsLayout == "" {
		return r.tsRaw
	}
	return r.ts.Format(r.tsLayout)
}

func toVersions(vs spec.Versions) (map[string]int64, map[string]string) {
	typed, raw := map[string]int64{}, map[string]string{}
	for ch, v := range vs {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && strconv.FormatInt(n, 10) == string(v) {
			typed[ch] = n
		} else {
			raw[ch] = string(v)
		}
	}
	return typed, raw
}

func (r *record) channelVersions() spec.Versions {
	out := spec.Versions{}
	for ch, n := range r.versions {
		out[ch] = spec.Version(strconv.FormatInt(n, 10))
	}
	for ch, v := range r.rawVersions {
		out[ch] = spec.Version(v)
	}
	return out
}

type key struct{ thread, ns, id string }

type writeKey struct {
	task string
	idx  int
}

// typedSaver keeps records and pending writes in maps, under one lock.
type typedSaver struct {
	mu      sync.Mutex
	records map[key]*record
	writes  map[key]map[writeKey]spec.PendingWrite
	counter int64 // the highest version NextVersion minted
}

func newTypedSaver() *typedSaver {
	return &typedSaver{records: map[key]*record{}, writes: map[key]map[writeKey]spec.PendingWrite{}}
}

var serde = spec.DefaultSerde()

// Put stores cp as a record. The engine always passes complete channel
// values, so the snapshot is all a reader needs.
func (s *typedSaver) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	if err := ctx.Err(); err != nil {
		return spec.Config{}, err
	}
	if err := spec.ValidatePut(cfg, cp, nv); err != nil {
		return spec.Config{}, err
	}
	nmd, err := spec.NormalizeMetadata(md)
	if err != nil {
		return spec.Config{}, fmt.Errorf("put: metadata: %w", err)
	}
	blobs := make(map[string][]byte, len(cp.ChannelValues))
	for ch, v := range cp.ChannelValues {
		nv, err := spec.Normalize(v)
		if err != nil {
			return spec.Config{}, fmt.Errorf("put: channel %q: %w", ch, err)
		}
		if blobs[ch], err = serde.Encode(nv); err != nil {
			return spec.Config{}, fmt.Errorf("put: channel %q: %w", ch, err)
		}
	}
	r := &record{thread: cfg.ThreadID, ns: cfg.Namespace, id: cp.ID, parent: cfg.CheckpointID, v: cp.V, meta: toMeta(nmd), values: blobs,
		seen: map[string]spec.Versions{}, updated: slices.Clone(cp.UpdatedChannels)}
	r.setTS(cp.TS)
	r.versions, r.rawVersions = toVersions(cp.ChannelVersions)
	for n, vs := range cp.VersionsSeen {
		r.seen[n] = maps.Clone(vs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[key{r.thread, r.ns, r.id}] = r
	return spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}, nil
}

// PutWrites stores writes: regular ones first-wins, special ones last-wins.
func (s *typedSaver) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := spec.ValidatePutWrites(cfg, writes, taskID, taskPath); err != nil {
		return err
	}
	vals := make([]any, len(writes))
	for i, w := range writes {
		v, err := spec.Normalize(w.Value)
		if err != nil {
			return fmt.Errorf("put writes: channel %q: %w", w.Channel, err)
		}
		vals[i] = v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{cfg.ThreadID, cfg.Namespace, cfg.CheckpointID}
	if s.writes[k] == nil {
		s.writes[k] = map[writeKey]spec.PendingWrite{}
	}
	for i, w := range writes {
		wk := writeKey{taskID, spec.WriteIndex(w.Channel, i)}
		if _, ok := s.writes[k][wk]; ok && wk.idx >= 0 {
			continue
		}
		s.writes[k][wk] = spec.PendingWrite{TaskID: taskID, Channel: w.Channel, Value: vals[i]}
	}
	return nil
}

// tuple builds the tuple of a record; the caller holds the lock.
func (s *typedSaver) tuple(r *record) (*spec.Tuple, error) {
	vals := make(map[string]any, len(r.values))
	for ch, blob := range r.values {
		v, err := serde.Decode(blob)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", ch, err)
		}
		vals[ch] = v
	}
	seen := map[string]spec.Versions{}
	for n, vs := range r.seen {
		seen[n] = maps.Clone(vs)
	}
	t := &spec.Tuple{
		Config: spec.Config{ThreadID: r.thread, Namespace: r.ns, CheckpointID: r.id},
		Checkpoint: spec.Checkpoint{V: r.v, ID: r.id, TS: r.tsString(), ChannelValues: vals, ChannelVersions: r.channelVersions(),
			VersionsSeen: seen, UpdatedChannels: slices.Clone(r.updated)},
		Metadata:      r.meta.metadata(),
		PendingWrites: []spec.PendingWrite{},
	}
	if r.parent != "" {
		t.Parent = &spec.Config{ThreadID: r.thread, Namespace: r.ns, CheckpointID: r.parent}
	}
	ws := s.writes[key{r.thread, r.ns, r.id}]
	for _, wk := range slices.SortedFunc(maps.Keys(ws), func(a, b writeKey) int { return cmp.Or(cmp.Compare(a.task, b.task), cmp.Compare(a.idx, b.idx)) }) {
		w := ws[wk]
		w.Value, _ = spec.Normalize(w.Value) // a deep copy
		t.PendingWrites = append(t.PendingWrites, w)
	}
	return t, nil
}

// GetTuple returns one checkpoint, or the one with the greatest ID.
func (s *typedSaver) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := spec.ValidateGetTuple(cfg); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *record
	for k, r := range s.records {
		if k.thread != cfg.ThreadID || k.ns != cfg.Namespace || (cfg.CheckpointID != "" && k.id != cfg.CheckpointID) {
			continue
		}
		if found == nil || k.id > found.id { // by ID, never by the typed ts
			found = r
		}
	}
	if found == nil {
		return nil, fmt.Errorf("get tuple %q: %w", cfg.ThreadID, spec.ErrNotFound)
	}
	return s.tuple(found)
}

// List lists one thread; listing every thread is not supported.
func (s *typedSaver) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if err := spec.ValidateList(opts); err != nil {
			yield(nil, err)
			return
		}
		if opts.ThreadID == "" {
			yield(nil, fmt.Errorf("list: every thread: %w", errors.ErrUnsupported))
			return
		}
		filter, _ := spec.NormalizeFilter(opts.Filter)
		s.mu.Lock()
		var out []*spec.Tuple
		for k, r := range s.records {
			switch {
			case k.thread != opts.ThreadID, !opts.AllNamespaces && k.ns != opts.Namespace,
				opts.CheckpointID != "" && k.id != opts.CheckpointID, opts.Before != "" && k.id >= opts.Before,
				!spec.MatchFilter(r.meta.metadata(), filter):
				continue
			}
			t, err := s.tuple(r)
			if err != nil {
				s.mu.Unlock()
				yield(nil, err)
				return
			}
			out = append(out, t)
		}
		s.mu.Unlock()
		slices.SortFunc(out, func(a, b *spec.Tuple) int {
			return cmp.Or(-cmp.Compare(a.Config.CheckpointID, b.Config.CheckpointID), cmp.Compare(a.Config.Namespace, b.Config.Namespace))
		})
		if opts.Limit > 0 && len(out) > opts.Limit {
			out = out[:opts.Limit]
		}
		for _, t := range out {
			if !yield(t, nil) {
				return
			}
		}
	}
}

// DeleteThread removes a thread's records and writes.
func (s *typedSaver) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("delete thread", threadID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.records, func(k key, _ *record) bool { return k.thread == threadID })
	maps.DeleteFunc(s.writes, func(k key, _ map[writeKey]spec.PendingWrite) bool { return k.thread == threadID })
	return nil
}

// NextVersion mints int64 versions from one counter for the whole saver,
// so that two forks of a thread never get the same version.
func (s *typedSaver) NextVersion(current spec.Version) spec.Version {
	n, _ := strconv.ParseInt(string(current), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counter = max(s.counter, n) + 1
	return spec.Version(strconv.FormatInt(s.counter, 10))
}

// TestConformance runs the suite on typedSaver, declaring its two
// differences from checkpointkit's strict rules: it stores whole snapshots,
// and it cannot list every thread at once.
func TestConformance(t *testing.T) {
	const name = "typed example"
	conformance.Run(t, conformance.Harness{
		Name:         name,
		New:          func(context.Context) (spec.Saver, func(), error) { return newTypedSaver(), nil, nil },
		Variants:     []conformance.Variant{conformance.WholeSnapshots},
		NotSupported: []string{"list_threads"},
	})
	rep, ok := conformance.LastReport()
	if !ok {
		t.Fatal("no conformance report")
	}
	h := rep.Harness(name)
	if h.Complete() && h.CoreLevel != conformance.LevelFull {
		t.Errorf("LangGraph core level %s, want FULL; root causes %v", h.CoreLevel, h.PrimaryFailedRules)
	}
}
