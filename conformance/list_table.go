package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"

	g "github.com/onsi/ginkgo/v2"

	"github.com/checkpointkit/checkpointkit/spec"
)

// tableFixture is the data every generated List case runs on: two threads
// (one with pattern characters in its ID), two namespaces (one a full
// subgraph namespace), colliding and interleaving IDs, metadata that
// exercises the filter rules, channel values and pending writes.
type tableCP struct {
	thread, ns, parent, id string
	md                     spec.Metadata
	writes                 []spec.Write
}

var tableFixture = func() []tableCP {
	threads := []string{"a", "b|%"}
	nss := []string{"", "s:1|x:2"}
	ids := [][]string{{"01", "03", "05"}, {"02", "03"}, {"03", "04", "06"}, {"05", "06"}}
	var out []tableCP
	n := 0
	for ti, th := range threads {
		for ni, ns := range nss {
			parent := ""
			for _, id := range ids[ti*2+ni] {
				n++
				m := spec.Metadata{"source": []string{"input", "loop"}[n%2], "step": n % 3, "flag": []any{true, 1, false}[n%3]}
				if n%4 == 0 {
					m["n"] = nil
				}
				var ws []spec.Write
				if n%3 == 0 {
					ws = []spec.Write{{Channel: "w", Value: n}, {Channel: spec.InterruptChannel, Value: "i"}}
				}
				out = append(out, tableCP{thread: th, ns: ns, parent: parent, id: id, md: m, writes: ws})
				parent = id
			}
		}
	}
	return out
}()

// load stores the fixture in the saver and the model.
func (e *env) loadTable(ctx context.Context, m *model) {
	g.GinkgoHelper()
	for i, c := range tableFixture {
		cfg := spec.Config{ThreadID: c.thread, Namespace: c.ns, CheckpointID: c.parent}
		ver := spec.Version(fmt.Sprintf("%d", i+1))
		cp := cpOf(c.id, map[string]any{"v": int64(i)}, spec.Versions{"v": ver})
		nv := spec.Versions{"v": ver}
		e.putCP(ctx, cfg, cp, c.md, nv)
		m.put(cfg, cp, c.md, nv)
		if len(c.writes) > 0 {
			wcfg := spec.Config{ThreadID: c.thread, Namespace: c.ns, CheckpointID: c.id}
			e.writes(ctx, wcfg, "task", c.writes...)
			m.putWrites(wcfg, c.writes, "task")
		}
	}
}

// loadTableModel loads the table fixture into a model only.
func loadTableModel(m *model) {
	for i, c := range tableFixture {
		cfg := spec.Config{ThreadID: c.thread, Namespace: c.ns, CheckpointID: c.parent}
		ver := spec.Version(fmt.Sprintf("%d", i+1))
		m.put(cfg, cpOf(c.id, map[string]any{"v": int64(i)}, spec.Versions{"v": ver}), c.md, spec.Versions{"v": ver})
		if len(c.writes) > 0 {
			m.putWrites(spec.Config{ThreadID: c.thread, Namespace: c.ns, CheckpointID: c.id}, c.writes, "task")
		}
	}
}

// compareListed compares a saver's List result with the model's the way
// the broad specs do (see loose), leaving the order of equal IDs to
// LIST-ORDER-2: runs of equal IDs are compared sorted, and when the limit
// cuts a run, any of its checkpoints may fill the remaining places. full
// is the model's result without the limit.
func compareListed(got, full []*spec.Tuple, limit int) string {
	got, full = loose(sortTies(got)), loose(full)
	d := compareInOrder(got, full, limit)
	if d != "" && groupedMatches(got, full, limit) {
		return "" // grouped by thread and namespace: LIST-ORDER-4's matter
	}
	return d
}

// groupedMatches reports whether got is what a saver that lists each
// thread and namespace in turn would return: the right number of results,
// each group's results a prefix of that group's in full, tuples equal.
func groupedMatches(got, full []*spec.Tuple, limit int) bool {
	n := len(full)
	if limit > 0 {
		n = min(n, limit)
	}
	if len(got) != n {
		return false
	}
	type group struct{ thread, ns string }
	want := map[group][]*spec.Tuple{}
	for _, t := range full {
		g := group{t.Config.ThreadID, t.Config.Namespace}
		want[g] = append(want[g], t)
	}
	seen := map[group]int{}
	for _, t := range got {
		g := group{t.Config.ThreadID, t.Config.Namespace}
		i := seen[g]
		if i >= len(want[g]) || diffTuple(t, want[g][i]) != "" {
			return false
		}
		seen[g]++
	}
	return true
}

