package enginetest

import (
	"cmp"
	"embed"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Golden traces from LangGraph.js.
//
// testdata/langgraphjs/<scenario>.json holds, for every scenario of
// bridge/js/scenarios/scenarios.js, the saver traffic LangGraph.js produced
// on its own MemorySaver (recorded by bridge/js/recorder.js), in the
// canonical form of trace.Canonical (checkpoint IDs "cp1", "cp2", ... in put
// order, versions "v<counter>", task IDs named by namespace, step and task
// path, no timestamps), normalised to checkpointkit's contract by
// [NormalizeLangGraphJS]. TestLangGraphJSGoldenTraces regenerates them
// (go test ./refengine/enginetest -run TestLangGraphJSGoldenTraces -update,
// which needs node and npm ci in bridge/js) and fails when they are stale.
//
// A canonical trace cannot be replayed as it is, so [GoldenTraces] turns
// each into a concrete one ([Concretize]): ordered synthetic checkpoint
// IDs, UUIDs for tasks, versions minted per Put, timestamps derived from
// the checkpoint IDs. Replaying it (trace.Replay) issues LangGraph.js's
// calls against any saver and checks every read against what
// LangGraph.js's saver returned, judged by checkpointkit's contract.
//
//go:embed testdata/langgraphjs/*.json
var lgjsFS embed.FS

// LangGraphJSPrefix starts the name of a golden trace recorded from
// LangGraph.js.
const LangGraphJSPrefix = "langgraphjs/"

// LangGraphJSGoldenTraces returns the embedded LangGraph.js traces,
// concrete, sorted by name, each with its LangGraph.js-only behaviours as
// Notes. GoldenTraces replays LangGraph Python's trace instead wherever a
// scenario has one; these are kept so that the suite knows where the two
// runtimes part.
func LangGraphJSGoldenTraces() ([]GoldenTrace, error) {
	return embeddedTraces(lgjsFS, "testdata/langgraphjs/*.json", LangGraphJSPrefix, func(name string) []string {
		return append(slices.Clone(lgjsCommonNotes), lgjsNotes[name]...)
	})
}

// NormalizeLangGraphJS turns a trace recorded from LangGraph.js into the
// canonical form committed in testdata/langgraphjs: trace.Canonical, then
// what checkpointkit's contract says a saver returns where LangGraph.js's
// MemorySaver does something else (see refengine's package docs,
// "Differences from LangGraph.js", and docs/langgraphjs.md):
//
//   - LangGraph.js puts every available channel, versioned or not (a
//     reducer's default, an empty __pregel_tasks), and its MemorySaver
//     returns them; a saver stores and returns only channels with a
//     version (PUT-4, PUT-6), so unversioned channel values are dropped
//     from every Put and every read;
//   - a List of several namespaces or threads comes back grouped by
//     namespace from LangGraph.js's MemorySaver, in checkpoint ID order
//     from a saver (LIST-ORDER-1, -2, -4): such listings are sorted, and a
//     trace where a limit cut a grouped listing is refused, since the
//     contract's result is then unknown;
//   - pending writes come back in insertion order from LangGraph.js's
//     MemorySaver, ordered by task ID then index from a saver (WRITES-9):
//     that order depends on the concrete task IDs, so [Concretize] applies
//     it; the committed form orders them by canonical task ID (each
//     task's in their order), as concurrent tasks insert in any order;
//   - a read returns a Send packet as LangGraph.js's serde decodes it,
//     {"node", "args"}, where the recorder gave the Put and the writes
//     {"node", "arg"}: reads get the form that was put;
//   - timestamps are dropped by trace.Canonical; [Concretize] derives them
//     from the checkpoint IDs.
//
// Everything else a read returned (values, versions, versions_seen,
// metadata, parents, the set of pending writes, which calls fail with
// not found) is kept: it is what LangGraph.js's saver returned and what
// the contract requires. updated_channels stays unset, as LangGraph.js
// puts it. Values are LangGraph.js's (its interrupt IDs, branch values and
// error objects): a saver stores them as given.
func NormalizeLangGraphJS(calls []trace.Call) ([]trace.Call, error) {
	out, err := trace.Canonical(calls)
	if err != nil {
		return nil, err
	}
	for i := range out {
		c := &out[i]
		if c.Checkpoint != nil {
			dropUnversioned(c.Checkpoint)
		}
		if c.Tuple != nil {
			dropUnversioned(&c.Tuple.Checkpoint)
			sendForm(c.Tuple)
			byTask(c.Tuple)
		}
		for _, t := range c.Tuples {
			dropUnversioned(&t.Checkpoint)
			sendForm(t)
			byTask(t)
		}
		if c.Method == trace.MethodList && c.List != nil && (c.List.AllNamespaces || c.List.ThreadID == "") {
			sorted := slices.IsSortedFunc(c.Tuples, func(a, b *spec.Tuple) int { return listOrder(a, b, cpNumber) })
			if !sorted && c.List.Limit > 0 && len(c.Tuples) >= c.List.Limit {
				return nil, fmt.Errorf("call %d: a limited List of several namespaces returned a grouped order, whose contract result is unknown", i)
			}
			slices.SortStableFunc(c.Tuples, func(a, b *spec.Tuple) int { return listOrder(a, b, cpNumber) })
		}
	}
	return out, nil
}

// sendForm rewrites the Send packets a read returned, which LangGraph.js's
// serde gives back as {"node", "args"}, into the form the recorder gave
// the Put and the writes, {"node", "arg"} (what a saver returns).
func sendForm(t *spec.Tuple) {
	fix := func(v any) any {
		l, ok := v.([]any)
		if !ok {
			return v
		}
		for i, e := range l {
			if m, ok := e.(map[string]any); ok && len(m) == 2 && m["node"] != nil {
				if a, ok := m["args"]; ok {
					l[i] = map[string]any{"node": m["node"], "arg": a}
				}
			}
		}
		return l
	}
	if v, ok := t.Checkpoint.ChannelValues[pregelTasks]; ok {
		t.Checkpoint.ChannelValues[pregelTasks] = fix(v)
	}
	for i, w := range t.PendingWrites {
		if w.Channel == pregelTasks {
			t.PendingWrites[i].Value = fix([]any{w.Value}).([]any)[0]
		}
	}
}

// byTask orders pending writes by their canonical task ID, keeping each
// task's writes in order: LangGraph.js's MemorySaver returns them in
// insertion order, which varies with concurrent tasks, and [Concretize]
// applies the contract's order anyway.
func byTask(t *spec.Tuple) {
	slices.SortStableFunc(t.PendingWrites, func(a, b spec.PendingWrite) int { return strings.Compare(a.TaskID, b.TaskID) })
}

// pregelTasks is the channel of Send packets.
const pregelTasks = "__pregel_tasks"

// dropUnversioned deletes the values of channels without a version.
func dropUnversioned(cp *spec.Checkpoint) {
	for k := range cp.ChannelValues {
		if _, ok := cp.ChannelVersions[k]; !ok {
			delete(cp.ChannelValues, k)
		}
	}
}

// listOrder is the contract's order of a listing: checkpoint ID descending
// (id gives its rank), then thread, then namespace ascending.
func listOrder(a, b *spec.Tuple, id func(string) int) int {
	return cmp.Or(
		cmp.Compare(id(b.Config.CheckpointID), id(a.Config.CheckpointID)),
		cmp.Compare(a.Config.ThreadID, b.Config.ThreadID),
		cmp.Compare(a.Config.Namespace, b.Config.Namespace))
}

// cpNumber is the rank of a canonical checkpoint ID "cp<n>".
func cpNumber(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "cp"))
	if err != nil || !strings.HasPrefix(id, "cp") {
		return -1
	}
	return n
}

