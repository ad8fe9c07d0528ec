package enginetest_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// How TestAgainstLangGraphJS undoes the documented differences between
// LangGraph.js and Python (refengine's package docs, "Differences from
// LangGraph.js") before it compares the two engines' traces.

// lgjsDifferences rewrites canonical traces of LangGraph.js (js) and
// refengine (ref) to undo the deliberate differences listed in refengine's
// package docs ("Differences from LangGraph.js"):
//
//   - LangGraph.js stores every available channel, versioned or not (a
//     reducer key's default, an empty __pregel_tasks); Python, and
//     refengine, store only channels with a version (pregel-semantics §1.2):
//     unversioned channels are dropped from js;
//
//   - LangGraph.js does not record updated_channels (Python does, §1.1,
//     §2.7): it is cleared in ref;
//
//   - a resumed subgraph: LangGraph.js copies the parent task's null
//     resume value into every nested loop of the task as a null-task
//     __resume__ write in the child's namespace; Python writes nothing
//     there, the child's interrupt takes the value from the parent's
//     scratchpad (§2.9 item 3, §5.4): in js, null-task __resume__ writes
//     in a subgraph namespace are dropped;
//
//   - a resume map: LangGraph.js saves a __resume__ write per resumed
//     interrupt under the interrupt's ID, Python nothing (§2.3 item 2):
//     dropped from js before canonicalization (dropResumeMapWrites);
//
//   - a conditional edge's branch:to:X write: LangGraph.js writes the
//     source node's name, Python None (§4.8): in js, branch:to:X values
//     other than "__start__" (a Command's goto) become nil;
//
//   - a failed task's __error__ write: LangGraph.js stores {"message",
//     "name"}, Python the serde's form of the exception (§2.10), refengine
//     its message: in js, the message;
//
//   - a sibling of a failed task that finishes although cancelled:
//     LangGraph.js saves its writes with an __error__ ("AbortError"),
//     Python saves its writes as they are (§2.5, §2.10): in js, an
//     AbortError write is dropped from a batch that holds other writes;
//
//   - refengine applies a node's update keys in sorted order, Python and
//     LangGraph.js in the order the node returned them (see the package
//     docs): in both, the writes of one task are sorted by channel;
//
//   - a List with a limit that yielded that many tuples: refengine's
//     consumer stops, LangGraph.js's reads the end; Stopped is cleared.
//
// It returns the rewritten traces.
func lgjsDifferences(js, ref []trace.Call) ([]trace.Call, []trace.Call) {
	eachCheckpoint(js, func(cp *spec.Checkpoint) {
		for k := range cp.ChannelValues {
			if _, ok := cp.ChannelVersions[k]; !ok {
				delete(cp.ChannelValues, k)
			}
		}
	})
	eachCheckpoint(ref, func(cp *spec.Checkpoint) { cp.UpdatedChannels = nil })
	jsWrites(js)
	dropAbortErrors(js)
	js = dropNestedNullResumes(js)
	sortWrites(js)
	sortWrites(ref)
	return js, ref
}

// eachCheckpoint calls f on every checkpoint of a trace.
func eachCheckpoint(calls []trace.Call, f func(*spec.Checkpoint)) {
	for i := range calls {
		c := &calls[i]
		if c.Checkpoint != nil {
			f(c.Checkpoint)
		}
		if c.Tuple != nil {
			f(&c.Tuple.Checkpoint)
		}
		for _, t := range c.Tuples {
			f(&t.Checkpoint)
		}
	}
}

// sortCalls orders calls by their JSON form.
func sortCalls(t *testing.T, calls []trace.Call) {
	t.Helper()
	keys := map[*trace.Call]string{}
	for i := range calls {
		data, err := trace.Marshal(calls[i : i+1])
		if err != nil {
			t.Fatal(err)
		}
		keys[&calls[i]] = string(data)
	}
	sorted := slices.Clone(calls)
	idx := make([]int, len(calls))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[&calls[a]], keys[&calls[b]]) })
	for i, j := range idx {
		calls[i] = sorted[j]
	}
}

// sortWrites sorts each PutWrites' writes by channel, and each tuple's
// pending writes by task and channel (PutWrites calls of concurrent tasks
// come in completion order, pregel-semantics §2.5); and clears Stopped of
// a List that yielded its limit.
func sortWrites(calls []trace.Call) {
	byChannel := func(a, b spec.Write) int { return strings.Compare(a.Channel, b.Channel) }
	pending := func(t *spec.Tuple) {
		slices.SortStableFunc(t.PendingWrites, func(a, b spec.PendingWrite) int {
			if c := strings.Compare(a.TaskID, b.TaskID); c != 0 {
				return c
			}
			return strings.Compare(a.Channel, b.Channel)
		})
	}
	for i := range calls {
		c := &calls[i]
		slices.SortStableFunc(c.Writes, byChannel)
		if c.Tuple != nil {
			pending(c.Tuple)
		}
		for _, t := range c.Tuples {
			pending(t)
		}
		if c.List != nil && c.List.Limit > 0 && len(c.Tuples) == c.List.Limit {
			c.Stopped = false
		}
	}
}

// jsWrites rewrites LangGraph.js's branch values and error writes (see
// lgjsDifferences).
func jsWrites(calls []trace.Call) {
	fix := func(channel string, v any) any {
		switch {
		case strings.HasPrefix(channel, "branch:to:") && v != "__start__":
			return nil
		case channel == spec.ErrorChannel:
			if m, ok := v.(map[string]any); ok {
				return m["message"]
			}
		}
		return v
	}
	rewriteWriteValues(calls, fix)
	eachCheckpoint(calls, func(cp *spec.Checkpoint) {
		for k, v := range cp.ChannelValues {
			cp.ChannelValues[k] = fix(k, v)
		}
	})
}

