package conformance

import (
	"context"
	"slices"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// lListThreads labels the specs of List with an empty ThreadID, an
// optional capability: LangGraph's engine never lists across threads.
var lListThreads = g.Label(lListThreadsName)

// listThreadsSpecs covers List across threads (LIST-SCOPE-6).
func listThreadsSpecs(e *env) {
	g.Describe("List across threads", func() {
		tied := func(ctx context.Context, opts spec.ListOptions) []string {
			g.GinkgoHelper()
			return keysOf(sortTies(e.list(ctx, opts)))
		}

		check("[LIST-SCOPE-6] lists every thread for an empty ThreadID, only root namespaces for Namespace \"\"", lListThreads, func(ctx context.Context) {
			e.listThreads(ctx)
			e.listFixture(ctx)
			got := tied(ctx, spec.ListOptions{})
			everything := []string{keyOf("b", "s:1", "06"), keyOf("a", "", "05"), keyOf("b", "", "04"), keyOf("a", "", "03"), keyOf("a", "s:1", "03"), keyOf("b", "", "03"), keyOf("a", "s:1", "02"), keyOf("a", "", "01")}
			if same(got, everything) {
				differ("a List of every thread lists every namespace too, as LangGraph's list(None) does")
			}
			Expect(got).To(Equal([]string{keyOf("a", "", "05"), keyOf("b", "", "04"), keyOf("a", "", "03"), keyOf("b", "", "03"), keyOf("a", "", "01")}))
			Expect(tied(ctx, spec.ListOptions{Namespace: "s:1"})).To(Equal([]string{keyOf("b", "s:1", "06"), keyOf("a", "s:1", "03"), keyOf("a", "s:1", "02")}))
			Expect(tied(ctx, spec.ListOptions{Namespace: "none"})).To(BeEmpty())
		})

		checkNeeds("[LIST-SCOPE-6] applies AllNamespaces, CheckpointID, Before and filter across threads", []string{"LIST-FILTER-1"}, lListThreads, func(ctx context.Context) {
			e.listThreads(ctx)
			e.listFixture(ctx)
			// In any order: how threads interleave is LIST-ORDER-4's matter.
			set := func(opts spec.ListOptions) []string {
				g.GinkgoHelper()
				return sortedKeys(e.list(ctx, opts))
			}
			everything := set(spec.ListOptions{AllNamespaces: true})
			Expect(everything).To(HaveLen(8), "every thread and namespace")
			if byID := set(spec.ListOptions{AllNamespaces: true, CheckpointID: "03"}); same(byID, everything) {
				differ("a List of every thread ignores the checkpoint ID too, as LangGraph's list(None) does")
			}
			Expect(set(spec.ListOptions{AllNamespaces: true, CheckpointID: "03"})).To(Equal([]string{keyOf("a", "", "03"), keyOf("a", "s:1", "03"), keyOf("b", "", "03")}), "CheckpointID 03")
			// "04" exists only in thread b: the cut applies to thread a too.
			Expect(set(spec.ListOptions{AllNamespaces: true, Before: "04"})).To(Equal([]string{
				keyOf("a", "", "01"), keyOf("a", "", "03"), keyOf("a", "s:1", "02"), keyOf("a", "s:1", "03"), keyOf("b", "", "03")}), "Before 04")
			Expect(set(spec.ListOptions{AllNamespaces: true, Filter: md("key", "b/s:1/06")})).To(Equal([]string{keyOf("b", "s:1", "06")}), "filter")
		})

		checkNeeds("[LIST-ORDER-4] interleaves threads in one checkpoint ID descending order, the limit cutting that order", []string{"LIST-SCOPE-6"}, lListThreads, func(ctx context.Context) {
			e.listThreads(ctx)
			e.listFixture(ctx)
			got := tied(ctx, spec.ListOptions{AllNamespaces: true})
			want := []string{keyOf("b", "s:1", "06"), keyOf("a", "", "05"), keyOf("b", "", "04"), keyOf("a", "", "03"), keyOf("a", "s:1", "03"), keyOf("b", "", "03"), keyOf("a", "s:1", "02"), keyOf("a", "", "01")}
			grouped := []string{keyOf("a", "", "05"), keyOf("a", "", "03"), keyOf("a", "", "01"), keyOf("a", "s:1", "03"), keyOf("a", "s:1", "02"), keyOf("b", "", "04"), keyOf("b", "", "03"), keyOf("b", "s:1", "06")}
			if !slices.Equal(got, want) && slices.Equal(got, grouped) {
				differ("a listing of several threads comes grouped by thread, then namespace (LangGraph's in-memory savers)")
			}
			Expect(got).To(Equal(want))
			Expect(tied(ctx, spec.ListOptions{AllNamespaces: true, Limit: 2})).To(Equal(want[:2]), "Limit 2")
		})

		checkNeeds("[LIST-ORDER-2] orders equal IDs across threads by thread, then namespace", []string{"LIST-SCOPE-6"}, lListThreads, func(ctx context.Context) {
			e.listThreads(ctx)
			for _, th := range []string{"b", "a", "B", "ä"} {
				for _, ns := range []string{"x", "", "X"} {
					e.put(ctx, th, ns, "", "same", nil)
				}
			}
			var want []string
			for _, th := range []string{"B", "a", "b", "ä"} {
				for _, ns := range []string{"", "X", "x"} {
					want = append(want, keyOf(th, ns, "same"))
				}
			}
			expectTieOrder(e.list(ctx, spec.ListOptions{AllNamespaces: true}), want)
		})
	})
}