// canonToken matches a canonical ID that is not a task: checkpoint "cp<n>",
// other UUIDs "id<n>", interrupt IDs "int<n>".
var canonToken = regexp.MustCompile(`^(cp|id|int)([0-9]+)`)

// Concretize turns a canonical trace (as NormalizeLangGraphJS returns it)
// into one that trace.Replay can issue against a saver:
//
//   - "cp<n>" becomes the checkpoint ID 1f0c0de0-0000-6000-8000-<n, 12
//     digits>, so IDs sort in put order; a checkpoint's timestamp is
//     2025-04-02T15:20:01.<n, 6 digits>+00:00;
//   - each task "task(...)", each other UUID "id<n>" and each interrupt ID
//     "int<n>" gets a UUID (or 32 hex digits) of its own, in first-seen
//     order, also inside namespaces, metadata and values;
//   - "v<n>" becomes "<n, 32 digits>.<k, 16 digits>" where k numbers the
//     Put that minted it (its new_versions), so versions keep their order
//     and the versions that sibling forks mint with the same counter
//     (LangGraph.js's integers collide there) stay distinct, as VERSION-2
//     wants; a checkpoint names the versions of its own lineage;
//   - pending writes are ordered by task ID, then index (WRITES-9), the
//     index being the write's position in its PutWrites call or a special
//     channel's fixed index;
//   - a call that failed with not found gets an error message again.
func Concretize(canon []trace.Call) ([]trace.Call, error) {
	data, err := trace.Marshal(canon)
	if err != nil {
		return nil, err
	}
	calls, err := trace.Unmarshal(data) // a deep copy to rewrite in place
	if err != nil {
		return nil, err
	}
	cz := &concretizer{ids: map[string]string{}, lineage: map[string]map[string]map[string]spec.Version{},
		minted: map[mintKey]spec.Version{}, index: map[writeKey][]int{}}
	for i := range calls {
		if err := cz.call(&calls[i]); err != nil {
			return nil, fmt.Errorf("call %d: %w", i, err)
		}
	}
	return calls, nil
}

