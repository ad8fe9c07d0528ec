package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkpointkit/checkpointkit/spec"
)

// This file carries delta channels across the bridge (PROTOCOL.md,
// "Values" and the delta_history method): the $delta value tag, which is
// spec.DeltaSnapshot on the wire, and the delta_history method on both
// sides.

// capDeltaHistory is the capability of a server that answers delta_history.
const capDeltaHistory = "delta_history"

// appendDelta appends a snapshot as {"$delta":<value>}. The tag counts as
// one level of nesting, so that a chain of snapshots cannot run past
// maxWireDepth.
func appendDelta(b []byte, d spec.DeltaSnapshot, depth int) ([]byte, error) {
	b = append(b, `{"`+tagDelta+`":`...)
	b, err := appendNested(b, d.Value, depth+1)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// deltaFromTree decodes the payload of a $delta tag: any value.
func deltaFromTree(payload any) (any, error) {
	v, err := fromTree(payload)
	if err != nil {
		return nil, err
	}
	return spec.DeltaSnapshot{Value: v}, nil
}

// DeltaHistory implements spec.DeltaHistoryReader through the delta_history
// method. When the server did not advertise the capability (its saver has
// no such method) it sends nothing and returns an error wrapping
// errors.ErrUnsupported, as it does when the server answers unsupported.
func (r *remote) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	const op = "delta history"
	if !r.p.has(capDeltaHistory) {
		return nil, fmt.Errorf("bridge: %s: the server does not advertise %q: %w", op, capDeltaHistory, errors.ErrUnsupported)
	}
	if err := checkConfig(op, cfg); err != nil {
		return nil, err
	}
	if err := carryable(op, "channel", channels...); err != nil {
		return nil, err
	}
	res, err := r.call(ctx, "delta_history", func(b []byte) ([]byte, error) { return appendDeltaHistoryParams(b, cfg, channels), nil })
	if err != nil {
		return nil, err
	}
	out, err := deltaHistoriesOf(res)
	if err != nil {
		return nil, fmt.Errorf("bridge: %s: %w", op, err)
	}
	return out, nil
}

// appendDeltaHistoryParams appends the params of a delta_history request.
func appendDeltaHistoryParams(b []byte, cfg spec.Config, channels []string) []byte {
	b = appendStrings(append(b, `{"channels":`...), channels, false)
	return append(appendConfig(append(b, `,"config":`...), cfg), '}')
}

// appendDeltaHistories appends the result of delta_history:
// {"histories":{channel:{"seed"?:value,"writes":[[task_id,channel,value],...]}}}.
func appendDeltaHistories(b []byte, hs map[string]spec.DeltaHistory) ([]byte, error) {
	b = append(b, `{"histories":{`...)
	for i, ch := range sortedKeys(hs) {
		if i > 0 {
			b = append(b, ',')
		}
		h := hs[ch]
		b = append(appendString(b, ch), ":{"...)
		if h.HasSeed {
			var err error
			if b, err = appendValue(append(b, `"seed":`...), h.Seed); err != nil {
				return b, err
			}
			b = append(b, ',')
		}
		b = append(b, `"writes":[`...)
		for j, w := range h.Writes {
			if j > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendPendingWrite(b, w); err != nil {
				return b, err
			}
		}
		b = append(b, "]}"...)
	}
	return append(b, "}}"...), nil
}

// appendPendingWrite appends [task_id,channel,value].
func appendPendingWrite(b []byte, w spec.PendingWrite) ([]byte, error) {
	b = append(appendString(append(b, '['), w.TaskID), ',')
	b = append(appendString(b, w.Channel), ',')
	b, err := appendValue(b, w.Value)
	if err != nil {
		return b, err
	}
	return append(b, ']'), nil
}

// deltaHistoriesOf reads the result of delta_history.
func deltaHistoriesOf(res any) (map[string]spec.DeltaHistory, error) {
	m, err := objectOf(res, "delta_history result")
	if err == nil && m == nil {
		err = badRequest("the delta_history result is null")
	}
	if err != nil {
		return nil, err
	}
	hm, err := objectOf(m["histories"], "histories")
	if err != nil {
		return nil, err
	}
	out := make(map[string]spec.DeltaHistory, len(hm))
	for ch, raw := range hm {
		what := fmt.Sprintf("history of %q", ch)
		hobj, err := objectOf(raw, what)
		if err == nil && hobj == nil {
			err = badRequest("the %s is null", what)
		}
		if err != nil {
			return nil, err
		}
		h := spec.DeltaHistory{Writes: []spec.PendingWrite{}}
		if seed, ok := hobj["seed"]; ok {
			if h.Seed, err = fromTree(seed); err != nil {
				return nil, err
			}
			h.HasSeed = true
		}
		ws, ok := hobj["writes"].([]any)
		if !ok && hobj["writes"] != nil {
			return nil, badRequest("the writes of the %s are %s, not an array", what, kindOf(hobj["writes"]))
		}
		for _, w := range ws {
			pw, err := pendingWriteOf(w, what)
			if err != nil {
				return nil, err
			}
			h.Writes = append(h.Writes, pw)
		}
		out[ch] = h
	}
	return out, nil
}

// pendingWriteOf reads [task_id,channel,value].
func pendingWriteOf(v any, what string) (spec.PendingWrite, error) {
	parts, err := partsOf(v, "write [task_id, channel, value] in the "+what, 3)
	if err != nil {
		return spec.PendingWrite{}, err
	}
	return spec.PendingWrite{TaskID: parts[0].(string), Channel: parts[1].(string), Value: parts[2]}, nil
}

// deltaHistory serves delta_history from sv's spec.DeltaHistoryReader.
func deltaHistory(ctx context.Context, sv spec.Saver, p *params) ([]byte, error) {
	r, ok := sv.(spec.DeltaHistoryReader)
	if !ok {
		return nil, unsupported("delta_history", "spec.DeltaHistoryReader")
	}
	cfg, channels := p.config("config"), p.strings("channels")
	if p.err != nil {
		return nil, p.err
	}
	hs, err := r.DeltaHistory(ctx, cfg, channels)
	if err != nil {
		return nil, err
	}
	return appendDeltaHistories(nil, hs)
}
