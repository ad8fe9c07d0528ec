package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Isolation (PUT-12) at every depth. The fixtures nest lists, maps, byte
// strings and delta snapshots several levels deep; the specs modify in
// place every container of what they passed to Put and PutWrites, and of
// what GetTuple, List and DeltaHistory returned, at every depth, then read
// again and compare with a fresh copy of the fixture. A saver that copies
// only the top level of a value, or keeps the caller's nested lists and
// maps, reads back changed.

// isolationSpecs covers PUT-12.
func isolationSpecs(e *env) {
	check("[PUT-12] is not affected by mutating the maps passed to Put or those of a returned tuple", lPut, func(ctx context.Context) {
		vals := nestedValues()
		vers := spec.Versions{"lml": "1", "ml": "1", "lm": "1", "bytes": "1", "s": "1"}
		seen := map[string]spec.Versions{"n": {"lml": "1"}}
		meta := nestedMetadata()
		cp := cpOf("c1", vals, vers)
		cp.VersionsSeen = seen
		cp.UpdatedChannels = []string{"lml"}
		e.putCP(ctx, spec.Config{ThreadID: "t"}, cp, meta, spec.Versions{"lml": "1", "ml": "1", "lm": "1", "bytes": "1", "s": "1"})
		ws := nestedWrites()
		e.writes(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, "task", ws...)
		// A saver that does not store UpdatedChannels (PUT-14) has none to alias.
		keepsUpdated := e.get(ctx, "t", "", "c1").Checkpoint.UpdatedChannels != nil
		unchanged := func(what string) {
			g.GinkgoHelper()
			for _, t := range []*spec.Tuple{e.get(ctx, "t", "", "c1"), e.listFirst(ctx, spec.ListOptions{ThreadID: "t"})} {
				expectSame(t.Checkpoint.ChannelValues, nestedValues(), what+": values")
				expectSame(map[string]any(t.Metadata), map[string]any(nestedMetadata()), what+": metadata")
				Expect(t.Checkpoint.ChannelVersions).To(Equal(spec.Versions{"lml": "1", "ml": "1", "lm": "1", "bytes": "1", "s": "1"}), what+": versions")
				Expect(t.Checkpoint.VersionsSeen).To(Equal(map[string]spec.Versions{"n": {"lml": "1"}}), what+": versions seen")
				if keepsUpdated {
					Expect(t.Checkpoint.UpdatedChannels).To(Equal([]string{"lml"}), what+": updated channels")
				}
				expectNestedWrites(t.PendingWrites, what)
			}
		}
		unchanged("before any mutation")

		scramble(vals)
		scramble(map[string]any(meta))
		vers["lml"] = "9"
		seen["n"]["lml"] = "9"
		cp.UpdatedChannels[0] = "changed"
		for i := range ws {
			scramble(ws[i].Value)
			ws[i].Channel = "changed"
		}
		unchanged("after mutating, at every depth, what was passed to Put and PutWrites")

		scrambleTuple(e.get(ctx, "t", "", "c1"))
		unchanged("after mutating, at every depth, a tuple GetTuple returned")
		scrambleTuple(e.listFirst(ctx, spec.ListOptions{ThreadID: "t"}))
		unchanged("after mutating, at every depth, a tuple List returned")
	})

	// Not labelled DeltaChannels: a harness that skips delta channels (its
	// LangGraph predates them) runs it with plain values in place of the
	// snapshots.
	checkNeeds("[PUT-12] is not affected by mutating, at any depth, a delta channel's seed and writes passed to Put and PutWrites or returned by GetTuple, List and DeltaHistory",
		[]string{"VALUE-12"}, lPut, func(ctx context.Context) {
			snaps := e.storesSnapshots()
			vals, ws := deltaIsolationValues(snaps)
			vers := spec.Versions{"m": "1", "p": "1"}
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cpOf("c1", vals, vers), nil, spec.Versions{"m": "1", "p": "1"})
			e.writes(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, "task", ws...)
			e.putCP(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, cpOf("c2", nil, vers), nil, spec.Versions{})
			r := e.deltaReaderIf(ctx)
			var before map[string]spec.DeltaHistory
			if r != nil {
				before = cloneHistories(e.history(ctx, r, "t", "", "c2", "m", "p"))
			}
			unchanged := func(what string) {
				g.GinkgoHelper()
				wantVals, wantWrites := deltaIsolationValues(snaps)
				for _, t := range []*spec.Tuple{e.get(ctx, "t", "", "c1"), tupleWithID(e.list(ctx, spec.ListOptions{ThreadID: "t"}), "c1")} {
					expectSame(t.Checkpoint.ChannelValues, wantVals, what+": values")
					Expect(t.PendingWrites).To(HaveLen(len(wantWrites)), what+": writes")
					expectSame(writeValues(t.PendingWrites), writeValues(pendingOf("task", wantWrites)), what+": write values by channel")
				}
				if r != nil {
					got := e.history(ctx, r, "t", "", "c2", "m", "p")
					if d := diffOf(cloneHistories(got), before); d != "" {
						g.Fail(fmt.Sprintf("%s: delta histories (-before +after):\n%s", what, d))
					}
				}
			}
			unchanged("before any mutation")

			scramble(vals)
			for i := range ws {
				scramble(ws[i].Value)
			}
			unchanged("after mutating, at every depth, the snapshots passed to Put and PutWrites")

			scrambleTuple(e.get(ctx, "t", "", "c1"))
			unchanged("after mutating, at every depth, a tuple GetTuple returned")
			scrambleTuple(tupleWithID(e.list(ctx, spec.ListOptions{ThreadID: "t"}), "c1"))
			unchanged("after mutating, at every depth, a tuple List returned")
			if r != nil {
				for _, h := range e.history(ctx, r, "t", "", "c2", "m", "p") {
					scramble(h.Seed)
					for i := range h.Writes {
						scramble(h.Writes[i].Value)
						h.Writes[i].TaskID = "changed"
					}
				}
				unchanged("after mutating, at every depth, the histories DeltaHistory returned")
			}
		})
}

