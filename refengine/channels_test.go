package refengine

import (
	"errors"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

func upd(t *testing.T, ch channel, vals ...any) bool {
	t.Helper()
	changed, err := ch.update("k", vals)
	if err != nil {
		t.Fatal(err)
	}
	return changed
}

func stored(ch channel) any {
	v, ok := ch.checkpoint()
	if !ok {
		return "MISSING"
	}
	return v
}

func TestLastValueChannel(t *testing.T) {
	ch := LastValue().newChannel(nil, false)
	if ch.available() || stored(ch) != "MISSING" {
		t.Fatal("new last-value channel should be empty and not stored")
	}
	if upd(t, ch) {
		t.Error("an empty update changed the channel")
	}
	if !upd(t, ch, "a") || stored(ch) != "a" {
		t.Error("single write not kept")
	}
	if _, err := ch.update("k", []any{"x", "y"}); !errors.Is(err, ErrInvalidUpdate) {
		t.Errorf("two writes: %v", err)
	}
	if ch := LastValue().newChannel(nil, true); !ch.available() || stored(ch) != nil {
		t.Error("a stored null must stay a present null")
	}
}

func TestReducerChannel(t *testing.T) {
	ch := Reducer(AppendList, []any{}).newChannel(nil, false)
	if !ch.available() {
		t.Error("a reducer key with an initial value is readable before any write")
	}
	upd(t, ch, []any{"a"}, "b", []any{"c", "d"})
	if v := stored(ch); !spec.Equal(v, []any{"a", "b", "c", "d"}) {
		t.Errorf("reduced = %v", v)
	}
	sum := Reducer(AddNumbers, nil).newChannel(nil, false)
	if sum.available() {
		t.Error("a reducer without initial value starts empty")
	}
	upd(t, sum, int64(1), 2.5, int64(3))
	if v := stored(sum); v != 6.5 {
		t.Errorf("sum = %v", v)
	}
	if _, err := sum.update("k", []any{"x"}); !errors.Is(err, ErrInvalidUpdate) {
		t.Errorf("adding a string: %v", err)
	}
	if v, _ := AddNumbers(int64(2), int64(3)); v != int64(5) {
		t.Errorf("int64 sum = %#v", v)
	}
	if v, _ := AddNumbers(1.5, int64(1)); v != 2.5 {
		t.Errorf("mixed sum = %#v", v)
	}
}

func TestEphemeralChannel(t *testing.T) {
	ch := Channel{kind: kindEphemeral}.newChannel(nil, false) // unguarded, as branch channels are
	if !upd(t, ch, "a", "b") || stored(ch) != "b" {
		t.Error("unguarded ephemeral keeps the last value")
	}
	if !upd(t, ch) || ch.available() || stored(ch) != "MISSING" {
		t.Error("a new step clears an ephemeral value (and reports the change)")
	}
	if upd(t, ch) {
		t.Error("clearing an empty ephemeral is no change")
	}
	if _, err := Ephemeral().newChannel(nil, false).update("k", []any{1, 2}); !errors.Is(err, ErrInvalidUpdate) {
		t.Errorf("guarded ephemeral with two writes: %v", err)
	}
}

func TestTopicChannel(t *testing.T) {
	ch := Topic().newChannel(nil, false)
	if v := stored(ch); !spec.Equal(v, []any{}) {
		t.Errorf("an empty topic is stored as an empty list, got %v", v)
	}
	upd(t, ch, "a", []any{"b", "c"})
	if v := stored(ch); !spec.Equal(v, []any{"a", "b", "c"}) {
		t.Errorf("topic = %v", v)
	}
	if !upd(t, ch) || ch.available() {
		t.Error("a non-accumulating topic is emptied by a new step")
	}
	acc := AccumulatingTopic().newChannel([]any{"x"}, true)
	upd(t, acc, "y")
	if upd(t, acc) || !spec.Equal(stored(acc), []any{"x", "y"}) {
		t.Errorf("accumulating topic = %v", stored(acc))
	}
}

func TestNamedBarrierChannel(t *testing.T) {
	ch := namedBarrier("a", "b").newChannel(nil, false)
	if ch.consume() {
		t.Error("an incomplete barrier cannot be consumed")
	}
	upd(t, ch, "a")
	if ch.available() || upd(t, ch, "a") {
		t.Error("barrier complete after one of two names, or a repeated name changed it")
	}
	upd(t, ch, "b")
	if !ch.available() || !spec.Equal(stored(ch), []any{"a", "b"}) {
		t.Errorf("complete barrier stored as %v", stored(ch))
	}
	if !ch.consume() || ch.available() || !spec.Equal(stored(ch), []any{}) {
		t.Error("consuming resets the barrier to an empty stored set")
	}
	if _, err := ch.update("k", []any{"c"}); !errors.Is(err, ErrInvalidUpdate) {
		t.Errorf("unknown name: %v", err)
	}
	if back := namedBarrier("a", "b").newChannel([]any{"b"}, true); back.available() || !spec.Equal(stored(back), []any{"b"}) {
		t.Error("barrier not restored from its stored set")
	}
}

func TestTaskPaths(t *testing.T) {
	if got := pullPath("agent"); got != "~__pregel_pull, agent" {
		t.Errorf("pullPath = %q", got)
	}
	if got := pushPath(2); got != "~__pregel_push, 0000000002, 0000000000" {
		t.Errorf("pushPath = %q", got)
	}
}
