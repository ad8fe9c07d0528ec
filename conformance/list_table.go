package conformance

import (
	"context"
	"fmt"
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
// model.
func listTableSpecs(e *env) {
	threads := []string{"", "a", "b|%", "missing"}
	type nsScope struct {
		all bool
		ns  string
	}
	nss := []nsScope{{all: true}, {ns: ""}, {ns: "s:1|x:2"}, {ns: "missing"}}
	befores := []string{"", "03", "045", "06"}
	filters := []spec.Metadata{nil, {}, {"source": "loop"}, {"step": 2.0}, {"flag": true}, {"source": "input", "n": nil}, {"flag": 1, "step": 1}}
	limits := []int{0, 1, 2, 100}

	g.Describe("List matrix (generated, checked against the model)", func() {
		for _, th := range threads {
			for _, ns := range nss {
				for _, before := range befores {
					ids := []string{"LIST-ORDER-1", "LIST-FILTER-1", "LIST-LIMIT-1", "LIST-LIMIT-2", "LIST-SCOPE-5"}
					if th == "" {
						ids = append(ids, "LIST-SCOPE-1", "LIST-ORDER-2")
					}
					nsText := fmt.Sprintf("ns=%q", ns.ns)
					if ns.all {
						ids = append(ids, "LIST-SCOPE-2", "LIST-ORDER-2")
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
					check(text, lList, func(ctx context.Context) {
						m := newModel()
						e.loadTable(ctx, m)
						var bad []string
						for _, f := range filters {
							for _, limit := range limits {
								opts := spec.ListOptions{ThreadID: th, Namespace: ns.ns, AllNamespaces: ns.all, Before: before, Filter: f, Limit: limit}
								got, err := collect(e.s.List(ctx, opts))
								if err != nil {
									bad = append(bad, fmt.Sprintf("filter=%v limit=%d: error %v", f, limit, err))
									continue
								}
								if d := compareLists(got, m.list(opts)); d != "" {
									bad = append(bad, fmt.Sprintf("filter=%v limit=%d: %s", f, limit, d))
								}
							}
						}
						if len(bad) > 0 {
							g.Fail(fmt.Sprintf("%d of %d cases differ from the model:\n%s", len(bad), len(filters)*len(limits), strings.Join(bad, "\n")))
						}
					})
				}
			}
		}
	})
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
