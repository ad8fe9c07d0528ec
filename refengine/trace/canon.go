package trace

import (
	"fmt"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Canonical rewrites calls into a form in which traces of the same scenario
// recorded by different engines (refengine, LangGraph.js through
// bridge/js/recorder.js) compare equal when their saver traffic is the
// same:
//
//   - checkpoint IDs become "cp1", "cp2", ... in the order of the Puts
//     that stored them, then (IDs never put) in first-seen order, so that
//     writes racing their checkpoint (async durability) do not renumber
//     them;
//   - channel versions become "v" and their counter: LangGraph.js's
//     integers as they are, Python-style "<counter>.<fraction>" strings
//     their counter without leading zeros; the fraction is random (it
//     only makes sibling forks' versions unique), so versions keep their
//     order and versions minted for the same step compare equal;
//   - task IDs, which every engine derives differently, become
//     "task(ns|step|path)": the namespace, the step of the checkpoint the
//     task's writes were put against, and the task path (which names the
//     task's kind, node and push index); a task that never wrote is
//     unknown and becomes "id1", "id2", ... in first-seen order, as do
//     other UUIDs; interrupt IDs (32 hex digits, derived differently by
//     each engine) become "int1", "int2", ... in first-seen order;
//   - timestamps are dropped, error messages become "error" (a not-found
//     GetTuple keeps only NotFound).
//
// IDs are also rewritten inside namespaces ("node:<task id>") and metadata.
// The input is not modified.
func Canonical(calls []Call) ([]Call, error) {
	data, err := Marshal(calls)
	if err != nil {
		return nil, err
	}
	c := newCanon(calls)
	out, err := Unmarshal(data) // a deep copy to rewrite in place
	if err != nil {
		return nil, err
	}
	for i := range out {
		c.call(&out[i])
	}
	return out, nil
}

type canon struct {
	cps        map[string]string
	tasks      map[string]string
	others     map[string]string
	interrupts map[string]string
}

func newCanon(calls []Call) *canon {
	c := &canon{cps: map[string]string{}, tasks: map[string]string{}, others: map[string]string{}, interrupts: map[string]string{}}
	steps := map[string]any{}
	addCP := func(id string) {
		if _, ok := c.cps[id]; id != "" && !ok {
			c.cps[id] = fmt.Sprintf("cp%d", len(c.cps)+1)
		}
	}
	addCheckpoint := func(cp *spec.Checkpoint, md spec.Metadata) {
		addCP(cp.ID)
		steps[cp.ID] = md["step"]
	}
	addTuple := func(t *spec.Tuple) {
		addCP(t.Config.CheckpointID)
		if t.Parent != nil {
			addCP(t.Parent.CheckpointID)
		}
		addCheckpoint(&t.Checkpoint, t.Metadata)
	}
	for i := range calls {
		if calls[i].Method == MethodPut && calls[i].Checkpoint != nil {
			addCP(calls[i].Checkpoint.ID)
		}
	}
	for i := range calls {
		call := &calls[i]
		addCP(call.Config.CheckpointID)
		if call.List != nil {
			addCP(call.List.CheckpointID)
			addCP(call.List.Before)
		}
		if call.Checkpoint != nil {
			addCheckpoint(call.Checkpoint, call.Metadata)
		}
		if call.Result != nil {
			addCP(call.Result.CheckpointID)
		}
		if call.Tuple != nil {
			addTuple(call.Tuple)
		}
		for _, t := range call.Tuples {
			addTuple(t)
		}
	}
	raw := map[string]rawTask{}
	for i := range calls {
		call := &calls[i]
		if call.Method != MethodPutWrites || call.TaskID == spec.NullTaskID {
			continue
		}
		if _, ok := raw[call.TaskID]; ok {
			continue
		}
		path := call.TaskPath
		if path == "" { // LangGraph.js's input writes and push writes carry no path
			chans := make([]string, len(call.Writes))
			for j, w := range call.Writes {
				chans[j] = w.Channel
			}
			path = "writes:" + strings.Join(chans, ",")
		}
		raw[call.TaskID] = rawTask{call.Config.Namespace, steps[call.Config.CheckpointID], path}
	}
	for id := range raw {
		c.task(id, raw)
	}
	return c
}

// rawTask is what names a task: its namespace (with parent task IDs not
// yet rewritten), step and path.
type rawTask struct {
	ns   string
	step any
	path string
}

// task names the task id, naming the tasks of its namespace first, so that
// a subgraph's tasks are named after their parent's name whatever order
// the calls came in.
func (c *canon) task(id string, raw map[string]rawTask) string {
	if t, ok := c.tasks[id]; ok {
		return t
	}
	r := raw[id]
	ns := uuidPattern.ReplaceAllStringFunc(r.ns, func(m string) string {
		if _, ok := raw[m]; ok {
			return c.task(m, raw)
		}
		return m
	})
	t := fmt.Sprintf("task(%s|%v|%s)", ns, r.step, r.path)
	c.tasks[id] = t
	return t
}

// id rewrites one ID-bearing string: a whole checkpoint or task ID, or
// UUIDs inside it (namespaces).
func (c *canon) id(s string) string {
	if t, ok := c.cps[s]; ok {
		return t
	}
	s = hex32Pattern.ReplaceAllStringFunc(s, func(m string) string {
		if t, ok := c.interrupts[m]; ok {
			return t
		}
		t := fmt.Sprintf("int%d", len(c.interrupts)+1)
		c.interrupts[m] = t
		return t
	})
	return uuidPattern.ReplaceAllStringFunc(s, func(m string) string {
		if m == spec.NullTaskID {
			return m
		}
		if t, ok := c.cps[m]; ok {
			return t
		}
		if t, ok := c.tasks[m]; ok {
			return t
		}
		if t, ok := c.others[m]; ok {
			return t
		}
		t := fmt.Sprintf("id%d", len(c.others)+1)
		c.others[m] = t
		return t
	})
}

func (c *canon) config(cfg *spec.Config) {
	if cfg == nil {
		return
	}
	cfg.Namespace = c.id(cfg.Namespace)
	cfg.CheckpointID = c.id(cfg.CheckpointID)
}

func (c *canon) vers(m spec.Versions) {
	for k, v := range m {
		m[k] = spec.Version("v" + versionCounter(v))
	}
}

func (c *canon) checkpoint(cp *spec.Checkpoint) {
	cp.ID = c.id(cp.ID)
	cp.TS = ""
	c.vers(cp.ChannelVersions)
	for _, m := range cp.VersionsSeen {
		c.vers(m)
	}
	cp.ChannelValues = c.value(cp.ChannelValues).(map[string]any)
}

// value rewrites IDs inside a plain value (metadata, channel values).
func (c *canon) value(v any) any {
	switch x := v.(type) {
	case string:
		return c.id(x)
	case []any:
		for i, e := range x {
			x[i] = c.value(e)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[c.id(k)] = c.value(e)
		}
		return out
	case spec.DeltaSnapshot:
		return spec.DeltaSnapshot{Value: c.value(x.Value)}
	}
	return v
}

func (c *canon) tuple(t *spec.Tuple) {
	c.config(&t.Config)
	c.config(t.Parent)
	c.checkpoint(&t.Checkpoint)
	if t.Metadata != nil {
		t.Metadata = c.value(map[string]any(t.Metadata)).(map[string]any)
	}
	for i := range t.PendingWrites {
		w := &t.PendingWrites[i]
		w.TaskID = c.id(w.TaskID)
		w.Value = c.value(w.Value)
	}
}

func (c *canon) call(call *Call) {
	c.config(&call.Config)
	if call.Checkpoint != nil {
		c.checkpoint(call.Checkpoint)
	}
	if call.Metadata != nil {
		call.Metadata = c.value(map[string]any(call.Metadata)).(map[string]any)
	}
	c.vers(call.NewVersions)
	for i := range call.Writes {
		call.Writes[i].Value = c.value(call.Writes[i].Value)
	}
	call.TaskID = c.id(call.TaskID)
	if call.List != nil {
		call.List.CheckpointID = c.id(call.List.CheckpointID)
		call.List.Before = c.id(call.List.Before)
		call.List.Namespace = c.id(call.List.Namespace)
	}
	c.config(call.Result)
	if call.Tuple != nil {
		c.tuple(call.Tuple)
	}
	for _, t := range call.Tuples {
		c.tuple(t)
	}
	c.histories(call.Histories)
	if call.Method == MethodNextVersion {
		call.Current = spec.Version("v" + versionCounter(call.Current))
		call.Version = spec.Version("v" + versionCounter(call.Version))
	}
	if call.NotFound {
		call.Err = ""
	} else if call.Err != "" {
		call.Err = "error"
	}
}

// versionCounter returns a version's leading decimal counter without
// leading zeros ("0" when it has none).
func versionCounter(v spec.Version) string {
	s, _, _ := strings.Cut(string(v), ".")
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0"
	}
	return s
}
