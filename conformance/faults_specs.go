package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/conformance/faultproxy"
	"github.com/checkpointkit/checkpointkit/spec"
)

func init() { extraGroups = append(extraGroups, faultSpecs) }

// lFaults labels the specs of the optional faults capability.
var lFaults = g.Label("faults")

// Bounds of the faults specs. A call cut by a fault must end within
// faultCallTimeout (FAULT-2); a call made while the proxy is down gets
// downCallTimeout, since a driver may wait for the server until its
// deadline; reads that check the outcome get faultReadTimeout.
const (
	faultCallTimeout = 20 * time.Second
	downCallTimeout  = 2 * time.Second
	faultReadTimeout = 20 * time.Second
	// faultSlack is how long past its deadline a call may take to return.
	faultSlack = 2 * time.Second
)

// faultRig is a saver whose connections go through a fault proxy, with
// the counts of what the proxy did to it.
type faultRig struct {
	p      *faultproxy.Proxy
	fe     *env // the proxied saver, for the fixture helpers
	counts FaultCounts
}

// newFaultRig starts a proxy in front of the harness's server and a saver
// through it, or reports the capability as not supported.
func (e *env) newFaultRig(ctx context.Context) *faultRig {
	g.GinkgoHelper()
	fh := e.h.Faults
	if fh == nil || fh.New == nil {
		notSupported("the harness routes no connections through the suite's fault proxy (Harness.Faults is nil)")
	}
	p, err := faultproxy.Start(fh.Addr)
	Expect(err).NotTo(HaveOccurred(), "starting the fault proxy")
	g.DeferCleanup(p.Close)
	s, cleanup, err := fh.New(ctx, p.Addr())
	Expect(err).NotTo(HaveOccurred(), "FaultHarness.New")
	Expect(s).NotTo(BeNil(), "FaultHarness.New returned a nil saver")
	if cleanup != nil {
		g.DeferCleanup(cleanup)
	}
	r := &faultRig{p: p, fe: &env{h: e.h, s: s}}
	g.DeferCleanup(r.record)
	return r
}

// record adds the rig's counts to the spec's report and log.
func (r *faultRig) record() {
	r.counts.Injected += r.p.Stats().Faults // plus the real restarts counted already
	g.AddReportEntry(faultEntry, r.counts)
	fmt.Fprintf(g.GinkgoWriter, "faults: %s\n", r.counts)
}

// faultOp is one saver call the specs cut.
type faultOp struct {
	name string
	// need skips the spec as not supported when the saver lacks the call.
	need func(e *env)
	// call makes the call on thread th.
	call func(ctx context.Context, e *env, th string) error
	// threads lists the threads the call may change.
	threads func(th string) []string
}

// copySuffix names the destination thread of the CopyThread cut.
const copySuffix = "~copy"

// faultOps are the calls the sweep cuts, each on a thread holding
// faultFixture.
var faultOps = []faultOp{
	{name: "Put", call: func(ctx context.Context, e *env, th string) error {
		vals := map[string]any{"a": bigValue("a"), "b": map[string]any{"n": int64(3), "list": []any{"x", 1.5, true}}, "c": bigValue("c")}
		vers := spec.Versions{"a": "3", "b": "3", "c": "3", "k": "1"}
		_, err := e.s.Put(ctx, spec.Config{ThreadID: th, CheckpointID: "2"}, cpOf("3", vals, vers),
			md("step", 3, "run_id", "run-"+th+"-3"), spec.Versions{"a": "3", "b": "3", "c": "3"})
		return err
	}},
	{name: "PutWrites", call: func(ctx context.Context, e *env, th string) error {
		return e.s.PutWrites(ctx, spec.Config{ThreadID: th, CheckpointID: "2"}, []spec.Write{
			{Channel: "w1", Value: bigValue("w1")}, {Channel: "w2", Value: int64(2)},
			{Channel: "w3", Value: bigValue("w3")}, {Channel: spec.ErrorChannel, Value: "boom"},
		}, "task-cut", taskPath)
	}},
	{name: "DeleteThread", call: func(ctx context.Context, e *env, th string) error {
		return e.s.DeleteThread(ctx, th)
	}},
	{name: "Prune", need: func(e *env) { e.pruner() }, call: func(ctx context.Context, e *env, th string) error {
		return e.pruner().Prune(ctx, []string{th}, spec.KeepLatest)
	}},
	{name: "CopyThread", need: func(e *env) { e.copier() }, call: func(ctx context.Context, e *env, th string) error {
		return e.copier().CopyThread(ctx, th, th+copySuffix)
	}, threads: func(th string) []string { return []string{th, th + copySuffix} }},
	{name: "DeleteForRuns", need: func(e *env) { e.runDeleter() }, call: func(ctx context.Context, e *env, th string) error {
		return e.runDeleter().DeleteForRuns(ctx, []string{"run-" + th + "-1", "run-" + th + "-2"})
	}},
	{name: "List", call: func(ctx context.Context, e *env, th string) error {
		got, err := collect(e.s.List(ctx, spec.ListOptions{ThreadID: th, AllNamespaces: true}))
		if err == nil && len(got) == 0 {
			return errors.New("List of a stored thread yielded nothing and no error")
		}
		return err
	}},
}