// nestedValues returns, built afresh, channel values nesting containers
// several levels deep: a list in a map in a list, a map in a list in a map,
// byte strings deep inside, and a top-level byte string and scalar.
func nestedValues() map[string]any {
	return map[string]any{
		"lml":   []any{map[string]any{"l": []any{int64(1), []any{"x", []byte("ab")}}}, "tail"},
		"ml":    map[string]any{"l": []any{map[string]any{"k": "v"}}, "b": []byte("mb")},
		"lm":    []any{map[string]any{"k": int64(2)}, []any{}},
		"bytes": []byte("xy"),
		"s":     "scalar",
	}
}

// nestedMetadata returns, built afresh, metadata nesting lists and maps
// several levels deep. It holds only strings: byte strings are not
// metadata (VALUE-5), and the type of its numbers is VALUE-6's matter. No
// list sits directly in a list: LangGraph.js's MongoDBSaver refuses such
// metadata, which is no PUT-12 matter.
func nestedMetadata() spec.Metadata {
	return spec.Metadata{
		"m": map[string]any{"k": "v", "l": []any{map[string]any{"x": []any{"y"}}}},
		"l": []any{"x", map[string]any{"y": []any{"z", map[string]any{"w": "deep"}}}},
		"s": "top",
	}
}

// nestedWrites returns, built afresh, one task's writes to channels w1 and
// w2 with values nested several levels deep.
func nestedWrites() []spec.Write {
	return []spec.Write{
		{Channel: "w1", Value: []any{map[string]any{"l": []any{int64(1), []byte("w")}}}},
		{Channel: "w2", Value: map[string]any{"n": map[string]any{"l": []any{"q", []any{}}}}},
	}
}

// expectNestedWrites checks that ws are nestedWrites, stored by task "task".
func expectNestedWrites(ws []spec.PendingWrite, what string) {
	g.GinkgoHelper()
	want := nestedWrites()
	Expect(ws).To(HaveLen(len(want)), what+": writes")
	for _, w := range ws {
		Expect(w.TaskID).To(Equal("task"), what+": write task ID")
	}
	expectSame(writeValues(ws), writeValues(pendingOf("task", want)), what+": write values by channel")
}

// deltaIsolationValues returns, built afresh, the channel values and writes
// of the delta isolation spec: a snapshot wrapping a list that nests maps,
// lists and bytes (channel m), a plain nested list stored before its
// channel became a delta channel (p), and writes to both whose values nest
// a snapshot. Without snaps, every snapshot is its bare value.
func deltaIsolationValues(snaps bool) (map[string]any, []spec.Write) {
	wrap := func(v any) any {
		if snaps {
			return snap(v)
		}
		return v
	}
	vals := map[string]any{
		"m": wrap([]any{map[string]any{"role": "ai", "parts": []any{"a", []byte("b")}}, []any{int64(1)}}),
		"p": []any{map[string]any{"l": []any{"plain"}}},
	}
	ws := []spec.Write{
		{Channel: "m", Value: []any{map[string]any{"k": []any{"w"}}, wrap(map[string]any{"l": []any{int64(2)}})}},
		{Channel: "p", Value: wrap([]any{[]any{"pw", []byte("x")}})},
	}
	return vals, ws
}

