package refengine

import (
	"fmt"
	"maps"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

type chanKind int

const (
	kindLastValue chanKind = iota
	kindReducer
	kindEphemeral
	kindTopic
	kindBarrier
	kindDelta
)

// Channel describes how a state key stores and combines the values written
// to it. Build one with [LastValue], [Reducer], [Delta], [Ephemeral],
// [Topic] or [AccumulatingTopic].
type Channel struct {
	kind       chanKind
	reduce     func(current, update any) (any, error)
	initial    any
	hasInitial bool
	guard      bool
	accumulate bool
	names      []string
	// deltaReduce and every configure a [Delta] channel.
	deltaReduce func(current any, writes []any) (any, error)
	every       int
}

// LastValue is a key that holds the last value written; two writes in one
// superstep are an error. It is LangGraph's default for state keys.
func LastValue() Channel { return Channel{kind: kindLastValue} }

// Reducer is a key whose writes are folded into its value with fn
// (LangGraph's BinaryOperatorAggregate): fn combines the current value with
// one written value; both are plain values (see spec.Normalize) and so must
// the result be. A non-nil initial value makes the key readable before the
// first write, as a typed Python reducer key is; it is only stored once the
// key has been written. [AppendList] and [AddNumbers] are ready-made fns.
func Reducer(fn func(current, update any) (any, error), initial any) Channel {
	return Channel{kind: kindReducer, reduce: fn, initial: initial, hasInitial: initial != nil}
}

// Ephemeral is a key visible only in the superstep after it was written;
// more than one write per superstep is an error (LangGraph's EphemeralValue
// with its default guard).
func Ephemeral() Channel { return Channel{kind: kindEphemeral, guard: true} }

// Topic is a key collecting the values written in one superstep (lists are
// flattened one level); it is emptied at every superstep (LangGraph's
// Topic).
func Topic() Channel { return Channel{kind: kindTopic} }

// AccumulatingTopic is a [Topic] that keeps its values across supersteps
// (LangGraph's Topic with accumulate=True).
func AccumulatingTopic() Channel { return Channel{kind: kindTopic, accumulate: true} }

// namedBarrier is a channel that becomes available once each of names has
// been written to it, and resets when the node it triggers consumes it
// (the channel behind AddJoin).
func namedBarrier(names ...string) Channel {
	return Channel{kind: kindBarrier, names: slices.Clone(names)}
}

// AppendList is a [Reducer] function concatenating lists: a list update is
// appended element-wise, any other value as one element.
func AppendList(current, update any) (any, error) {
	cur, _ := current.([]any)
	out := slices.Clone(cur)
	if out == nil {
		out = []any{}
	}
	if l, ok := update.([]any); ok {
		return append(out, l...), nil
	}
	return append(out, update), nil
}

// AddNumbers is a [Reducer] function summing numbers; int64 stays int64 unless a
// float64 is involved.
func AddNumbers(current, update any) (any, error) {
	switch a := current.(type) {
	case nil:
		return update, nil
	case int64:
		switch b := update.(type) {
		case int64:
			return a + b, nil
		case float64:
			return float64(a) + b, nil
		}
	case float64:
		switch b := update.(type) {
		case int64:
			return a + float64(b), nil
		case float64:
			return a + b, nil
		}
	}
	return nil, fmt.Errorf("%w: cannot add %T and %T", ErrInvalidUpdate, current, update)
}

// channel is the runtime state of one channel, with LangGraph's semantics
// (update/consume/finish/checkpoint/from_checkpoint).
type channel interface {
	// update applies the values written in one superstep (possibly none,
	// the "new step" notification) and reports whether the channel changed.
	update(key string, vals []any) (bool, error)
	get() (any, bool)
	available() bool
	consume() bool
	// checkpoint returns the value to store; false means nothing is stored.
	checkpoint() (any, bool)
}

// newChannel builds the runtime channel from a stored value (ok=false when
// the checkpoint has none).
func (c Channel) newChannel(stored any, ok bool) channel {
	switch c.kind {
	case kindDelta:
		return c.newDeltaChan(stored, ok)
	case kindReducer:
		ch := &reducerChan{fn: c.reduce}
		if ok {
			ch.value, ch.set = stored, true
		} else if c.hasInitial {
			v, err := spec.Normalize(c.initial)
			if err == nil {
				ch.value, ch.set = v, true
			}
		}
		return ch
	case kindEphemeral:
		return &ephemeralChan{guard: c.guard, value: stored, set: ok}
	case kindTopic:
		ch := &topicChan{accumulate: c.accumulate}
		if ok {
			ch.values, _ = stored.([]any)
			ch.values = slices.Clone(ch.values)
		}
		return ch
	case kindBarrier:
		ch := &barrierChan{names: c.names, seen: map[string]bool{}}
		if ok {
			l, _ := stored.([]any)
			for _, n := range l {
				if s, isStr := n.(string); isStr {
					ch.seen[s] = true
				}
			}
		}
		return ch
	default:
		return &lastValueChan{value: stored, set: ok}
	}
}

type lastValueChan struct {
	value any
	set   bool
}

func (c *lastValueChan) update(key string, vals []any) (bool, error) {
	switch len(vals) {
	case 0:
		return false, nil
	case 1:
		c.value, c.set = vals[0], true
		return true, nil
	}
	return false, fmt.Errorf("%w: at key %q: can receive only one value per step, got %d", ErrInvalidUpdate, key, len(vals))
}
func (c *lastValueChan) get() (any, bool)        { return c.value, c.set }
func (c *lastValueChan) available() bool         { return c.set }
func (c *lastValueChan) consume() bool           { return false }
func (c *lastValueChan) checkpoint() (any, bool) { return c.value, c.set }

// callReducer calls fn, turning a panic into an error wrapping
// ErrReducerPanic, as a raising reducer fails the run in LangGraph.
func callReducer(fn func(current, update any) (any, error), cur, v any) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: %v", ErrReducerPanic, r)
		}
	}()
	return fn(cur, v)
}

