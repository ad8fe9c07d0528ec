package refengine

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/checkpointkit/checkpointkit/refengine/internal/ids"
	"github.com/checkpointkit/checkpointkit/spec"
)

// task is one unit of work of a superstep.
type task struct {
	id       string
	node     *node
	path     string   // task_path_str, the apply order and PutWrites taskPath
	triggers []string // channels that triggered it; ids.Push for Sends
	input    State
	ns       string // task checkpoint namespace: node_ns:id
	writes   []spec.Write
	resume   []any // resume values for Interrupt, positional
	done     bool  // writes restored from pending writes; not executed
}

// appliedWrites is what applyWrites needs of a task.
type appliedWrites struct {
	name     string
	path     string
	triggers []string
	writes   []spec.Write
}

// reservedWrite lists the channels apply_writes never applies.
var reservedWrite = map[string]bool{
	noWritesChannel: true, ids.Push: true, spec.ResumeChannel: true, spec.InterruptChannel: true,
	"__return__": true, spec.ErrorChannel: true, "__error_source_node__": true, spec.ScheduledChannel: true,
}

// sendValue is how a Send is stored in the tasks topic (a plain value).
func sendValue(s Send) (any, error) {
	arg, err := spec.Normalize(map[string]any(s.Arg))
	if err != nil {
		return nil, fmt.Errorf("send to %q: %w", s.Node, err)
	}
	return map[string]any{"node": s.Node, "arg": arg}, nil
}

func parseSend(v any) (Send, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return Send{}, false
	}
	n, ok := m["node"].(string)
	if !ok {
		return Send{}, false
	}
	arg, _ := m["arg"].(map[string]any)
	return Send{Node: n, Arg: arg}, true
}

// readState returns the values of the state keys that have one.
func (g *Graph) readState(chans map[string]channel) State {
	st := State{}
	for _, k := range g.keys {
		if v, ok := chans[k].get(); ok {
			st[k] = v
		}
	}
	return st
}

// prepareTasks computes the tasks of the superstep step from checkpoint cp
// (whose ID they are derived from): one PUSH task per Send in the tasks
// topic, then one PULL task per node with a trigger channel newer than what
// the node last saw, in graph order.
func (g *Graph) prepareTasks(cp *spec.Checkpoint, chans map[string]channel, ns string, step int) ([]*task, error) {
	var tasks []*task
	if tc := chans[tasksChannel]; tc.available() {
		v, _ := tc.get()
		for i, raw := range v.([]any) {
			s, ok := parseSend(raw)
			n := g.byName[s.Node]
			if !ok || n == nil || n.start {
				continue // LangGraph ignores Sends to unknown nodes
			}
			id, err := ids.PushTask(cp.ID, ns, step, s.Node, i)
			if err != nil {
				return nil, err
			}
			tasks = append(tasks, &task{id: id, node: n, path: pushPath(i), triggers: []string{ids.Push},
				input: s.Arg, ns: spec.ChildNamespace(ns, n.name, id)})
		}
	}
	for _, n := range g.nodes {
		seen := cp.VersionsSeen[n.name]
		triggered := false
		for _, c := range n.triggers {
			ch := chans[c]
			if ch == nil || !ch.available() {
				continue
			}
			last, ok := seen[c]
			if !ok {
				last = nullVersion
			}
			if v, ok := cp.ChannelVersions[c]; ok && spec.CompareVersions(v, last) > 0 {
				triggered = true
				break
			}
		}
		if !triggered {
			continue
		}
		id, err := ids.PullTask(cp.ID, ns, step, n.name, n.triggers) // triggers sorted at compile time
		if err != nil {
			return nil, err
		}
		var input State
		if n.start {
			v, _ := chans[Start].get()
			input, _ = v.(map[string]any)
		} else {
			input = g.readState(chans)
		}
		tasks = append(tasks, &task{id: id, node: n, path: pullPath(n.name), triggers: n.triggers,
			input: input, ns: spec.ChildNamespace(ns, n.name, id)})
	}
	return tasks, nil
}

// pullPath and pushPath render task paths as LangGraph's task_path_str
// does: "~" then the parts joined by ", ", integers and booleans zero-padded
// to ten digits.
func pullPath(node string) string { return "~" + ids.Pull + ", " + node }

func pushPath(idx int) string {
	return fmt.Sprintf("~%s, %010d, %010d", ids.Push, idx, 0)
}

// nullVersion is what a node "saw" of a channel it never consumed: the
// zero version, below every minted version.
const nullVersion spec.Version = ""