// storesSnapshots reports whether the harness runs the specs that store
// delta snapshots: it does not skip them by the DeltaChannels label.
func (e *env) storesSnapshots() bool {
	_, skipped := e.h.Skip[DeltaChannels]
	return !skipped
}

// pendingOf returns ws as the pending writes of task.
func pendingOf(task string, ws []spec.Write) []spec.PendingWrite {
	out := make([]spec.PendingWrite, len(ws))
	for i, w := range ws {
		out[i] = spec.PendingWrite{TaskID: task, Channel: w.Channel, Value: w.Value}
	}
	return out
}

// tupleWithID returns the tuple of ts whose checkpoint ID is id, failing
// the spec when there is none.
func tupleWithID(ts []*spec.Tuple, id string) *spec.Tuple {
	g.GinkgoHelper()
	i := slices.IndexFunc(ts, func(t *spec.Tuple) bool { return t.Config.CheckpointID == id })
	Expect(i).To(BeNumerically(">=", 0), "no checkpoint %q listed", id)
	return ts[i]
}

// deltaReaderIf returns the saver's delta history reader, or nil when it
// has none (the same tests as deltaReader, without skipping the spec).
func (e *env) deltaReaderIf(ctx context.Context) spec.DeltaHistoryReader {
	if slices.Contains(e.h.NotSupported, lDeltaName) {
		return nil
	}
	var r spec.DeltaHistoryReader
	switch s := e.s.(type) {
	case interface{ deltaRaw() deltaRec }:
		r = s.deltaRaw()
	case spec.DeltaHistoryReader:
		r = s
	default:
		return nil
	}
	if _, err := r.DeltaHistory(ctx, spec.Config{ThreadID: deltaProbeThread}, []string{"probe"}); errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return r
}

// scrambleTuple modifies in place, at every depth, everything of t a
// caller could modify: its values, metadata, versions and writes.
func scrambleTuple(t *spec.Tuple) {
	scramble(t.Checkpoint.ChannelValues)
	scramble(map[string]any(t.Metadata))
	for ch := range t.Checkpoint.ChannelVersions {
		t.Checkpoint.ChannelVersions[ch] = "9"
	}
	for _, vs := range t.Checkpoint.VersionsSeen {
		for ch := range vs {
			vs[ch] = "9"
		}
	}
	for i := range t.Checkpoint.UpdatedChannels {
		t.Checkpoint.UpdatedChannels[i] = "changed"
	}
	for i := range t.PendingWrites {
		scramble(t.PendingWrites[i].Value)
		t.PendingWrites[i].TaskID = "changed"
		t.PendingWrites[i].Channel = "changed"
	}
}

// scramble modifies v in place at every depth: every list, map and byte
// string it holds, however deep, is changed where it is (scalars
// overwritten, a key added to each map, bytes inverted), never replaced,
// so that whoever shares any of them sees the change.
func scramble(v any) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if holdsMutable(e) {
				scramble(e)
			} else {
				x[i] = "scrambled"
			}
		}
	case map[string]any:
		if x == nil {
			return // nil and empty are PUT-13's matter
		}
		for k, e := range x {
			if holdsMutable(e) {
				scramble(e)
			} else {
				x[k] = "scrambled"
			}
		}
		x["scrambled"] = true
	case []byte:
		for i := range x {
			x[i] ^= 0xff
		}
	case spec.DeltaSnapshot:
		scramble(x.Value)
	}
}

// holdsMutable reports whether scramble changes v in place.
func holdsMutable(v any) bool {
	switch v.(type) {
	case []any, map[string]any, []byte, spec.DeltaSnapshot:
		return true
	}
	return false
}

// cloneHistories returns a deep copy of hs, each channel's writes sorted
// (their order is DELTA-4's matter).
func cloneHistories(hs map[string]spec.DeltaHistory) map[string]spec.DeltaHistory {
	out := make(map[string]spec.DeltaHistory, len(hs))
	for ch, h := range hs {
		c := spec.DeltaHistory{Seed: cloneValue(h.Seed), HasSeed: h.HasSeed, Writes: make([]spec.PendingWrite, len(h.Writes))}
		for i, w := range h.Writes {
			w.Value = cloneValue(w.Value)
			c.Writes[i] = w
		}
		c.Writes = sortWrites(c.Writes)
		out[ch] = c
	}
	return out
}

// cloneValue returns a deep copy of v: spec.Normalize never shares
// mutable memory with its input, and leaves a value of the model as it is.
// A value outside the model (another rule's matter) is returned as it is.
func cloneValue(v any) any {
	c, err := spec.Normalize(v)
	if err != nil {
		return v
	}
	return c
}
