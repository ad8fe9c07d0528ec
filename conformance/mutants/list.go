package mutants

import (
	"cmp"
	"context"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of List's scope, order, Before cut and limit.

func init() {
	register(Mutant{
		Name: "list-ascending", Rule: "LIST-ORDER-1",
		Description: "List returns checkpoints oldest first (ascending IDs), the limit keeping the oldest.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return reorder(ctx, w.Inner, o, func(ts []*spec.Tuple) []*spec.Tuple { slices.Reverse(ts); return ts })
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			for _, id := range []string{"b", "a", "c"} {
				_ = putCP(ctx, s, "t", "", id, "", nil, nil)
			}
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t"})
		},
	})
	register(Mutant{
		Name: "list-grouped-by-namespace", Rule: "LIST-ORDER-4",
		Description: "A listing of several threads or namespaces comes grouped by thread, then namespace, each group in ID descending order (LangGraph's in-memory savers).",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return reorder(ctx, w.Inner, o, func(ts []*spec.Tuple) []*spec.Tuple {
					slices.SortStableFunc(ts, func(a, b *spec.Tuple) int {
						return cmp.Or(cmp.Compare(a.Config.ThreadID, b.Config.ThreadID), cmp.Compare(a.Config.Namespace, b.Config.Namespace))
					})
					return ts
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "sub", "b", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "c", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", AllNamespaces: true})
		},
	})
	register(Mutant{
		Name: "list-tie-order-reversed", Rule: "LIST-ORDER-2",
		Description: "List orders checkpoints sharing an ID by thread and namespace descending instead of ascending.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return reorder(ctx, w.Inner, o, func(ts []*spec.Tuple) []*spec.Tuple {
					for i := 0; i < len(ts); {
						j := i + 1
						for j < len(ts) && ts[j].Config.CheckpointID == ts[i].Config.CheckpointID {
							j++
						}
						slices.Reverse(ts[i:j])
						i = j
					}
					return ts
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t1", "", "x", "", nil, nil)
			_ = putCP(ctx, s, "t2", "", "x", "", nil, nil)
			_ = putCP(ctx, s, "t1", "sub", "x", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{AllNamespaces: true})
		},
	})
	register(Mutant{
		Name: "list-numeric-order", Rule: "LIST-ORDER-3",
		Description: "List sorts IDs in natural order (digit runs compared as numbers), so \"10\" counts as greater than \"9\".",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return reorder(ctx, w.Inner, o, func(ts []*spec.Tuple) []*spec.Tuple {
					slices.SortStableFunc(ts, func(a, b *spec.Tuple) int {
						return naturalCompare(b.Config.CheckpointID, a.Config.CheckpointID)
					})
					return ts
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			for _, id := range []string{"9", "10", "100"} {
				_ = putCP(ctx, s, "t", "", id, "", nil, nil)
			}
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t"})
		},
	})
	register(Mutant{
		Name: "before-inclusive", Rule: "LIST-BEFORE-1",
		Description: "The Before cut keeps IDs equal to Before (<= instead of <).",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return relist(ctx, w.Inner, o, func(in *spec.ListOptions) { in.Before = "" }, func(t *spec.Tuple) bool {
					return o.Before == "" || t.Config.CheckpointID <= o.Before
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			for _, id := range []string{"a", "b", "c"} {
				_ = putCP(ctx, s, "t", "", id, "", nil, nil)
			}
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Before: "b"})
		},
	})
	register(Mutant{
		Name: "before-one-namespace", Rule: "LIST-BEFORE-2",
		Description: "When the Before ID exists, the cut applies only to the namespaces holding it; other namespaces are listed uncut (Before resolved to a row of the listed namespace).",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.Before == "" {
					return w.Inner.List(ctx, o)
				}
				type scope struct{ thread, ns string }
				owners := map[scope]bool{}
				for t, err := range w.Inner.List(ctx, spec.ListOptions{ThreadID: o.ThreadID, CheckpointID: o.Before, AllNamespaces: true}) {
					if err == nil {
						owners[scope{t.Config.ThreadID, t.Config.Namespace}] = true
					}
				}
				if len(owners) == 0 {
					return w.Inner.List(ctx, o)
				}
				return relist(ctx, w.Inner, o, func(in *spec.ListOptions) { in.Before = "" }, func(t *spec.Tuple) bool {
					return !owners[scope{t.Config.ThreadID, t.Config.Namespace}] || t.Config.CheckpointID < o.Before
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "b", "", nil, nil)
			_ = putCP(ctx, s, "t", "sub", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "sub", "c", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Namespace: "sub", Before: "b"})
		},
	})
	register(Mutant{
		Name: "list-threads-all-namespaces", Rule: "LIST-SCOPE-6",
		Description: "A List of every thread lists every namespace too, whatever Namespace says (LangGraph's list(None)).",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.ThreadID == "" {
					o.AllNamespaces = true
				}
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "sub", "b", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{})
		},
	})
	register(Mutant{
		Name: "before-one-thread", Rule: "LIST-SCOPE-6",
		Description: "When the Before ID exists, the cut applies only to the threads holding it; other threads are listed uncut.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.Before == "" {
					return w.Inner.List(ctx, o)
				}
				owners := map[string]bool{}
				for t, err := range w.Inner.List(ctx, spec.ListOptions{CheckpointID: o.Before, AllNamespaces: true}) {
					if err == nil {
						owners[t.Config.ThreadID] = true
					}
				}
				if len(owners) == 0 {
					return w.Inner.List(ctx, o)
				}
				return relist(ctx, w.Inner, o, func(in *spec.ListOptions) { in.Before = "" }, func(t *spec.Tuple) bool {
					return !owners[t.Config.ThreadID] || t.Config.CheckpointID < o.Before
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t1", "", "b", "", nil, nil)
			_ = putCP(ctx, s, "t2", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t2", "", "c", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{Before: "b"})
		},
	})
	register(Mutant{
		Name: "limit-before-filter", Rule: "LIST-LIMIT-1",
		Description: "List takes the first Limit checkpoints and only then applies the metadata filter.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return func(yield func(*spec.Tuple, error) bool) {
					if err := spec.ValidateList(o); err != nil {
						yield(nil, err)
						return
					}
					filter, _ := spec.NormalizeFilter(o.Filter)
					in := o
					in.Filter = nil
					for t, err := range w.Inner.List(ctx, in) {
						if err != nil {
							yield(nil, err)
							return
						}
						if spec.MatchFilter(t.Metadata, filter) && !yield(t, nil) {
							return
						}
					}
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"k": "x"}, nil)
			_ = putCP(ctx, s, "t", "", "b", "", spec.Metadata{"k": "y"}, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Filter: spec.Metadata{"k": "x"}, Limit: 1})
		},
	})
	register(Mutant{
		Name: "limit-ignored", Rule: "LIST-LIMIT-1",
		Description: "List ignores Limit and returns every match.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				o.Limit = min(o.Limit, 0) // a negative limit still fails
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "b", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Limit: 1})
		},
	})
	register(Mutant{
		Name: "limit-zero-returns-nothing", Rule: "LIST-LIMIT-2",
		Description: "Limit 0 is passed through literally, as SQL's LIMIT 0, and lists nothing.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.Limit == 0 {
					return func(yield func(*spec.Tuple, error) bool) {
						if err := spec.ValidateList(o); err != nil {
							yield(nil, err)
						}
					}
				}
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t"})
		},
	})
	register(Mutant{
		Name: "negative-limit-accepted", Rule: "ERR-4",
		Description: "A negative Limit is treated as no limit instead of failing with ErrInvalidArgument.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				o.Limit = max(o.Limit, 0)
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Limit: -1})
		},
	})
	register(Mutant{
		Name: "list-root-means-all", Rule: "LIST-SCOPE-3",
		Description: "Namespace \"\" without AllNamespaces lists every namespace, not just the root.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.Namespace == "" {
					o.AllNamespaces = true
				}
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: witnessNamespaces,
	})
	register(Mutant{
		Name: "list-all-namespaces-ignored", Rule: "LIST-SCOPE-2",
		Description: "AllNamespaces is ignored: List lists only Namespace.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				o.AllNamespaces = false
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: witnessNamespaces,
	})
	register(Mutant{
		Name: "list-thread-ignored", Rule: "LIST-SCOPE-1",
		Description: "List ignores ThreadID and lists every thread.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				o.ThreadID = ""
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: witnessThreads,
	})
	register(Mutant{
		Name: "list-thread-prefix", Rule: "ID-2",
		Description: "List selects threads by prefix (as LIKE 'id%' would), so thread \"a\" also lists \"ab\".",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				if o.ThreadID == "" {
					return w.Inner.List(ctx, o)
				}
				return relist(ctx, w.Inner, o, func(in *spec.ListOptions) { in.ThreadID = "" }, func(t *spec.Tuple) bool {
					return strings.HasPrefix(t.Config.ThreadID, o.ThreadID)
				})
			}
			return w
		},
		Witness: witnessThreads,
	})
	register(Mutant{
		Name: "list-checkpoint-id-ignored", Rule: "LIST-SCOPE-4",
		Description: "List ignores ListOptions.CheckpointID.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				o.CheckpointID = ""
				return w.Inner.List(ctx, o)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "b", "", nil, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", CheckpointID: "a"})
		},
	})
	register(Mutant{
		Name: "list-without-writes", Rule: "LIST-SCOPE-5",
		Description: "List returns tuples without their pending writes (GetTuple still has them).",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return relist(ctx, w.Inner, o, nil, func(t *spec.Tuple) bool {
					t.PendingWrites = []spec.PendingWrite{}
					return true
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, []spec.Write{{Channel: "c", Value: "v"}}, "task", "")
			for t, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
				return describe(t, err)
			}
			return "nothing listed"
		},
	})
	register(Mutant{
		Name: "list-duplicates-reput", Rule: "PUT-11",
		Description: "Putting an existing checkpoint again adds a second row: List shows it once per Put.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			puts := map[ckey]int{}
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if err == nil {
					mu.Lock()
					puts[ckey{out.ThreadID, out.Namespace, out.CheckpointID}]++
					mu.Unlock()
				}
				return out, err
			}
			w.OnDeleteThread = func(ctx context.Context, thread string) error {
				err := w.Inner.DeleteThread(ctx, thread)
				if err == nil {
					mu.Lock()
					for k := range puts {
						if k.thread == thread {
							delete(puts, k)
						}
					}
					mu.Unlock()
				}
				return err
			}
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return reorder(ctx, w.Inner, o, func(ts []*spec.Tuple) []*spec.Tuple {
					var out []*spec.Tuple
					mu.Lock()
					defer mu.Unlock()
					for _, t := range ts {
						out = append(out, t)
						for range puts[keyOf(t)] - 1 {
							out = append(out, cloneTuple(t))
						}
					}
					return out
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"n": 1}, nil)
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"n": 2}, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t"})
		},
	})
}

// witnessNamespaces lists the root namespace and all namespaces of a thread
// with checkpoints in two namespaces.
func witnessNamespaces(ctx context.Context, s spec.Saver) any {
	_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
	_ = putCP(ctx, s, "t", "sub:1", "b", "", nil, nil)
	return []any{
		listKeys(ctx, s, spec.ListOptions{ThreadID: "t"}),
		listKeys(ctx, s, spec.ListOptions{ThreadID: "t", AllNamespaces: true}),
	}
}

// witnessThreads lists one thread among threads sharing a prefix.
func witnessThreads(ctx context.Context, s spec.Saver) any {
	_ = putCP(ctx, s, "a", "", "1", "", nil, nil)
	_ = putCP(ctx, s, "ab", "", "2", "", nil, nil)
	return listKeys(ctx, s, spec.ListOptions{ThreadID: "a"})
}

// naturalCompare orders strings with runs of digits compared as numbers
// and everything else byte-wise.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.ParseUint(da, 10, 64)
			nb, _ := strconv.ParseUint(db, 10, 64)
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