// bigValue is a channel or write value of a few kilobytes, so that cuts
// land inside values too.
func bigValue(tag string) string { return strings.Repeat(tag+"-0123456789abcdef|", 128) }

// faultFixture stores, in thread th, checkpoints 1 and 2 of the root
// namespace and 1 of "sub:1", with values, metadata holding a run ID
// unique to the thread, and pending writes.
func (e *env) faultFixture(ctx context.Context, th string) {
	g.GinkgoHelper()
	for _, ns := range []string{"", "sub:1"} {
		parent := ""
		for i, id := range []string{"1", "2"} {
			if ns != "" && i > 0 {
				break
			}
			nv := spec.Versions{"a": spec.Version(id)}
			if i == 0 {
				nv["k"] = "1"
			}
			cfg := e.putCP(ctx, spec.Config{ThreadID: th, Namespace: ns, CheckpointID: parent},
				cpOf(id, map[string]any{"a": bigValue("a" + id), "k": "kept"}, spec.Versions{"a": spec.Version(id), "k": "1"}),
				md("step", i, "run_id", "run-"+th+"-"+id), nv)
			e.writes(ctx, cfg, "task", spec.Write{Channel: "w", Value: id}, spec.Write{Channel: spec.ErrorChannel, Value: "e" + id})
			parent = id
		}
	}
}

// canonical returns copies of ts as they would be in thread "T": thread
// IDs and the run IDs of faultFixture no longer name th, so that states of
// different threads compare.
func canonical(ts []*spec.Tuple, th string) []*spec.Tuple {
	out := retarget(ts, "T")
	for i, t := range out {
		if rid, ok := t.Metadata["run_id"].(string); ok {
			m := spec.Metadata{}
			for k, v := range t.Metadata {
				m[k] = v
			}
			m["run_id"] = strings.ReplaceAll(rid, th, "T")
			c := *t
			c.Metadata = m
			out[i] = &c
		}
	}
	return out
}

// threadsOf returns the threads op may change when called on th.
func (op faultOp) threadsOf(th string) []string {
	if op.threads != nil {
		return op.threads(th)
	}
	return []string{th}
}

// state reads the canonical state of op's threads for thread th, within
// faultReadTimeout: FAULT-3 wants these reads, the first calls after a
// fault, to succeed.
func (r *faultRig) state(ctx context.Context, op faultOp, th string) [][]*spec.Tuple {
	g.GinkgoHelper()
	rctx, cancel := context.WithTimeout(ctx, faultReadTimeout)
	defer cancel()
	var out [][]*spec.Tuple
	for _, t := range op.threadsOf(th) {
		ts, err := collect(r.fe.s.List(rctx, spec.ListOptions{ThreadID: t, AllNamespaces: true}))
		Expect(err).NotTo(HaveOccurred(), "[FAULT-3] List of thread %q after the fault (the network is back)", t)
		out = append(out, canonical(sortTies(ts), th))
	}
	return out
}

// sameState reports whether two canonical states are equal.
func sameState(a, b [][]*spec.Tuple) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if compareLists(a[i], b[i]) != "" {
			return false
		}
	}
	return true
}

// describeState shows how got differs from before and from after.
func describeState(got, before, after [][]*spec.Tuple) string {
	var b strings.Builder
	for i := range got {
		if i < len(before) {
			fmt.Fprintf(&b, "\n  thread %d against the state before the call: %s", i, compareLists(got[i], before[i]))
		}
		if i < len(after) {
			fmt.Fprintf(&b, "\n  thread %d against the state after a successful call: %s", i, compareLists(got[i], after[i]))
		}
	}
	return b.String()
}

// callOutcome is what one call under a fault did.
type callOutcome struct {
	err      error
	panicked any
	took     time.Duration
}

// callBounded runs call with a deadline of d, recovering a panic.
func callBounded(ctx context.Context, d time.Duration, call func(ctx context.Context) error) (out callOutcome) {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	defer func() {
		out.took = time.Since(start)
		if p := recover(); p != nil {
			out.panicked = p
		}
	}()
	out.err = call(cctx)
	return out
}

