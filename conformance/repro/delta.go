package repro

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The parts of a delta history read (trace.MethodDeltaHistory) a snippet
// compares; the key of a seed or writes part is the channel.
const (
	// historyChannels: the channels the result has an entry for.
	historyChannels = "history.channels"
	// historySeed: one channel's seed, or its absence.
	historySeed = "history.seed"
	// historyWrites: one channel's writes, in order.
	historyWrites = "history.writes"
)

// noSeed stands for a history without a seed in a snippet's comparison.
const noSeed = "(no seed)"

// historyDiff returns the first part in which got differs from want:
// the channels answered, then per channel (in name order) the seed, type
// included, then the writes in order. When none differs (the saver failed
// instead), it returns the writes of the first channel asked for.
func historyDiff(want, got map[string]spec.DeltaHistory, channels []string) part {
	if !slices.Equal(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))) {
		return part{historyChannels, ""}
	}
	for _, ch := range slices.Sorted(maps.Keys(want)) {
		w, g := want[ch], got[ch]
		if w.HasSeed != g.HasSeed || (w.HasSeed && !spec.Equal(w.Seed, g.Seed)) {
			return part{historySeed, ch}
		}
		if !slices.EqualFunc(w.Writes, g.Writes, func(a, b spec.PendingWrite) bool {
			return a.TaskID == b.TaskID && a.Channel == b.Channel && spec.Equal(a.Value, b.Value)
		}) {
			return part{historyWrites, ch}
		}
	}
	ch := ""
	if len(channels) > 0 {
		ch = channels[0]
	}
	return part{historyWrites, ch}
}

// historyLiteral writes p of the reference's histories hs as the contract
// expects it: the sorted channel names, a seed (or [noSeed]), or the
// writes as (task_id, channel, value) tuples, oldest first.
func (l lang) historyLiteral(p part, hs map[string]spec.DeltaHistory) string {
	switch p.area {
	case historyChannels:
		return l.strings(slices.Sorted(maps.Keys(hs)))
	case historySeed:
		h := hs[p.key]
		if !h.HasSeed {
			return quote(noSeed)
		}
		return l.value(h.Seed)
	}
	ws := hs[p.key].Writes
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = l.tuple(quote(w.TaskID), quote(w.Channel), l.value(w.Value))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pyHistoryCall writes a delta history read with LangGraph Python's
// get_delta_channel_history (aget_ with async).
func pyHistoryCall(c trace.Call, async bool) string {
	a, aw := "", ""
	if async {
		a, aw = "a", "await "
	}
	return fmt.Sprintf("%ssaver.%sget_delta_channel_history(config=%s, channels=%s)", aw, a, python.config(c.Config), python.strings(nonNil(c.Channels)))
}

// pyHistoryPart reads p of h, get_delta_channel_history's answer.
func pyHistoryPart(p part, h string) string {
	switch p.area {
	case historyChannels:
		return fmt.Sprintf("sorted(%s)", h)
	case historySeed:
		return fmt.Sprintf("%s[%q].get(\"seed\", %q)", h, p.key, noSeed)
	}
	return fmt.Sprintf("[tuple(w) for w in %s[%q][\"writes\"]]", h, p.key)
}

// jsHistoryCall writes a delta history read with LangGraph.js's
// getDeltaChannelHistory.
func jsHistoryCall(c trace.Call) string {
	return fmt.Sprintf("saver.getDeltaChannelHistory({ config: %s, channels: %s })", javascript.config(c.Config), javascript.strings(nonNil(c.Channels)))
}

// jsHistoryPart reads p of h, getDeltaChannelHistory's answer.
func jsHistoryPart(p part, h string) string {
	switch p.area {
	case historyChannels:
		return fmt.Sprintf("Object.keys(%s).sort()", h)
	case historySeed:
		return fmt.Sprintf("%s[%q].seed !== undefined ? %s[%q].seed : %q", h, p.key, h, p.key, noSeed)
	}
	return fmt.Sprintf("%s[%q].writes", h, p.key)
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