// compareInOrder compares got with full, in order, the limit applied.
func compareInOrder(got, full []*spec.Tuple, limit int) string {
	if limit <= 0 || len(full) <= limit || full[limit-1].Config.CheckpointID != full[limit].Config.CheckpointID {
		if limit > 0 && len(full) > limit {
			full = full[:limit]
		}
		return compareLists(got, full)
	}
	// The limit cuts the run of equal IDs [start, end).
	id := full[limit].Config.CheckpointID
	start, end := limit-1, limit
	for start > 0 && full[start-1].Config.CheckpointID == id {
		start--
	}
	for end < len(full) && full[end].Config.CheckpointID == id {
		end++
	}
	if len(got) != limit {
		return fmt.Sprintf("got %d results, want %d", len(got), limit)
	}
	if d := compareLists(got[:start], full[:start]); d != "" {
		return d
	}
	run := map[string]*spec.Tuple{}
	for _, t := range full[start:end] {
		run[keyString(t.Config)] = t
	}
	for i, t := range got[start:] {
		want := run[keyString(t.Config)]
		if want == nil {
			return fmt.Sprintf("result %d: got %s, want one of the checkpoints with ID %q: %v", start+i, keyString(t.Config), id, keysOf(full[start:end]))
		}
		if d := diffTuple(t, want); d != "" {
			return fmt.Sprintf("result %d: %s", start+i, d)
		}
	}
	return ""
}

// loose returns copies of ts for the broad specs' comparisons: numbers
// become float64 (a negative zero becomes zero) and pending writes are
// sorted. Number types, the sign of zero and the order of pending writes
// are strict rules (VALUE-8, VALUE-2, WRITES-9) that focused specs check;
// the broad specs look for the faults those specs miss, so they must not
// stop at a difference a LangGraph saver has on purpose.
func loose(ts []*spec.Tuple) []*spec.Tuple {
	out := make([]*spec.Tuple, len(ts))
	for i, t := range ts {
		c := *t
		c.Checkpoint.ChannelValues, _ = looseValue(t.Checkpoint.ChannelValues).(map[string]any)
		c.Metadata = spec.Metadata{}
		for k, v := range t.Metadata {
			c.Metadata[k] = looseValue(v)
		}
		c.PendingWrites = make([]spec.PendingWrite, len(t.PendingWrites))
		for j, w := range t.PendingWrites {
			w.Value = looseValue(w.Value)
			c.PendingWrites[j] = w
		}
		c.PendingWrites = sortWrites(c.PendingWrites)
		out[i] = &c
	}
	return out
}

// looseValue returns v with every number as a float64, zero unsigned.
func looseValue(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		if x == 0 {
			return 0.0
		}
		return x
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = looseValue(e)
		}
		return out
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = looseValue(e)
		}
		return out
	}
	return v
}

// compareLists describes the differences between a saver's List result
// and the model's ("" when equal).
func compareLists(got, want []*spec.Tuple) string {
	if gk, wk := keysOf(got), keysOf(want); strings.Join(gk, ",") != strings.Join(wk, ",") {
		return fmt.Sprintf("got %v, want %v", gk, wk)
	}
	for i := range got {
		if d := diffTuple(got[i], want[i]); d != "" {
			return fmt.Sprintf("result %d: %s", i, d)
		}
	}
	return ""
}

// listTableSpecs generates one spec per thread scope × namespace scope ×
// Before, each checking every filter × limit combination against the
// model. Runs of equal IDs are compared in the order LIST-ORDER-2 asks
// for, whatever order the saver returns them in: the matrix checks the
// other List rules. The specs with an empty thread ID need the optional
// capability list_threads.
func listTableSpecs(e *env) {
	threads := []string{"", "a", "b|%", "missing"}
	type nsScope struct {
		all bool
		ns  string
	}
	nss := []nsScope{{all: true}, {ns: ""}, {ns: "s:1|x:2"}, {ns: "missing"}}
	befores := []string{"", "03", "045", "06"}
	// Plain filter values: nil and nested values are LIST-FILTER-6, -7 and
	// -8's matter, where LangGraph's savers disagree.
	filters := []spec.Metadata{nil, {}, {"source": "loop"}, {"step": 2.0}, {"flag": true}, {"source": "input", "step": 1}, {"flag": 1, "step": 1}}
	limits := []int{0, 1, 2, 100}

	g.Describe("List matrix (generated, checked against the model)", func() {
		for _, th := range threads {
			for _, ns := range nss {
				for _, before := range befores {
					ids := []string{"LIST-ORDER-1", "LIST-FILTER-1", "LIST-LIMIT-1", "LIST-LIMIT-2", "LIST-SCOPE-5"}
					labels := lList
					scope := "LIST-SCOPE-1"
					if th == "" {
						scope, labels = "LIST-SCOPE-6", lListThreads
					}
					ids = append(ids, scope)
					nsText := fmt.Sprintf("ns=%q", ns.ns)
					if ns.all {
						ids = append(ids, "LIST-SCOPE-2", "LIST-ORDER-4")
						nsText = "ns=*"
					} else {
						ids = append(ids, "LIST-SCOPE-3")
					}
					if before == "" {
						ids = append(ids, "LIST-BEFORE-4")
					} else {
						ids = append(ids, "LIST-BEFORE-1", "LIST-BEFORE-2")
					}
					if before == "045" {
						ids = append(ids, "LIST-BEFORE-3")
					}
					text := fmt.Sprintf("%s thread=%q %s before=%q: every filter and limit matches the model", cite(ids), th, nsText, before)
					checkBroad(text, "list matrix", labels, nil, func(ctx g.SpecContext) {
						if th == "" {
							e.listThreads(ctx)
						}
						declared := e.h.has(WholeSnapshots)
						m := newModel(declared)
						e.loadTable(ctx, m)
						var listed []listedCase
						for _, f := range filters {
							for _, limit := range limits {
								opts := spec.ListOptions{ThreadID: th, Namespace: ns.ns, AllNamespaces: ns.all, Before: before, Filter: f, Limit: limit}
								got, err := collect(e.s.List(ctx, opts))
								listed = append(listed, listedCase{opts, got, err})
							}
						}
						bad := judgeMatrix(listed, m)
						// A recognised LangGraph behaviour (true matching 1,
						// list(None), whole snapshots) is the focused specs'
						// matter: judge the rest against a model following it.
						var adopted lgVariant
						for _, v := range subsetsOf(lgVariant{trueIsOne: true, listNone: th == "", snapshots: !declared}) {
							if len(bad) == 0 {
								break
							}
							vm := newModel(declared || v.snapshots)
							vm.lg = v
							loadTableModel(vm)
							if vbad := judgeMatrix(listed, vm); len(vbad) < len(bad) {
								bad, adopted = vbad, v
							}
						}
						if len(bad) > 0 {
							if adopted.any() {
								g.GinkgoWriter.Printf("the model follows %v\n", adopted.behaviours())
							}
							attributeFailure(matrixAttribution(bad, scope, ns.all)...)
							lines := make([]string, len(bad))
							for i, c := range bad {
								lines[i] = c.String()
							}
							g.Fail(fmt.Sprintf("%d of %d cases differ from the model:\n%s", len(bad), len(filters)*len(limits), strings.Join(lines, "\n")))
						}
					})
				}
			}
		}
	})
}