type concretizer struct {
	ids        map[string]string // canonical ID -> concrete
	tasks      int
	others     int
	interrupts int
	puts       int
	// lineage maps a canonical checkpoint ID to the concrete versions of
	// its lineage: channel -> counter -> version.
	lineage map[string]map[string]map[string]spec.Version
	// minted maps thread, namespace, channel and counter to the version
	// last minted for them.
	minted map[mintKey]spec.Version
	// index maps a write to its indices, in order of the calls that wrote
	// it.
	index map[writeKey][]int
}

type mintKey struct{ thread, ns, channel, counter string }

type writeKey struct{ ns, cp, task, channel string }

// id returns the concrete form of a whole canonical token.
func (cz *concretizer) id(tok string) string {
	if c, ok := cz.ids[tok]; ok {
		return c
	}
	var c string
	switch {
	case strings.HasPrefix(tok, "task("):
		cz.tasks++
		c = fmt.Sprintf("7a5c0000-0000-4000-8000-%012d", cz.tasks)
	case strings.HasPrefix(tok, "cp"):
		c = fmt.Sprintf("1f0c0de0-0000-6000-8000-%012d", cpNumber(tok))
	case strings.HasPrefix(tok, "int"):
		cz.interrupts++
		c = fmt.Sprintf("1e%030x", cz.interrupts)
	default:
		cz.others++
		c = fmt.Sprintf("1d000000-0000-4000-8000-%012d", cz.others)
	}
	cz.ids[tok] = c
	return c
}