type reducerChan struct {
	fn    func(current, update any) (any, error)
	value any
	set   bool
}

func (c *reducerChan) update(key string, vals []any) (bool, error) {
	if len(vals) == 0 {
		return false, nil
	}
	for _, v := range vals {
		if !c.set {
			c.value, c.set = v, true
			continue
		}
		nv, err := callReducer(c.fn, c.value, v)
		if err != nil {
			return false, fmt.Errorf("at key %q: %w", key, err)
		}
		c.value = nv
	}
	return true, nil
}
func (c *reducerChan) get() (any, bool)        { return c.value, c.set }
func (c *reducerChan) available() bool         { return c.set }
func (c *reducerChan) consume() bool           { return false }
func (c *reducerChan) checkpoint() (any, bool) { return c.value, c.set }

type ephemeralChan struct {
	guard bool
	value any
	set   bool
}

func (c *ephemeralChan) update(key string, vals []any) (bool, error) {
	if len(vals) == 0 {
		if c.set {
			c.value, c.set = nil, false
			return true, nil
		}
		return false, nil
	}
	if c.guard && len(vals) > 1 {
		return false, fmt.Errorf("%w: at key %q: can receive only one value per step", ErrInvalidUpdate, key)
	}
	c.value, c.set = vals[len(vals)-1], true
	return true, nil
}
func (c *ephemeralChan) get() (any, bool)        { return c.value, c.set }
func (c *ephemeralChan) available() bool         { return c.set }
func (c *ephemeralChan) consume() bool           { return false }
func (c *ephemeralChan) checkpoint() (any, bool) { return c.value, c.set }

type topicChan struct {
	accumulate bool
	values     []any
}

func (c *topicChan) update(_ string, vals []any) (bool, error) {
	changed := false
	if !c.accumulate {
		changed = len(c.values) > 0
		c.values = nil
	}
	for _, v := range vals {
		if l, ok := v.([]any); ok {
			c.values = append(c.values, l...)
			changed = changed || len(l) > 0
			continue
		}
		c.values = append(c.values, v)
		changed = true
	}
	return changed, nil
}
func (c *topicChan) get() (any, bool) {
	if len(c.values) == 0 {
		return nil, false
	}
	return slices.Clone(c.values), true
}
func (c *topicChan) available() bool { return len(c.values) > 0 }
func (c *topicChan) consume() bool   { return false }

// checkpoint stores the list even when empty, as LangGraph's Topic does.
func (c *topicChan) checkpoint() (any, bool) {
	out := slices.Clone(c.values)
	if out == nil {
		out = []any{}
	}
	return out, true
}

type barrierChan struct {
	names []string
	seen  map[string]bool
}

func (c *barrierChan) update(key string, vals []any) (bool, error) {
	changed := false
	for _, v := range vals {
		s, ok := v.(string)
		if !ok || !slices.Contains(c.names, s) {
			return false, fmt.Errorf("%w: at key %q: %v is not one of %v", ErrInvalidUpdate, key, v, c.names)
		}
		if !c.seen[s] {
			c.seen[s] = true
			changed = true
		}
	}
	return changed, nil
}
func (c *barrierChan) complete() bool {
	for _, n := range c.names {
		if !c.seen[n] {
			return false
		}
	}
	return true
}
func (c *barrierChan) get() (any, bool) {
	if !c.complete() {
		return nil, false
	}
	return nil, true
}
func (c *barrierChan) available() bool { return c.complete() }
func (c *barrierChan) consume() bool {
	if c.complete() {
		c.seen = map[string]bool{}
		return true
	}
	return false
}

// checkpoint stores the (possibly empty) set of names seen, sorted.
func (c *barrierChan) checkpoint() (any, bool) {
	out := []any{}
	for _, n := range slices.Sorted(maps.Keys(c.seen)) {
		out = append(out, n)
	}
	return out, true
}