// listedCase is what the saver listed for one combination of the List
// matrix.
type listedCase struct {
	opts spec.ListOptions
	got  []*spec.Tuple
	err  error
}

// judgeMatrix returns the cases of listed that differ from m.
func judgeMatrix(listed []listedCase, m *model) []matrixCase {
	var bad []matrixCase
	for _, l := range listed {
		c := matrixCase{opts: l.opts, err: l.err}
		if l.err == nil {
			c.diff = compareListed(l.got, m.listAll(l.opts), l.opts.Limit)
			want := m.list(l.opts)
			c.keysDiffer = c.diff != "" && !slices.Equal(keysOf(sortTies(l.got)), keysOf(want))
			c.sameKeys = slices.Equal(sortedKeys(l.got), sortedKeys(want))
		}
		if c.err != nil || c.diff != "" {
			bad = append(bad, c)
		}
	}
	return bad
}

// matrixCase is one failing combination of the List matrix.
type matrixCase struct {
	opts       spec.ListOptions
	err        error
	diff       string
	keysDiffer bool // the checkpoints listed differ, not only their contents
	sameKeys   bool // the same checkpoints, perhaps in another order
}

func (c matrixCase) String() string {
	head := fmt.Sprintf("filter=%v limit=%d", c.opts.Filter, c.opts.Limit)
	if c.err != nil {
		return head + ": error " + c.err.Error()
	}
	return head + ": " + c.diff
}

// matrixAttribution names the rule the failing cases of one matrix spec
// point at, from what they have in common: an error or a scope fault when
// every case fails, the filter or limit when only cases with one fail,
// the order when the right checkpoints come in the wrong order, the tuple
// contents when the right checkpoints come with wrong contents.
func matrixAttribution(bad []matrixCase, scope string, all bool) []string {
	every := func(pred func(matrixCase) bool) bool {
		for _, c := range bad {
			if !pred(c) {
				return false
			}
		}
		return true
	}
	switch {
	case every(func(c matrixCase) bool { return c.err == nil && !c.keysDiffer }):
		var rules []string
		for _, c := range bad {
			rules = append(rules, tupleRules(c.diff)...)
		}
		slices.Sort(rules)
		return slices.Compact(rules)
	case every(func(c matrixCase) bool { return c.err == nil && c.sameKeys }):
		return []string{"LIST-ORDER-1"}
	case every(func(c matrixCase) bool { return len(c.opts.Filter) > 0 }):
		return []string{"LIST-FILTER-1"}
	case every(func(c matrixCase) bool { return c.opts.Limit > 0 && c.opts.Limit < 100 }):
		return []string{"LIST-LIMIT-1"}
	case every(func(c matrixCase) bool { return c.opts.Limit == 0 || c.opts.Limit == 100 }):
		return []string{"LIST-LIMIT-2"}
	case bad[0].opts.Before != "":
		return []string{"LIST-BEFORE-1"}
	case all:
		return []string{scope, "LIST-SCOPE-2"}
	}
	return []string{scope, "LIST-SCOPE-3"}
}

// cite formats rule IDs for a spec text, without duplicates.
func cite(ids []string) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			b.WriteString("[" + id + "]")
		}
	}
	return b.String()
}