// str rewrites the canonical IDs inside a string: tasks anywhere, other
// tokens where a namespace level or the string starts and ends.
func (cz *concretizer) str(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "task(") {
			depth, j := 0, i
			for ; j < len(s); j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			if j < len(s) {
				b.WriteString(cz.id(s[i : j+1]))
				i = j + 1
				continue
			}
		}
		if i == 0 || s[i-1] == ':' || s[i-1] == '|' {
			if m := canonToken.FindString(s[i:]); m != "" {
				if end := i + len(m); end == len(s) || s[end] == ':' || s[end] == '|' {
					b.WriteString(cz.id(m))
					i = end
					continue
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// value rewrites IDs in a plain value, map keys included.
func (cz *concretizer) value(v any) any {
	switch x := v.(type) {
	case string:
		return cz.str(x)
	case []any:
		for i, e := range x {
			x[i] = cz.value(e)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[cz.str(k)] = cz.value(e)
		}
		return out
	}
	return v
}

func (cz *concretizer) config(c *spec.Config) {
	if c != nil {
		c.Namespace = cz.str(c.Namespace)
		c.CheckpointID = cz.str(c.CheckpointID)
	}
}

// version returns the concrete version of a canonical one in the lineage
// of checkpoint cp; a version its lineage did not mint (a __copy__ fork
// is put under the copied checkpoint's parent with the copied versions) is
// the one last minted with that counter in the thread and namespace, as a
// saver keys values by (thread, namespace, channel, version) (PUT-4, -5).
func (cz *concretizer) version(thread, ns, cp, channel string, v spec.Version) (spec.Version, error) {
	n := strings.TrimPrefix(string(v), "v")
	if _, err := strconv.Atoi(n); err != nil || !strings.HasPrefix(string(v), "v") {
		return "", fmt.Errorf("version %q of %s is not canonical", v, channel)
	}
	if c, ok := cz.lineage[cp][channel][n]; ok {
		return c, nil
	}
	if c, ok := cz.minted[mintKey{thread, ns, channel, n}]; ok {
		return c, nil
	}
	return mint(n, 0), nil
}

func mint(counter string, put int) spec.Version {
	n, _ := strconv.Atoi(counter)
	return spec.Version(fmt.Sprintf("%032d.%016d", n, put))
}

// checkpoint rewrites a checkpoint of a thread and (canonical) namespace.
func (cz *concretizer) checkpoint(thread, ns string, cp *spec.Checkpoint) error {
	canonID := cp.ID
	for ch, v := range cp.ChannelVersions {
		c, err := cz.version(thread, ns, canonID, ch, v)
		if err != nil {
			return err
		}
		cp.ChannelVersions[ch] = c
	}
	for _, seen := range cp.VersionsSeen {
		for ch, v := range seen {
			c, err := cz.version(thread, ns, canonID, ch, v)
			if err != nil {
				return err
			}
			seen[ch] = c
		}
	}
	cp.ID = cz.str(canonID)
	if n := cpNumber(canonID); n >= 0 {
		cp.TS = fmt.Sprintf("2025-04-02T15:20:01.%06d+00:00", n)
	}
	cp.ChannelValues = cz.value(cp.ChannelValues).(map[string]any)
	return nil
}

func (cz *concretizer) tuple(t *spec.Tuple) error {
	canonID := t.Config.CheckpointID
	ns := t.Config.Namespace
	thread := t.Config.ThreadID
	cz.config(&t.Config)
	cz.config(t.Parent)
	if err := cz.checkpoint(thread, ns, &t.Checkpoint); err != nil {
		return err
	}
	if t.Metadata != nil {
		t.Metadata = cz.value(map[string]any(t.Metadata)).(map[string]any)
	}
	type ranked struct {
		w   spec.PendingWrite
		idx int
	}
	seen := map[writeKey]int{}
	rs := make([]ranked, len(t.PendingWrites))
	for i, w := range t.PendingWrites {
		k := writeKey{ns, canonID, w.TaskID, w.Channel}
		idx := 1 << 30 // unknown: after the known ones
		if l := cz.index[k]; seen[k] < len(l) {
			idx = l[seen[k]]
		}
		seen[k]++
		w.TaskID = cz.str(w.TaskID)
		w.Value = cz.value(w.Value)
		rs[i] = ranked{w, idx}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		return cmp.Or(strings.Compare(a.w.TaskID, b.w.TaskID), cmp.Compare(a.idx, b.idx))
	})
	for i, r := range rs {
		t.PendingWrites[i] = r.w
	}
	return nil
}

func (cz *concretizer) call(c *trace.Call) error {
	switch c.Method {
	case trace.MethodDeltaHistory:
		for ch, h := range c.Histories {
			for i := range h.Writes {
				h.Writes[i].TaskID = cz.str(h.Writes[i].TaskID)
				h.Writes[i].Value = cz.value(h.Writes[i].Value)
			}
			if h.HasSeed {
				h.Seed = cz.value(h.Seed)
			}
			c.Histories[ch] = h
		}
	case trace.MethodPut:
		if c.Checkpoint == nil {
			return fmt.Errorf("a Put without a checkpoint")
		}
		cz.puts++
		parent, id := c.Config.CheckpointID, c.Checkpoint.ID
		lin := map[string]map[string]spec.Version{}
		for ch, vs := range cz.lineage[parent] {
			lin[ch] = maps.Clone(vs)
		}
		for _, ch := range slices.Sorted(maps.Keys(c.NewVersions)) {
			n := strings.TrimPrefix(string(c.NewVersions[ch]), "v")
			if lin[ch] == nil {
				lin[ch] = map[string]spec.Version{}
			}
			lin[ch][n] = mint(n, cz.puts)
			cz.minted[mintKey{c.Config.ThreadID, c.Config.Namespace, ch, n}] = lin[ch][n]
		}
		cz.lineage[id] = lin
		for ch, v := range c.NewVersions {
			cv, err := cz.version(c.Config.ThreadID, c.Config.Namespace, id, ch, v)
			if err != nil {
				return err
			}
			c.NewVersions[ch] = cv
		}
		if err := cz.checkpoint(c.Config.ThreadID, c.Config.Namespace, c.Checkpoint); err != nil {
			return err
		}
	case trace.MethodPutWrites:
		for j, w := range c.Writes {
			k := writeKey{c.Config.Namespace, c.Config.CheckpointID, c.TaskID, w.Channel}
			idx := spec.WriteIndex(w.Channel, j)
			if !slices.Contains(cz.index[k], idx) {
				cz.index[k] = append(cz.index[k], idx)
			}
			c.Writes[j].Value = cz.value(w.Value)
		}
		c.TaskID = cz.str(c.TaskID)
	}
	cz.config(&c.Config)
	if c.Metadata != nil {
		c.Metadata = cz.value(map[string]any(c.Metadata)).(map[string]any)
	}
	if c.List != nil {
		c.List.Namespace = cz.str(c.List.Namespace)
		c.List.CheckpointID = cz.str(c.List.CheckpointID)
		c.List.Before = cz.str(c.List.Before)
		if c.List.Filter != nil {
			c.List.Filter = spec.Metadata(cz.value(map[string]any(c.List.Filter)).(map[string]any))
		}
	}
	cz.config(c.Result)
	if c.Tuple != nil {
		if err := cz.tuple(c.Tuple); err != nil {
			return err
		}
	}
	for _, t := range c.Tuples {
		if err := cz.tuple(t); err != nil {
			return err
		}
	}
	if c.NotFound && c.Err == "" {
		c.Err = "checkpoint not found"
	}
	return nil
}