// applyWrites applies the writes of the tasks of one superstep, exactly as
// LangGraph's apply_writes: tasks sorted by path, versions_seen updated, one
// new version for every channel changed, triggers consumed, writes grouped
// per channel, and the "new step" notification of every other available
// channel when some task had triggers. It returns the sorted updated
// channels.
func (g *Graph) applyWrites(cp *spec.Checkpoint, chans map[string]channel, tasks []appliedWrites, next func(spec.Version) spec.Version) ([]string, error) {
	tasks = slices.Clone(tasks)
	slices.SortStableFunc(tasks, func(a, b appliedWrites) int { return cmp.Compare(a.path, b.path) })
	bump := false
	for _, t := range tasks {
		if len(t.triggers) > 0 {
			bump = true
		}
		seen := cp.VersionsSeen[t.name]
		if seen == nil {
			seen = spec.Versions{}
			cp.VersionsSeen[t.name] = seen
		}
		for _, c := range t.triggers {
			if v, ok := cp.ChannelVersions[c]; ok {
				seen[c] = v
			}
		}
	}
	nv := next(spec.MaxVersion(cp.ChannelVersions))
	for _, t := range tasks {
		for _, c := range t.triggers {
			if reservedWrite[c] {
				continue
			}
			if ch := chans[c]; ch != nil && ch.consume() {
				cp.ChannelVersions[c] = nv
			}
		}
	}
	byChan := map[string][]any{}
	var order []string
	for _, t := range tasks {
		for _, w := range t.writes {
			if reservedWrite[w.Channel] || chans[w.Channel] == nil {
				continue
			}
			if _, ok := byChan[w.Channel]; !ok {
				order = append(order, w.Channel)
			}
			byChan[w.Channel] = append(byChan[w.Channel], w.Value)
		}
	}
	updated := map[string]bool{}
	for _, c := range order {
		ch := chans[c]
		changed, err := ch.update(c, byChan[c])
		if err != nil {
			return nil, err
		}
		if changed {
			cp.ChannelVersions[c] = nv
			if ch.available() {
				updated[c] = true
			}
		}
	}
	if bump {
		for _, c := range slices.Sorted(maps.Keys(chans)) {
			ch := chans[c]
			if updated[c] || !ch.available() {
				continue
			}
			if changed, _ := ch.update(c, nil); changed {
				cp.ChannelVersions[c] = nv
				if ch.available() {
					updated[c] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(updated)), nil
}

// newCheckpoint builds the checkpoint to store from the working one: a new
// ID for step, the stored value of every versioned channel, copies of the
// version maps.
func newCheckpoint(cur *spec.Checkpoint, chans map[string]channel, id string, updated []string) (spec.Checkpoint, error) {
	ts, ok := spec.CheckpointIDTime(id)
	if !ok {
		ts = time.Now()
	}
	out := spec.Checkpoint{
		V:               4,
		ID:              id,
		TS:              ts.UTC().Format(time.RFC3339Nano),
		ChannelValues:   map[string]any{},
		ChannelVersions: maps.Clone(cur.ChannelVersions),
		VersionsSeen:    make(map[string]spec.Versions, len(cur.VersionsSeen)),
		UpdatedChannels: updated,
	}
	for n, vs := range cur.VersionsSeen {
		out.VersionsSeen[n] = maps.Clone(vs)
	}
	for c := range cur.ChannelVersions {
		ch := chans[c]
		if ch == nil {
			continue
		}
		if v, ok := ch.checkpoint(); ok {
			nv, err := spec.Normalize(v)
			if err != nil {
				return out, fmt.Errorf("channel %q: %w", c, err)
			}
			out.ChannelValues[c] = nv
		}
	}
	return out, nil
}

// newVersions lists the channels whose version is greater than in prev.
func newVersions(prev, cur spec.Versions) spec.Versions {
	out := spec.Versions{}
	for c, v := range cur {
		if p, ok := prev[c]; !ok || spec.CompareVersions(v, p) > 0 {
			out[c] = v
		}
	}
	return out
}

// loadChannels rebuilds the runtime channels of g from a checkpoint.
func (g *Graph) loadChannels(cp *spec.Checkpoint) map[string]channel {
	chans := make(map[string]channel, len(g.channels))
	for name, c := range g.channels {
		var v any
		ok := false
		if _, versioned := cp.ChannelVersions[name]; versioned {
			v, ok = cp.ChannelValues[name]
		}
		chans[name] = c.newChannel(v, ok)
	}
	return chans
}

// metadataStep reads the integer "step" of stored metadata.
func metadataStep(md spec.Metadata) (int, bool) {
	switch s := md["step"].(type) {
	case int64:
		return int(s), true
	case float64:
		return int(s), true
	case int:
		return s, true
	case string:
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	return 0, false
}

// copyCheckpoint deep-copies the maps of a loaded checkpoint so the engine
// can mutate it freely.
func copyCheckpoint(cp spec.Checkpoint) spec.Checkpoint {
	out := cp
	out.ChannelValues = maps.Clone(cp.ChannelValues)
	out.ChannelVersions = maps.Clone(cp.ChannelVersions)
	if out.ChannelVersions == nil {
		out.ChannelVersions = spec.Versions{}
	}
	out.VersionsSeen = make(map[string]spec.Versions, len(cp.VersionsSeen))
	for n, vs := range cp.VersionsSeen {
		out.VersionsSeen[n] = maps.Clone(vs)
	}
	if out.ChannelValues == nil {
		out.ChannelValues = map[string]any{}
	}
	return out
}
