package trace

import (
	"fmt"

	"github.com/checkpointkit/checkpointkit/spec"
)

// deltaTag is how a trace's JSON writes a spec.DeltaSnapshot:
// {"$delta": value}, the bridge protocol's tag.
const deltaTag = "$delta"

// toJSON returns v with every spec.DeltaSnapshot written as {"$delta": v}.
func toJSON(v any) any {
	switch x := v.(type) {
	case spec.DeltaSnapshot:
		return map[string]any{deltaTag: toJSON(x.Value)}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toJSON(e)
		}
		return out
	case map[string]any:
		return toJSONMap(x)
	}
	return v
}

func toJSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = toJSON(v)
	}
	return out
}

// toJSONHistories writes delta histories as LangGraph Python returns
// them: per channel {"seed": value (absent when none), "writes":
// [[task_id, channel, value], ...]}.
func toJSONHistories(hs map[string]spec.DeltaHistory) map[string]any {
	out := make(map[string]any, len(hs))
	for ch, h := range hs {
		ws := make([]any, 0, len(h.Writes))
		for _, w := range h.Writes {
			ws = append(ws, []any{w.TaskID, w.Channel, toJSON(w.Value)})
		}
		e := map[string]any{"writes": ws}
		if h.HasSeed {
			e["seed"] = toJSON(h.Seed)
		}
		out[ch] = e
	}
	return out
}

func fromJSONHistories(m map[string]any) (map[string]spec.DeltaHistory, error) {
	out := make(map[string]spec.DeltaHistory, len(m))
	for ch, v := range m {
		e, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("history of %q is not an object", ch)
		}
		h := spec.DeltaHistory{Writes: []spec.PendingWrite{}}
		if s, ok := e["seed"]; ok {
			h.Seed, h.HasSeed = fromJSON(s), true
		}
		ws, _ := e["writes"].([]any)
		for _, w := range ws {
			t, ok := w.([]any)
			if !ok || len(t) != 3 {
				return nil, fmt.Errorf("history of %q: a write is not [task_id, channel, value]", ch)
			}
			id, _ := t[0].(string)
			c, _ := t[1].(string)
			h.Writes = append(h.Writes, spec.PendingWrite{TaskID: id, Channel: c, Value: fromJSON(t[2])})
		}
		out[ch] = h
	}
	return out, nil
}

// histories rewrites IDs inside delta histories.
func (c *canon) histories(hs map[string]spec.DeltaHistory) {
	for ch, h := range hs {
		if h.HasSeed {
			h.Seed = c.value(h.Seed)
		}
		for i := range h.Writes {
			h.Writes[i].TaskID = c.id(h.Writes[i].TaskID)
			h.Writes[i].Value = c.value(h.Writes[i].Value)
		}
		hs[ch] = h
	}
}

// diffHistories describes the first difference between recorded and read
// delta histories, or returns "".
func diffHistories(want, got map[string]spec.DeltaHistory) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d histories, recorded %d", len(got), len(want))
	}
	for ch, w := range want {
		g, ok := got[ch]
		switch {
		case !ok:
			return fmt.Sprintf("no history of %q", ch)
		case w.HasSeed != g.HasSeed || (w.HasSeed && !equalValue(w.Seed, g.Seed)):
			return fmt.Sprintf("history of %q: seed %v (%v), recorded %v (%v)", ch, g.Seed, g.HasSeed, w.Seed, w.HasSeed)
		case len(w.Writes) != len(g.Writes):
			return fmt.Sprintf("history of %q: %d writes, recorded %d", ch, len(g.Writes), len(w.Writes))
		}
		for i := range w.Writes {
			a, b := w.Writes[i], g.Writes[i]
			if a.TaskID != b.TaskID || a.Channel != b.Channel || !equalValue(a.Value, b.Value) {
				return fmt.Sprintf("history of %q: write %d is %+v, recorded %+v", ch, i, b, a)
			}
		}
	}
	return ""
}

// equalValue is spec.Equal, looking inside snapshots.
func equalValue(a, b any) bool {
	sa, okA := a.(spec.DeltaSnapshot)
	sb, okB := b.(spec.DeltaSnapshot)
	if okA || okB {
		return okA && okB && spec.Equal(sa.Value, sb.Value)
	}
	return spec.Equal(a, b)
}