// expectFaultError checks FAULT-2 for a call that failed under a fault:
// no panic, an end within its deadline, and an error that is
// spec.ErrUnavailable, or the context's error when the deadline passed.
func expectFaultError(o callOutcome, deadline time.Duration, what string) {
	g.GinkgoHelper()
	if o.panicked != nil {
		g.Fail(fmt.Sprintf("[FAULT-2] %s panicked: %v", what, o.panicked))
	}
	Expect(o.took).To(BeNumerically("<=", deadline+faultSlack), "[FAULT-2] %s returned %v after its %v deadline", what, o.took-deadline, deadline)
	if o.err == nil {
		return
	}
	if errors.Is(o.err, spec.ErrUnavailable) {
		return
	}
	if o.took >= deadline && errors.Is(o.err, context.DeadlineExceeded) {
		return
	}
	g.Fail(fmt.Sprintf("[FAULT-2] %s failed with %q (%T), which is not spec.ErrUnavailable", what, o.err, o.err))
}

// cutPoint is where a sweep cuts: after n bytes in direction dir.
type cutPoint struct {
	dir faultproxy.Direction
	n   int64
}

// cutPoints spreads a handful of cuts over a call that moved bytes:
// before its first byte, half-way, and just before its last byte, each
// way. Upstream, the last point sends all of the request but its last
// byte; downstream, the first point delivers the whole request and cuts
// before any of the answer, the case where the server may have committed
// a call its client saw fail.
func cutPoints(bytes faultproxy.Counts) []cutPoint {
	var out []cutPoint
	for _, d := range []faultproxy.Direction{faultproxy.Upstream, faultproxy.Downstream} {
		b := bytes.Of(d)
		if b <= 0 {
			continue
		}
		ns := []int64{0, b / 2, b - 1}
		slices.Sort(ns)
		for _, n := range slices.Compact(ns) {
			out = append(out, cutPoint{dir: d, n: n})
		}
	}
	return out
}

// sweep cuts op at points spread over its bytes, each on a thread of its
// own holding faultFixture, and checks FAULT-1, FAULT-2 and FAULT-3.
func (r *faultRig) sweep(ctx context.Context, op faultOp) {
	g.GinkgoHelper()
	// Calibrate: the same call, uncut, on a thread like the others.
	r.fe.faultFixture(ctx, "cal")
	before := r.state(ctx, op, "cal") // also leaves a live connection
	c0 := r.p.Counts()
	Expect(op.call(ctx, r.fe, "cal")).To(Succeed(), "%s without a fault", op.name)
	bytes := r.p.Counts().Sub(c0)
	after := r.state(ctx, op, "cal")
	if op.name != "List" {
		Expect(sameState(before, after)).To(BeFalse(), "%s changed nothing; the sweep would prove nothing", op.name)
	}
	points := cutPoints(bytes)
	fmt.Fprintf(g.GinkgoWriter, "%s moves %d bytes up, %d down; cutting at %v\n", op.name, bytes.Up, bytes.Down, points)
	Expect(points).NotTo(BeEmpty(), "%s moved no bytes through the proxy: are the saver's connections routed through FaultHarness.New's address?", op.name)

	for i, pt := range points {
		th := fmt.Sprintf("f%02d", i)
		r.fe.faultFixture(ctx, th)
		Expect(r.state(ctx, op, th)).To(Satisfy(func(s [][]*spec.Tuple) bool { return sameState(s, before) }),
			"the fixture of thread %q differs from the calibration's", th)
		r.p.CutAfter(pt.dir, pt.n)
		o := callBounded(ctx, faultCallTimeout, func(cctx context.Context) error { return op.call(cctx, r.fe, th) })
		fired := r.p.Disarm()
		r.p.Up()
		what := fmt.Sprintf("%s cut after %d bytes %s", op.name, pt.n, pt.dir)
		if fired {
			r.counts.Cut++
			if o.err != nil {
				r.counts.Failed++
			} else {
				r.counts.Recovered++
			}
		}
		expectFaultError(o, faultCallTimeout, what)
		if !fired {
			Expect(o.err).NotTo(HaveOccurred(), "%s: the cut did not fire, yet the call failed", what)
		}
		got := r.state(ctx, op, th)
		r.counts.Checked++
		switch {
		case o.err == nil && op.name != "List":
			if !sameState(got, after) {
				r.counts.Partial++
				g.Fail(fmt.Sprintf("[FAULT-1] %s succeeded, but the state is not the state after the call:%s", what, describeState(got, before, after)))
			}
		case !sameState(got, before) && !sameState(got, after):
			r.counts.Partial++
			g.Fail(fmt.Sprintf("[FAULT-1] %s (error: %v) left a partial state:%s", what, o.err, describeState(got, before, after)))
		}
	}
}

