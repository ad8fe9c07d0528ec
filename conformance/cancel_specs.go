package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"

	"github.com/checkpointkit/checkpointkit/spec"
)

func init() { extraGroups = append(extraGroups, cancelSpecs) }

// tripCtx is a context that cancels itself on its k-th use: the k-th call
// of Done or Err. Drivers consult their context at every I/O (and savers
// between steps), so sweeping k cancels a call at every point of its work
// where it could notice.
type tripCtx struct {
	context.Context
	cancel  context.CancelFunc
	left    atomic.Int64
	tripped atomic.Bool
}

// newTripCtx returns a context derived from parent that cancels itself on
// its k-th use, and a func releasing it.
func newTripCtx(parent context.Context, k int) (*tripCtx, context.CancelFunc) {
	inner, cancel := context.WithCancel(parent)
	c := &tripCtx{Context: inner, cancel: cancel}
	c.left.Store(int64(k))
	return c, cancel
}

func (c *tripCtx) use() {
	if c.left.Add(-1) == 0 {
		c.tripped.Store(true)
		c.cancel()
	}
}

// Done counts a use, then returns the parent's channel.
func (c *tripCtx) Done() <-chan struct{} { c.use(); return c.Context.Done() }

// Err counts a use, then returns the parent's error.
func (c *tripCtx) Err() error { c.use(); return c.Context.Err() }

// nextTrip is the sweep's schedule: every use up to 48, then about 8% more
// each step, so a call consulting its context thousands of times is swept
// in a few dozen runs.
func nextTrip(k int) int {
	if k < 48 {
		return k + 1
	}
	return k + k/12
}

// maxTrip bounds the sweep: a call that still notices its context after
// that many uses never completes.
const maxTrip = 200_000

// tagged names the threads and run IDs of one run of a call (one tag per
// run), so that runs share a saver without seeing one another.
func tagged(tag, name string) string { return tag + "-" + name }

// retag rewrites the tuples of tag from as those of tag to: thread IDs,
// parents and run IDs in metadata.
func retag(ts []*spec.Tuple, from, to string) []*spec.Tuple {
	re := func(s string) string {
		if rest, ok := strings.CutPrefix(s, from+"-"); ok {
			return to + "-" + rest
		}
		return s
	}
	out := make([]*spec.Tuple, len(ts))
	for i, t := range ts {
		c := *t
		c.Config.ThreadID = re(c.Config.ThreadID)
		if c.Parent != nil {
			p := *c.Parent
			p.ThreadID = re(p.ThreadID)
			c.Parent = &p
		}
		if c.Metadata != nil {
			c.Metadata = spec.Metadata{}
			for k, v := range t.Metadata {
				if s, ok := v.(string); ok && k == "run_id" {
					v = re(s)
				}
				c.Metadata[k] = v
			}
		}
		out[i] = &c
	}
	return out
}

// tagFixture stores, in thread tag-t, two namespaces of two chained
// checkpoints each (V 2, three channel values, metadata with the run ID
// tag-run-ID), each with two PutWrites calls of three writes.
func (e *env) tagFixture(ctx context.Context, tag string) {
	g.GinkgoHelper()
	th := tagged(tag, "t")
	for _, ns := range []string{"", "sub:1"} {
		parent := ""
		for _, id := range []string{"1", "2"} {
			vals := map[string]any{"a": "a" + id, "b": []any{int64(1), id}, "c": map[string]any{"k": id}}
			vers := spec.Versions{"a": spec.Version(id), "b": spec.Version(id), "c": spec.Version(id)}
			cp := cpOf(id, vals, vers)
			cp.V = 2
			cfg := e.putCP(ctx, spec.Config{ThreadID: th, Namespace: ns, CheckpointID: parent}, cp, md("step", 1, "run_id", tagged(tag, "run-"+id)), vers)
			e.writes(ctx, cfg, "task-a", spec.Write{Channel: "w", Value: id}, spec.Write{Channel: "x", Value: int64(1)}, spec.Write{Channel: spec.InterruptChannel, Value: "i" + id})
			e.writes(ctx, cfg, "task-b", spec.Write{Channel: "w", Value: "b" + id}, spec.Write{Channel: "y", Value: []any{"z"}}, spec.Write{Channel: spec.ErrorChannel, Value: "e" + id})
			parent = id
		}
	}
}

// callCase is one call the cancellation and deadline specs make on a
// tagFixture: the threads it may change (listed by name, tag-less), what it
// needs, and the call itself, which returns what it read.
type callCase struct {
	name    string
	rules   string // citation prefix: "[CTX-5]"
	labels  g.Labels
	threads []string
	need    func(e *env)
	call    func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error)
	// list marks a List: on error, what it yielded must be a prefix of the
	// full listing.
	list bool
}

