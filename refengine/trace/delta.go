package trace

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Tags a trace's JSON writes values with that JSON alone would lose, as
// the bridge protocol does: {"$delta": v} for a spec.DeltaSnapshot,
// {"$bytes": base64} for a byte string, {"$float": "2"} for a float64 that
// JSON would read back as an integer (a whole number) or cannot write
// (NaN, Infinity, -Infinity), and {"$map": m} around a one-key map whose
// key starts with "$", so that it never reads back as a tag.
const (
	deltaTag = "$delta"
	bytesTag = "$bytes"
	floatTag = "$float"
	mapTag   = "$map"
)

// toJSON returns v with the values JSON would lose tagged.
func toJSON(v any) any {
	switch x := v.(type) {
	case spec.DeltaSnapshot:
		return map[string]any{deltaTag: toJSON(x.Value)}
	case []byte:
		return map[string]any{bytesTag: base64.StdEncoding.EncodeToString(x)}
	case float32:
		return toJSON(float64(x))
	case float64:
		switch {
		case math.IsNaN(x):
			return map[string]any{floatTag: "NaN"}
		case math.IsInf(x, 1):
			return map[string]any{floatTag: "Infinity"}
		case math.IsInf(x, -1):
			return map[string]any{floatTag: "-Infinity"}
		case x == math.Trunc(x):
			return map[string]any{floatTag: strconv.FormatFloat(x, 'g', -1, 64)}
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toJSON(e)
		}
		return out
	case map[string]any:
		out := toJSONMap(x)
		if len(x) == 1 {
			for k := range x {
				if strings.HasPrefix(k, "$") {
					return map[string]any{mapTag: out}
				}
			}
		}
		return out
	}
	return v
}

// fromTag decodes a one-key map written by toJSON; ok is false for a map
// that is no tag.
func fromTag(m map[string]any) (v any, ok bool, err error) {
	if len(m) != 1 {
		return nil, false, nil
	}
	for k, inner := range m {
		switch k {
		case deltaTag:
			return spec.DeltaSnapshot{Value: fromJSON(inner)}, true, nil
		case mapTag:
			in, _ := inner.(map[string]any)
			return fromJSONMap(in), true, nil
		case bytesTag:
			s, _ := inner.(string)
			b, err := base64.StdEncoding.DecodeString(s)
			return b, true, err
		case floatTag:
			s, _ := inner.(string)
			switch s {
			case "Infinity":
				return math.Inf(1), true, nil
			case "-Infinity":
				return math.Inf(-1), true, nil
			}
			f, err := strconv.ParseFloat(s, 64)
			return f, true, err
		}
	}
	return nil, false, nil
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