// faultSpecs covers network faults (FAULT-*): the optional faults
// capability, for harnesses with a FaultHarness.
func faultSpecs(e *env) {
	g.Describe("network faults", func() {
		for _, op := range faultOps {
			check(fmt.Sprintf("[FAULT-1][FAULT-2][FAULT-3] a connection cut at points across %s leaves all or nothing, fails with ErrUnavailable, and the next call succeeds", op.name), lFaults, func(ctx context.Context) {
				if op.need != nil {
					op.need(e)
				}
				r := e.newFaultRig(ctx)
				r.sweep(ctx, op)
			})
		}

		check("[FAULT-2][FAULT-3] while the server is unreachable calls fail with ErrUnavailable; once it is back the next call succeeds", lFaults, func(ctx context.Context) {
			r := e.newFaultRig(ctx)
			r.fe.faultFixture(ctx, "t")
			r.p.Down()
			for _, op := range faultOps {
				if op.name != "Put" && op.name != "PutWrites" && op.name != "List" && op.name != "DeleteThread" {
					continue
				}
				o := callBounded(ctx, downCallTimeout, func(cctx context.Context) error { return op.call(cctx, r.fe, "t") })
				r.counts.Cut++
				Expect(o.err).To(HaveOccurred(), "[FAULT-2] %s succeeded while the server was unreachable", op.name)
				r.counts.Failed++
				expectFaultError(o, downCallTimeout, op.name+" while the server is unreachable")
			}
			r.p.Up()
			cctx, cancel := context.WithTimeout(ctx, faultReadTimeout)
			defer cancel()
			_, err := r.fe.s.Put(cctx, spec.Config{ThreadID: "t2"}, cpOf("1", map[string]any{"a": "x"}, spec.Versions{"a": "1"}), nil, spec.Versions{"a": "1"})
			Expect(err).NotTo(HaveOccurred(), "[FAULT-3] the first Put once the server is back")
		})

		check("[FAULT-1][FAULT-3] a restart between calls (every open connection dropped) is invisible to the next call", lFaults, func(ctx context.Context) {
			r := e.newFaultRig(ctx)
			r.restartRun(ctx, func() {
				r.p.Down()
				r.p.Up()
			})
		})

		check("[FAULT-1][FAULT-2][FAULT-3] a real server restart in the middle of a run", lFaults, func(ctx context.Context) {
			if e.h.Faults == nil || e.h.Faults.Restart == nil {
				notSupported("the harness has no FaultHarness.Restart hook to restart its server; the proxy's restarts ran instead")
			}
			r := e.newFaultRig(ctx)
			r.restartRun(ctx, func() {
				rctx, cancel := context.WithTimeout(ctx, 2*faultReadTimeout)
				defer cancel()
				Expect(e.h.Faults.Restart(rctx)).To(Succeed(), "FaultHarness.Restart")
				r.counts.Injected++ // the proxy did not count this one
			})
		})
	})
}

// restartRun writes a run of checkpoints with writes, restarts the
// connection path with restart half-way, and checks that the first call
// afterwards succeeds (FAULT-3) and that the run reads back whole: every
// call that succeeded is there, with all its values and writes
// (FAULT-1).
func (r *faultRig) restartRun(ctx context.Context, restart func()) {
	g.GinkgoHelper()
	const steps = 6
	parent := ""
	for i := range steps {
		if i == steps/2 {
			restart()
		}
		id := fmt.Sprintf("%02d", i)
		o := callBounded(ctx, faultCallTimeout, func(cctx context.Context) error {
			cfg, err := r.fe.s.Put(cctx, spec.Config{ThreadID: "run", CheckpointID: parent},
				cpOf(id, map[string]any{"a": bigValue(id)}, spec.Versions{"a": spec.Version(id)}), md("step", i), spec.Versions{"a": spec.Version(id)})
			if err != nil {
				return err
			}
			return r.fe.s.PutWrites(cctx, cfg, []spec.Write{{Channel: "w", Value: id}, {Channel: "v", Value: bigValue("w" + id)}}, "task", taskPath)
		})
		if o.panicked != nil || o.err != nil {
			expectFaultError(o, faultCallTimeout, "Put and PutWrites after a restart")
			g.Fail(fmt.Sprintf("[FAULT-3] step %d after a restart failed: %v (panic: %v)", i, o.err, o.panicked))
		}
		parent = id
	}
	got := r.fe.list(ctx, spec.ListOptions{ThreadID: "run"})
	r.counts.Checked++
	Expect(got).To(HaveLen(steps), "[FAULT-1] checkpoints of the run after the restart")
	for i, t := range got {
		id := fmt.Sprintf("%02d", steps-1-i)
		if t.Config.CheckpointID != id || !same(t.Checkpoint.ChannelValues["a"], bigValue(id)) || len(t.PendingWrites) != 2 {
			r.counts.Partial++
			g.Fail(fmt.Sprintf("[FAULT-1] checkpoint %q after the restart is not whole: values %d, writes %d", t.Config.CheckpointID, len(t.Checkpoint.ChannelValues), len(t.PendingWrites)))
		}
	}
}
