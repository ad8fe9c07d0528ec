package repro

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// part is one field of a result that a snippet compares: a config key of
// the tuple or of its parent, a checkpoint key, a metadata key, the
// pending writes, or a part of a delta history read (see historyDiff).
type part struct {
	area string // "config", "parent", "checkpoint", "metadata", "writes" or history*
	key  string
}

// check is what a snippet compares at the differing call, chosen in Go
// from the reference's and the saver's results so that the snippet reads
// only the field the difference is about.
type check struct {
	// raises: the contract expects the call to fail; errMsg is the
	// reference's message.
	raises bool
	errMsg string
	// part is the field read: of the config Put returns, of the tuple
	// GetTuple returns (nilSafe when either side found none), of every
	// listed tuple (index -1) or of listed tuple index.
	part    part
	index   int
	nilSafe bool
	// none: the call returns nothing to compare; only its success counts.
	none bool
}

// configKeys are a config's IDs, in the order a difference is looked for.
var configKeys = []string{"checkpoint_id", "checkpoint_ns", "thread_id"}

// newCheck chooses what to compare at d's call.
func newCheck(d *Divergence) check {
	w, g := d.Want, d.Got
	if w.Err != "" && !(w.Method == trace.MethodGetTuple && w.NotFound) {
		return check{raises: true, errMsg: w.Err}
	}
	switch w.Method {
	case trace.MethodPut:
		c := check{part: part{"config", "checkpoint_id"}}
		if w.Result != nil && g.Result != nil {
			if k := configDiff(w.Result, g.Result); k != "" {
				c.part.key = k
			}
		}
		return c
	case trace.MethodGetTuple:
		wt, gt := w.Tuple, g.Tuple
		if w.NotFound {
			wt = nil
		}
		if g.NotFound || g.Err != "" {
			gt = nil
		}
		if wt == nil || gt == nil {
			return check{part: part{"config", "checkpoint_id"}, nilSafe: true}
		}
		return check{part: tupleDiff(wt, gt)}
	case trace.MethodList:
		c := check{part: part{"config", "checkpoint_id"}, index: -1}
		if g.Err != "" {
			return c
		}
		for _, k := range configKeys {
			if !slices.Equal(ids(w.Tuples, k), ids(g.Tuples, k)) {
				c.part.key = k
				return c
			}
		}
		for j := range w.Tuples {
			if p := tupleDiff(w.Tuples[j], g.Tuples[j]); p.area != "" {
				return check{part: p, index: j}
			}
		}
		return c
	case trace.MethodDeltaHistory:
		gh := g.Histories
		if g.Err != "" {
			gh = nil
		}
		return check{part: historyDiff(w.Histories, gh, w.Channels)}
	case trace.MethodNextVersion:
		// The snippet checks the property (greater than the current
		// version), never the reference's spelling.
		return check{part: part{area: "version"}}
	}
	return check{none: true}
}

// ids returns config key k of every tuple.
func ids(ts []*spec.Tuple, k string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = configValue(&t.Config, k)
	}
	return out
}

func configValue(c *spec.Config, k string) string {
	switch k {
	case "thread_id":
		return c.ThreadID
	case "checkpoint_ns":
		return c.Namespace
	}
	return c.CheckpointID
}

// configDiff returns the first config key in which a and b differ, or "".
func configDiff(a, b *spec.Config) string {
	for _, k := range configKeys {
		if configValue(a, k) != configValue(b, k) {
			return k
		}
	}
	return ""
}