// callCases returns the calls of the cancellation and deadline specs.
func callCases() []callCase {
	return []callCase{
		{name: "Put", labels: lErrors, threads: []string{"t"}, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			vals := map[string]any{"a": "a3", "c": map[string]any{"k": "3", "l": []any{1.5, true}}}
			vers := spec.Versions{"a": "3", "b": "2", "c": "3"}
			cp := cpOf("3", vals, vers)
			cp.V = 3
			_, err := s.Put(ctx, spec.Config{ThreadID: tagged(tag, "t"), CheckpointID: "2"}, cp, md("step", 2, "run_id", tagged(tag, "run-3")), spec.Versions{"a": "3", "c": "3"})
			return nil, err
		}},
		{name: "PutWrites", rules: "[WRITES-12]", labels: lErrors, threads: []string{"t"}, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			ws := []spec.Write{{Channel: "w", Value: "n1"}, {Channel: "v", Value: map[string]any{"deep": []any{"x", int64(2)}}}, {Channel: spec.InterruptChannel, Value: "n3"}, {Channel: "w", Value: "n4"}}
			return nil, s.PutWrites(ctx, spec.Config{ThreadID: tagged(tag, "t"), CheckpointID: "2"}, ws, "task-new", taskPath)
		}},
		{name: "GetTuple", labels: lErrors, threads: []string{"t"}, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			var out []*spec.Tuple
			for _, cfg := range []spec.Config{{ThreadID: tagged(tag, "t")}, {ThreadID: tagged(tag, "t"), Namespace: "sub:1", CheckpointID: "1"}} {
				t, err := s.GetTuple(ctx, cfg)
				if err != nil {
					return out, err
				}
				out = append(out, t)
			}
			return out, nil
		}},
		{name: "List", labels: lErrors, threads: []string{"t"}, list: true, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			return collect(s.List(ctx, spec.ListOptions{ThreadID: tagged(tag, "t"), AllNamespaces: true}))
		}},
		{name: "DeleteThread", labels: lErrors, threads: []string{"t"}, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			return nil, s.DeleteThread(ctx, tagged(tag, "t"))
		}},
		{name: "CopyThread", labels: lCopy, threads: []string{"t", "copy"}, need: func(e *env) { e.copier() }, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			return nil, s.(spec.ThreadCopier).CopyThread(ctx, tagged(tag, "t"), tagged(tag, "copy"))
		}},
		{name: "Prune(KeepLatest)", labels: lPrune, threads: []string{"t"}, need: func(e *env) { e.pruner() }, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			return nil, s.(spec.Pruner).Prune(ctx, []string{tagged(tag, "t")}, spec.KeepLatest)
		}},
		{name: "Prune(DeleteAll)", labels: lPrune, threads: []string{"t"}, need: func(e *env) { e.pruner() }, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			return nil, s.(spec.Pruner).Prune(ctx, []string{tagged(tag, "t")}, spec.DeleteAll)
		}},
		{name: "DeleteForRuns", labels: lRuns, threads: []string{"t"}, need: func(e *env) { e.runDeleter() }, call: func(ctx context.Context, s spec.Saver, tag string) ([]*spec.Tuple, error) {
			return nil, s.(spec.RunDeleter).DeleteForRuns(ctx, []string{tagged(tag, "run-1")})
		}},
	}
}

// tagSnapshot reads the given threads of tag, one at a time, each in List
// order with ties sorted. Tuples of another thread are left out: listing
// one thread is LIST-SCOPE-1's matter, not that of the specs using this.
func (e *env) tagSnapshot(ctx context.Context, tag string, threads []string) []*spec.Tuple {
	g.GinkgoHelper()
	var out []*spec.Tuple
	for _, th := range threads {
		name := tagged(tag, th)
		for _, t := range sortTies(e.list(ctx, spec.ListOptions{ThreadID: name, AllNamespaces: true})) {
			if t.Config.ThreadID == name {
				out = append(out, t)
			}
		}
	}
	return out
}

// sameRun compares what two runs of one call read or left, where both runs
// are the same saver's: nil and empty maps and slices count as equal, since
// which one a saver returns is PUT-13's and GET-6's matter.
func sameRun(got, want []*spec.Tuple) string {
	return compareLists(settled(got), settled(want))
}

// settled returns copies of ts with nil pending writes, values, versions
// and metadata made empty, and pending writes sorted.
func settled(ts []*spec.Tuple) []*spec.Tuple {
	out := make([]*spec.Tuple, len(ts))
	for i, t := range ts {
		c := *t
		// Which order writes of different tasks come in is free, and
		// the order within a task is WRITES-13's matter: compared as sets.
		c.PendingWrites = sortWrites(c.PendingWrites)
		if c.Checkpoint.ChannelValues == nil {
			c.Checkpoint.ChannelValues = map[string]any{}
		}
		if c.Checkpoint.ChannelVersions == nil {
			c.Checkpoint.ChannelVersions = spec.Versions{}
		}
		if c.Metadata == nil {
			c.Metadata = spec.Metadata{}
		}
		out[i] = &c
	}
	return out
}