// rewriteWriteValues replaces the value of every write of calls, put or
// read back as a pending write, by fix(its channel, its value).
func rewriteWriteValues(calls []trace.Call, fix func(channel string, v any) any) {
	tuple := func(t *spec.Tuple) {
		for i, w := range t.PendingWrites {
			t.PendingWrites[i].Value = fix(w.Channel, w.Value)
		}
	}
	for i := range calls {
		c := &calls[i]
		for j, w := range c.Writes {
			c.Writes[j].Value = fix(w.Channel, w.Value)
		}
		if c.Tuple != nil {
			tuple(c.Tuple)
		}
		for _, t := range c.Tuples {
			tuple(t)
		}
	}
}

// dropAbortErrors removes LangGraph.js's AbortError write of a task that
// also saved regular writes, from PutWrites calls and from the pending
// writes read back: a cancelled sibling that finished (see
// lgjsDifferences). Run after jsWrites, it sees the error's message.
func dropAbortErrors(calls []trace.Call) {
	aborted := func(w spec.Write) bool {
		return w.Channel == spec.ErrorChannel && w.Value == "This operation was aborted"
	}
	tuple := func(t *spec.Tuple) {
		regular := map[string]bool{}
		for _, w := range t.PendingWrites {
			if !spec.IsSpecialChannel(w.Channel) {
				regular[w.TaskID] = true
			}
		}
		t.PendingWrites = slices.DeleteFunc(t.PendingWrites, func(w spec.PendingWrite) bool {
			return regular[w.TaskID] && aborted(spec.Write{Channel: w.Channel, Value: w.Value})
		})
	}
	for i := range calls {
		c := &calls[i]
		if c.Method == trace.MethodPutWrites && len(c.Writes) > 1 {
			c.Writes = slices.DeleteFunc(c.Writes, aborted)
		}
		if c.Tuple != nil {
			tuple(c.Tuple)
		}
		for _, t := range c.Tuples {
			tuple(t)
		}
	}
}

// dropNestedNullResumes removes LangGraph.js's null-task __resume__ writes
// in subgraph namespaces, from PutWrites calls and from pending writes read
// back (see lgjsDifferences), and returns the calls kept.
func dropNestedNullResumes(calls []trace.Call) []trace.Call {
	var keep []trace.Call
	nested := func(cfg spec.Config) bool { return cfg.Namespace != "" }
	for _, c := range calls {
		if c.Method == trace.MethodPutWrites && c.TaskID == spec.NullTaskID && nested(c.Config) {
			c.Writes = slices.DeleteFunc(c.Writes, func(w spec.Write) bool { return w.Channel == spec.ResumeChannel })
			if len(c.Writes) == 0 {
				continue
			}
		}
		tuple := func(t *spec.Tuple) {
			if nested(t.Config) {
				t.PendingWrites = slices.DeleteFunc(t.PendingWrites, func(w spec.PendingWrite) bool {
					return w.TaskID == spec.NullTaskID && w.Channel == spec.ResumeChannel
				})
			}
		}
		if c.Tuple != nil {
			tuple(c.Tuple)
		}
		for _, t := range c.Tuples {
			tuple(t)
		}
		keep = append(keep, c)
	}
	return keep
}

// dropResumeMapWrites removes the writes LangGraph.js makes for a resume
// map: a __resume__ write filed under each resumed interrupt's ID (32 hex
// digits, not a task ID), from PutWrites calls and from the pending writes
// read back; Python writes nothing for a resume map (pregel-semantics §2.3
// item 2). It runs before trace.Canonical, which would name those IDs, and
// returns the calls kept.
func dropResumeMapWrites(calls []trace.Call) []trace.Call {
	byInterrupt := func(taskID, channel string) bool {
		return channel == spec.ResumeChannel && interruptIDPattern.MatchString(taskID)
	}
	tuple := func(t *spec.Tuple) {
		t.PendingWrites = slices.DeleteFunc(t.PendingWrites, func(w spec.PendingWrite) bool { return byInterrupt(w.TaskID, w.Channel) })
	}
	for i := range calls {
		if c := &calls[i]; c.Tuple != nil {
			tuple(c.Tuple)
		}
		for _, t := range calls[i].Tuples {
			tuple(t)
		}
	}
	return slices.DeleteFunc(calls, func(c trace.Call) bool {
		if c.Method != trace.MethodPutWrites || len(c.Writes) == 0 {
			return false
		}
		for _, w := range c.Writes {
			if !byInterrupt(c.TaskID, w.Channel) {
				return false
			}
		}
		return true
	})
}

// interruptIDPattern matches an interrupt ID.
var interruptIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// byNamespace orders calls by their canonical namespace, keeping the order
// within each namespace, so that the checkpoints of subgraphs whose calls
// interleave (concurrent tasks, §2.5) get the same canonical names in both
// engines: trace.Canonical names checkpoints in the order it first sees
// them, and canonical namespaces name tasks as both engines do.
func byNamespace(t *testing.T, calls []trace.Call) []trace.Call {
	t.Helper()
	canon, err := trace.Canonical(calls)
	if err != nil {
		t.Fatal(err)
	}
	ns := func(i int) string {
		if l := canon[i].List; l != nil {
			return l.Namespace
		}
		return canon[i].Config.Namespace
	}
	idx := make([]int, len(calls))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(ns(a), ns(b)) })
	out := make([]trace.Call, len(calls))
	for i, j := range idx {
		out[i] = calls[j]
	}
	return out
}
