package refengine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// DefaultSnapshotFrequency is the number of updates after which a [Delta]
// channel stores its whole value again, as LangGraph's DeltaChannel
// defaults to.
const DefaultSnapshotFrequency = 100

// maxSuperstepsSinceSnapshot is LangGraph's
// DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT default: a delta channel snapshots
// after this many supersteps even when it was not written.
const maxSuperstepsSinceSnapshot = 5000

// OverwriteKey marks a write that replaces a [Delta] channel's value instead
// of being folded into it: {OverwriteKey: v} (LangGraph's Overwrite, in its
// dict form). A nil v resets the channel to its empty value.
const OverwriteKey = "__overwrite__"

// Delta is a key stored as a delta channel (LangGraph 1.2's DeltaChannel):
// fn folds a batch of written values into the current value in one call,
// and must give the same result whether writes come in one batch or
// several. empty is the value of a channel nothing was written to (nil:
// an empty list). Checkpoints store the whole value only every
// snapshotFrequency updates (0: [DefaultSnapshotFrequency]) as a
// spec.DeltaSnapshot; in between, the engine rebuilds the value from the
// saver's delta history ([spec.ReadDeltaHistory]). A write {OverwriteKey: v}
// replaces the value. [AppendDelta] is a ready-made fn.
func Delta(fn func(current any, writes []any) (any, error), empty any, snapshotFrequency int) Channel {
	if snapshotFrequency <= 0 {
		snapshotFrequency = DefaultSnapshotFrequency
	}
	if empty == nil {
		empty = []any{}
	}
	return Channel{kind: kindDelta, deltaReduce: fn, initial: empty, hasInitial: true, every: snapshotFrequency}
}

// AppendDelta is a [Delta] function concatenating lists: a list write is
// appended element-wise, any other value as one element.
func AppendDelta(current any, writes []any) (any, error) {
	cur, _ := current.([]any)
	out := slices.Clone(cur)
	if out == nil {
		out = []any{}
	}
	for _, w := range writes {
		if l, ok := w.([]any); ok {
			out = append(out, l...)
		} else {
			out = append(out, w)
		}
	}
	return out, nil
}

// overwriteOf reports whether v is an overwrite write, and its value.
func overwriteOf(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, false
	}
	ow, ok := m[OverwriteKey]
	return ow, ok
}

// deltaChan is the runtime state of a [Delta] channel: always available,
// starting from the empty value.
type deltaChan struct {
	fn    func(current any, writes []any) (any, error)
	empty any
	value any
}

func (c *deltaChan) emptyValue() any {
	v, err := spec.Normalize(c.empty)
	if err != nil {
		return c.empty
	}
	return v
}

func (c *deltaChan) reduce(key string, base any, vals []any) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("at key %q: %w: %v", key, ErrReducerPanic, r)
		}
	}()
	out, err = c.fn(base, slices.Clone(vals))
	if err != nil {
		return nil, fmt.Errorf("at key %q: %w", key, err)
	}
	return out, nil
}

func (c *deltaChan) update(key string, vals []any) (bool, error) {
	if len(vals) == 0 {
		return false, nil
	}
	at := -1
	for i, v := range vals {
		if _, ok := overwriteOf(v); ok {
			if at >= 0 {
				return false, fmt.Errorf("%w: at key %q: can receive only one overwrite per step", ErrInvalidUpdate, key)
			}
			at = i
		}
	}
	if at >= 0 {
		ow, _ := overwriteOf(vals[at])
		if ow == nil {
			ow = c.emptyValue()
		}
		c.value = ow
		return true, nil
	}
	nv, err := c.reduce(key, c.value, vals)
	if err != nil {
		return false, err
	}
	c.value = nv
	return true, nil
}

// replay applies the writes of a delta history, oldest first, in one
// reducer call after the last overwrite.
func (c *deltaChan) replay(key string, writes []spec.PendingWrite) error {
	base, start := c.value, 0
	for i, w := range writes {
		if ow, ok := overwriteOf(w.Value); ok {
			if ow == nil {
				ow = c.emptyValue()
			}
			base, start = ow, i+1
		}
	}
	rest := make([]any, 0, len(writes)-start)
	for _, w := range writes[start:] {
		rest = append(rest, w.Value)
	}
	if len(rest) == 0 {
		c.value = base
		return nil
	}
	nv, err := c.reduce(key, base, rest)
	if err != nil {
		return err
	}
	c.value = nv
	return nil
}

func (c *deltaChan) get() (any, bool) { return c.value, true }
func (c *deltaChan) available() bool  { return true }
func (c *deltaChan) consume() bool    { return false }

// checkpoint stores nothing: snapshots are decided per checkpoint by
// [snapshotDeltas].
func (c *deltaChan) checkpoint() (any, bool) { return nil, false }