// isCtxErr reports whether err is a context's error.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// sweep runs c on fresh tagFixtures with a context that cancels itself on
// its k-th use, for k from 1 until the call completes without noticing, and
// checks every run against a reference run without cancellation: the call
// either succeeds and leaves the reference's after-state (and reads what
// the reference read), or fails with the context's error and leaves the
// before-state; a List that fails has yielded a prefix of the full listing.
func (e *env) sweep(ctx context.Context, c callCase) (runs int) {
	g.GinkgoHelper()
	const ref = "ref"
	e.tagFixture(ctx, ref)
	before := e.tagSnapshot(ctx, ref, c.threads)
	read, err := c.call(ctx, e.s, ref)
	Expect(err).NotTo(HaveOccurred(), "%s without cancellation", c.name)
	after := e.tagSnapshot(ctx, ref, c.threads)
	for k := 1; ; k = nextTrip(k) {
		if k > maxTrip {
			g.Fail(fmt.Sprintf("%s still notices its context after %d uses of it: the sweep gave up", c.name, maxTrip))
		}
		runs++
		tag := fmt.Sprintf("k%d", k)
		e.tagFixture(ctx, tag)
		tc, cancel := newTripCtx(ctx, k)
		got, err := c.call(tc, e.s, tag)
		cancel()
		state := e.tagSnapshot(ctx, tag, c.threads)
		switch {
		case err == nil:
			if d := sameRun(got, retag(read, ref, tag)); d != "" {
				g.Fail(fmt.Sprintf("%s, context cancelled at its use %d, succeeded but read something else than without cancellation: %s", c.name, k, d))
			}
			if d := sameRun(state, retag(after, ref, tag)); d != "" {
				g.Fail(fmt.Sprintf("%s, context cancelled at its use %d, succeeded but did not do all of its work: %s", c.name, k, d))
			}
			if !tc.tripped.Load() {
				g.GinkgoWriter.Printf("%s: cancelled at %d points up to its use %d of its context, then completed without noticing it\n", c.name, runs-1, k-1)
				return runs
			}
		case !isCtxErr(err):
			g.Fail(fmt.Sprintf("%s, context cancelled at its use %d, failed with %v, which is not the context's error", c.name, k, err))
		default:
			if c.list {
				full := retag(read, ref, tag)
				if len(got) > len(full) || sameRun(got, full[:len(got)]) != "" {
					g.Fail(fmt.Sprintf("%s, context cancelled at its use %d, failed after yielding something other than a prefix of the listing: %s", c.name, k, sameRun(got, full[:min(len(got), len(full))])))
				}
			}
			if d := sameRun(state, retag(before, ref, tag)); d != "" {
				g.Fail(fmt.Sprintf("%s, context cancelled at its use %d, failed with %v but changed the store: %s", c.name, k, err, d))
			}
		}
	}
}

// leakCheck runs fn and fails unless every goroutine it started has ended
// once it returned; goleak retries for a while, so goroutines that are
// ending anyway get the time to.
func leakCheck(what string, fn func()) {
	g.GinkgoHelper()
	// goleak panics on a stack it cannot parse (one deeper than the
	// runtime prints whole); that is no finding about List.
	defer func() {
		if r := recover(); r != nil {
			g.Fail(fmt.Sprintf("%s: goleak could not read the goroutines' stacks: %v", what, r))
		}
	}()
	ignore := goleak.IgnoreCurrent()
	fn()
	if err := goleak.Find(ignore); err != nil {
		g.Fail(fmt.Sprintf("%s left goroutines running: %v", what, err))
	}
}