// tupleDiff returns the first field in which got differs from want, in
// trace.Replay's order, or the zero part when none does.
func tupleDiff(want, got *spec.Tuple) part {
	if k := configDiff(&want.Config, &got.Config); k != "" {
		return part{"config", k}
	}
	if (want.Parent == nil) != (got.Parent == nil) {
		return part{"parent", "checkpoint_id"}
	}
	if want.Parent != nil {
		if k := configDiff(want.Parent, got.Parent); k != "" {
			return part{"parent", k}
		}
	}
	wc, gc := &want.Checkpoint, &got.Checkpoint
	switch {
	case wc.V != gc.V:
		return part{"checkpoint", "v"}
	case wc.ID != gc.ID:
		return part{"checkpoint", "id"}
	case wc.TS != gc.TS:
		return part{"checkpoint", "ts"}
	case !spec.Equal(anyMap(wc.ChannelValues), anyMap(gc.ChannelValues)):
		return part{"checkpoint", "channel_values"}
	case !maps.Equal(wc.ChannelVersions, gc.ChannelVersions):
		return part{"checkpoint", "channel_versions"}
	case (wc.UpdatedChannels == nil) != (gc.UpdatedChannels == nil) || !slices.Equal(wc.UpdatedChannels, gc.UpdatedChannels):
		return part{"checkpoint", "updated_channels"}
	case !maps.EqualFunc(wc.VersionsSeen, gc.VersionsSeen, func(a, b spec.Versions) bool { return maps.Equal(a, b) }):
		return part{"checkpoint", "versions_seen"}
	}
	keys := slices.Sorted(maps.Keys(want.Metadata))
	for k := range got.Metadata {
		if _, ok := want.Metadata[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		wv, wok := want.Metadata[k]
		gv, gok := got.Metadata[k]
		if wok != gok || !spec.Equal(wv, gv) {
			return part{"metadata", k}
		}
	}
	ww, gw := byTask(want.PendingWrites), byTask(got.PendingWrites)
	if !slices.EqualFunc(ww, gw, func(a, b spec.PendingWrite) bool {
		return a.TaskID == b.TaskID && a.Channel == b.Channel && spec.Equal(a.Value, b.Value)
	}) {
		return part{"writes", ""}
	}
	return part{}
}

// byTask returns ws ordered by task ID, each task's writes in their order.
func byTask(ws []spec.PendingWrite) []spec.PendingWrite {
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(a, b spec.PendingWrite) int { return strings.Compare(a.TaskID, b.TaskID) })
	return ws
}

// literal writes p's value in t (nil: no tuple) as the contract expects it.
func (l lang) literal(p part, t *spec.Tuple) string {
	if t == nil {
		return l.null
	}
	switch p.area {
	case "config":
		return quote(configValue(&t.Config, p.key))
	case "parent":
		if t.Parent == nil {
			return l.null
		}
		return quote(configValue(t.Parent, p.key))
	case "metadata":
		v, ok := t.Metadata[p.key]
		if !ok {
			return l.null
		}
		return l.value(v)
	case "writes":
		ws := byTask(t.PendingWrites)
		parts := make([]string, len(ws))
		for i, w := range ws {
			parts[i] = l.tuple(quote(w.TaskID), quote(w.Channel), l.value(w.Value))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	cp := &t.Checkpoint
	switch p.key {
	case "v":
		return l.int(int64(cp.V))
	case "id":
		return quote(cp.ID)
	case "ts":
		return quote(cp.TS)
	case "channel_values":
		return l.value(anyMap(cp.ChannelValues))
	case "channel_versions":
		return l.versions(cp.ChannelVersions)
	case "updated_channels":
		return l.strings(cp.UpdatedChannels)
	}
	return l.versionsSeen(cp.VersionsSeen)
}

// expected writes what c's check expects of the reference's call w.
func (l lang) expected(c check, w trace.Call) string {
	switch w.Method {
	case trace.MethodPut:
		if w.Result == nil {
			return l.null
		}
		return quote(configValue(w.Result, c.part.key))
	case trace.MethodGetTuple:
		if w.NotFound {
			return l.null
		}
		return l.literal(c.part, w.Tuple)
	case trace.MethodDeltaHistory:
		return l.historyLiteral(c.part, w.Histories)
	}
	if c.index >= 0 {
		return l.literal(c.part, w.Tuples[c.index])
	}
	parts := make([]string, len(w.Tuples))
	for i, t := range w.Tuples {
		parts[i] = l.literal(c.part, t)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// calls says "1 call" or "n calls".
func calls(n int) string {
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}