// newDeltaChan builds a delta channel from what a checkpoint stores for it:
// a snapshot, a plain value (stored before the key became a delta channel)
// or nothing.
func (c Channel) newDeltaChan(stored any, ok bool) *deltaChan {
	ch := &deltaChan{fn: c.deltaReduce, empty: c.initial}
	switch s := stored.(type) {
	case spec.DeltaSnapshot:
		ch.value = s.Value
	default:
		if ok && stored != nil {
			ch.value = stored
		} else {
			ch.value = ch.emptyValue()
		}
	}
	return ch
}

// deltaKeys returns the names of g's delta channels, sorted.
func (g *Graph) deltaKeys() []string {
	var out []string
	for name, c := range g.channels {
		if c.kind == kindDelta {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// restoreChannels rebuilds the runtime channels of a checkpoint, reading
// the delta history of every channel that has a version but no stored
// value (LangGraph's channels_from_checkpoint): delta channels, and
// reducer keys written as delta channels before their declaration changed.
// cfg addresses the checkpoint; the saver is asked once, for all of them.
func (g *Graph) restoreChannels(ctx context.Context, s spec.Saver, cfg spec.Config, cp *spec.Checkpoint) (map[string]channel, error) {
	chans := g.loadChannels(cp)
	var replay []string
	for name, c := range g.channels {
		if c.kind != kindDelta && c.kind != kindReducer {
			continue
		}
		if _, versioned := cp.ChannelVersions[name]; !versioned {
			continue
		}
		if _, stored := cp.ChannelValues[name]; stored {
			continue
		}
		replay = append(replay, name)
	}
	if len(replay) == 0 {
		return chans, nil
	}
	slices.Sort(replay)
	hist, err := spec.ReadDeltaHistory(ctx, s, cfg, replay)
	if err != nil {
		return nil, fmt.Errorf("refengine: delta history of %v: %w", replay, err)
	}
	for _, name := range replay {
		h, ok := hist[name]
		if !ok {
			continue
		}
		c := g.channels[name]
		if c.kind == kindDelta {
			dc := c.newDeltaChan(h.Seed, h.HasSeed)
			if err := dc.replay(name, h.Writes); err != nil {
				return nil, err
			}
			chans[name] = dc
			continue
		}
		// A reducer key: one update per write, as the writes span many
		// supersteps.
		ch := c.newChannel(h.Seed, h.HasSeed)
		for _, w := range h.Writes {
			if _, err := ch.update(name, []any{w.Value}); err != nil {
				return nil, err
			}
		}
		chans[name] = ch
	}
	return chans, nil
}

// deltaCounter is one delta channel's updates and supersteps since its
// last snapshot.
type deltaCounter struct{ updates, supersteps int64 }

// readCounters reads the counters of md (LangGraph stores each as a
// two-element list).
func readCounters(md spec.Metadata) map[string]deltaCounter {
	out := map[string]deltaCounter{}
	m, _ := md[spec.DeltaCountersKey].(map[string]any)
	for ch, v := range m {
		l, ok := v.([]any)
		if !ok || len(l) != 2 {
			continue
		}
		out[ch] = deltaCounter{toInt64(l[0]), toInt64(l[1])}
	}
	return out
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

// advanceCounters counts one more superstep for every delta channel of g,
// and one more update for those in updated.
func (g *Graph) advanceCounters(prev spec.Metadata, updated []string) map[string]deltaCounter {
	old := readCounters(prev)
	out := map[string]deltaCounter{}
	for _, name := range g.deltaKeys() {
		c := old[name]
		c.supersteps++
		if slices.Contains(updated, name) {
			c.updates++
		}
		out[name] = c
	}
	return out
}

// dueSnapshots lists the delta channels whose counters reached their
// cadence, among those with a version.
func (g *Graph) dueSnapshots(counters map[string]deltaCounter, versions spec.Versions) map[string]bool {
	out := map[string]bool{}
	for _, name := range g.deltaKeys() {
		if _, ok := versions[name]; !ok {
			continue
		}
		c := counters[name]
		if c.updates >= int64(g.channels[name].every) || c.supersteps >= maxSuperstepsSinceSnapshot {
			out[name] = true
		}
	}
	return out
}

// storeCounters records the non-zero counters in md under
// spec.DeltaCountersKey, snapshotted channels reset to zero.
func storeCounters(md spec.Metadata, counters map[string]deltaCounter, snapped map[string]bool) {
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(counters)) {
		c := counters[name]
		if snapped[name] || c == (deltaCounter{}) {
			continue
		}
		out[name] = []any{c.updates, c.supersteps}
	}
	if len(out) > 0 {
		md[spec.DeltaCountersKey] = out
	} else {
		delete(md, spec.DeltaCountersKey)
	}
}

// snapshotDeltas stores a spec.DeltaSnapshot of each channel in snap in
// out (LangGraph's create_checkpoint with channels_to_snapshot). A channel
// whose version has not moved since the checkpoint last stored (stored)
// gets a new version, as Put stores only the values of channels whose
// version moved; one without a version gets its first. Such a bump is no
// write: the versions_seen entries that had seen the old version are moved
// to the new one ([markBumpsSeen]).
func (g *Graph) snapshotDeltas(out *spec.Checkpoint, chans map[string]channel, snap map[string]bool, stored spec.Versions, next func(spec.Version) spec.Version) error {
	var bumps []versionBump
	for _, name := range slices.Sorted(maps.Keys(snap)) {
		ch := chans[name]
		if ch == nil {
			continue
		}
		v, _ := ch.get()
		nv, err := spec.Normalize(v)
		if err != nil {
			return fmt.Errorf("channel %q: %w", name, err)
		}
		cur, versioned := out.ChannelVersions[name]
		switch {
		case !versioned:
			out.ChannelVersions[name] = next("")
			bumps = append(bumps, versionBump{name, "", out.ChannelVersions[name]})
		case stored != nil && cur == stored[name]:
			out.ChannelVersions[name] = next(cur)
			bumps = append(bumps, versionBump{name, cur, out.ChannelVersions[name]})
		}
		out.ChannelValues[name] = spec.DeltaSnapshot{Value: nv}
	}
	g.markBumpsSeen(out, bumps)
	return nil
}

// deltaWrites lists the delta channels that writes touch (LangGraph's
// delta_channels_with_pending_writes).
func (g *Graph) deltaWrites(writes []spec.PendingWrite) map[string]bool {
	out := map[string]bool{}
	for _, w := range writes {
		if c, ok := g.channels[w.Channel]; ok && c.kind == kindDelta {
			out[w.Channel] = true
		}
	}
	return out
}

// deltaOverwrites lists the delta channels writes set with an overwrite.
func (g *Graph) deltaOverwrites(writes []spec.Write) map[string]bool {
	out := map[string]bool{}
	for _, w := range writes {
		if c, ok := g.channels[w.Channel]; ok && c.kind == kindDelta {
			if _, ow := overwriteOf(w.Value); ow {
				out[w.Channel] = true
			}
		}
	}
	return out
}

// planUpdateSnapshots decides the snapshots of a checkpoint an update
// stores (LangGraph's create_checkpoint_plan_for_update_state_api): on a
// fresh thread every delta channel with a version; otherwise those whose
// advanced counters reached their cadence, plus fork. It records the
// counters in md and stores the snapshots in out.
func (g *Graph) planUpdateSnapshots(out *spec.Checkpoint, md spec.Metadata, saved *spec.Tuple, chans map[string]channel, updated []string, fork map[string]bool, stored spec.Versions, next func(spec.Version) spec.Version) error {
	keys := g.deltaKeys()
	if len(keys) == 0 {
		return nil
	}
	snap := map[string]bool{}
	if saved == nil {
		for _, k := range keys {
			if _, ok := out.ChannelVersions[k]; ok {
				snap[k] = true
			}
		}
	} else {
		counters := g.advanceCounters(saved.Metadata, updated)
		snap = g.dueSnapshots(counters, out.ChannelVersions)
		for k := range fork {
			snap[k] = true
		}
		storeCounters(md, counters, snap)
	}
	return g.snapshotDeltas(out, chans, snap, stored, next)
}

// writtenChannels lists the channels the writes of aw touch (LangGraph's
// get_updated_channels_from_tasks).
func writtenChannels(aw []appliedWrites) []string {
	var out []string
	for _, a := range aw {
		for _, w := range a.writes {
			if !slices.Contains(out, w.Channel) {
				out = append(out, w.Channel)
			}
		}
	}
	slices.Sort(out)
	return out
}

// deltaSnapshots advances the delta counters for the checkpoint the loop
// is about to put, stores the snapshots due (cadence or forced) in cp and
// the counters in md (LangGraph's _put_checkpoint). Under exit durability
// no checkpoint is stored until the run ends, so none snapshots here: the
// counters go on, forced channels stay forced, and [loop.putExitCheckpoint]
// decides at exit.
func (l *loop) deltaSnapshots(cp *spec.Checkpoint, md spec.Metadata, updated []string) error {
	if len(l.g.deltaKeys()) == 0 {
		return nil
	}
	counters := l.g.advanceCounters(l.meta, updated)
	snap := map[string]bool{}
	if l.opts.durability != DurabilityExit {
		snap = l.g.dueSnapshots(counters, cp.ChannelVersions)
		for k := range l.forced {
			snap[k] = true
		}
		if err := l.g.snapshotDeltas(cp, l.chans, snap, l.prevVersions, l.nextVersion); err != nil {
			return err
		}
		for k := range snap {
			l.cp.ChannelVersions[k] = cp.ChannelVersions[k]
			delete(l.forced, k)
		}
		if len(snap) > 0 {
			// The working checkpoint goes on from this one, bumps seen.
			l.cp.VersionsSeen = make(map[string]spec.Versions, len(cp.VersionsSeen))
			for n, vs := range cp.VersionsSeen {
				l.cp.VersionsSeen[n] = maps.Clone(vs)
			}
		}
	}
	storeCounters(md, counters, snap)
	return nil
}