// cancelSpecs covers cancellation during a call (CTX-5, WRITES-12), live
// deadlines (CTX-6) and goroutines left by List (CTX-7).
func cancelSpecs(e *env) {
	g.Describe("Cancellation during a call", func() {
		for _, c := range callCases() {
			if c.name == "GetTuple" {
				continue // a read changes nothing: List stands for reads
			}
			what := "leaves it all or nothing"
			if c.list {
				what = "fails or yields everything, after a prefix of the listing"
			}
			check(fmt.Sprintf("%s[CTX-5] %s cancelled at any point of its work %s", c.rules, c.name, what), c.labels, func(ctx context.Context) {
				if c.need != nil {
					c.need(e)
				}
				e.sweep(ctx, c)
			})
		}
	})

	g.Describe("Live deadlines", func() {
		for _, c := range callCases() {
			check(fmt.Sprintf("[CTX-6] %s behaves under a deadline not yet passed as without one", c.name), c.labels, func(ctx context.Context) {
				if c.need != nil {
					c.need(e)
				}
				e.tagFixture(ctx, "plain")
				e.tagFixture(ctx, "live")
				read, err := c.call(ctx, e.s, "plain")
				Expect(err).NotTo(HaveOccurred(), "%s without a deadline", c.name)
				dctx, cancel := context.WithDeadline(ctx, time.Now().Add(time.Hour))
				defer cancel()
				got, err := c.call(dctx, e.s, "live")
				Expect(err).NotTo(HaveOccurred(), "%s under a deadline one hour ahead", c.name)
				if d := sameRun(got, retag(read, "plain", "live")); d != "" {
					g.Fail(fmt.Sprintf("%s under a live deadline read something else than without one: %s", c.name, d))
				}
				if d := sameRun(e.tagSnapshot(ctx, "live", c.threads), retag(e.tagSnapshot(ctx, "plain", c.threads), "plain", "live")); d != "" {
					g.Fail(fmt.Sprintf("%s under a live deadline changed the store otherwise than without one: %s", c.name, d))
				}
			})
		}
	})

	g.Describe("Invalid writes in a batch", func() {
		check("[WRITES-12] stores none of a PutWrites call's writes when one of them is invalid", lWrites, func(ctx context.Context) {
			cfg := e.put(ctx, "t", "", "", "c1", nil)
			e.writes(ctx, cfg, "other", spec.Write{Channel: "w", Value: "kept"})
			want := e.get(ctx, "t", "", "c1").PendingWrites
			ok := []spec.Write{{Channel: "w", Value: 1}, {Channel: spec.InterruptChannel, Value: "i"}, {Channel: "v", Value: "x"}}
			selfMap := map[string]any{}
			selfMap["self"] = selfMap
			for _, bad := range []struct {
				what string
				w    spec.Write
			}{
				{"a channel value", spec.Write{Channel: "bad", Value: make(chan int)}},
				{"a function", spec.Write{Channel: spec.ErrorChannel, Value: func() {}}},
				{"a self-containing map", spec.Write{Channel: "bad", Value: selfMap}},
				{"a value nested too deeply", spec.Write{Channel: "bad", Value: nested(spec.MaxValueDepth + 1)}},
				{"a channel name with a NUL byte", spec.Write{Channel: "b\x00d", Value: 1}},
				{"a channel name that is not UTF-8", spec.Write{Channel: "\xff", Value: 1}},
			} {
				for _, at := range []int{0, 1, len(ok)} {
					ws := slices.Insert(slices.Clone(ok), at, bad.w)
					for _, task := range []string{"task", "other"} {
						// Which error is VALUE-4's, VALUE-9's, VALUE-10's and
						// ERR-8's matter; this rule's is that nothing stays.
						Expect(e.s.PutWrites(ctx, cfg, ws, task, taskPath)).NotTo(Succeed(), "%s at index %d", bad.what, at)
						got := e.get(ctx, "t", "", "c1").PendingWrites
						if d := diffOf(sortWrites(got), sortWrites(want)); d != "" {
							g.Fail(fmt.Sprintf("a PutWrites call of task %q with %s at index %d failed but stored some of its writes (-want +got):\n%s", task, bad.what, at, d))
						}
					}
				}
			}
		})
	})

	g.Describe("Goroutines of List", func() {
		check("[CTX-7] leaves no goroutine running after a List stopped early, cancelled or failed", lErrors, func(ctx context.Context) {
			for i := range 12 {
				e.put(ctx, "t", []string{"", "sub:1"}[i%2], "", fmt.Sprintf("c%02d", i), md("step", i))
			}
			// Warm up: the saver's pools and caches may start goroutines of
			// their own on first use; those are not the List's. What List
			// yields is other rules' matter here.
			for _, limit := range []int{0, 3} {
				_ = listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", AllNamespaces: true, Limit: limit})
			}
			leakCheck("breaking out of List after its first result", func() {
				for range 20 {
					for range e.s.List(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true}) {
						break
					}
				}
			})
			leakCheck("cancelling the context of a List in the middle of its iteration", func() {
				for range 20 {
					lctx, cancel := context.WithCancel(ctx)
					n := 0
					for _, err := range e.s.List(lctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true}) {
						if err != nil {
							break
						}
						if n++; n == 2 {
							cancel()
						}
					}
					cancel()
				}
			})
			leakCheck("a List that fails", func() {
				for range 20 {
					_ = listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", Filter: spec.Metadata{"f": make(chan int)}})
				}
			})
		})
	})
}
