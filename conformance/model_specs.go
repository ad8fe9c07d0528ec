package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	g "github.com/onsi/ginkgo/v2"

	"github.com/checkpointkit/checkpointkit/spec"
)

// KillMatrixSeed is the seed the kill matrix of package mutants pins, so
// that its verdicts, and the explanations it records, do not change from
// run to run.
const KillMatrixSeed uint64 = 20261122

// seed returns the seed of this run's model-based random sequences:
// -checkpointkit.seed, else CHECKPOINTKIT_SEED, else one drawn at random
// once per process, so that every run, in CI too, replays sequences of its
// own. The first random spec prints it with a command that reproduces the
// run (rerunCommand); a failure names the seed of its sequence.
var seed = sync.OnceValue(func() uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if s := os.Getenv("CHECKPOINTKIT_SEED"); s != "" {
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			return v
		}
	}
	return 1 + rand.Uint64N(1_000_000_000)
})

// seedNote prints the seed of the run once per process.
var seedNote sync.Once

// rerunCommand returns a shell command that reruns this test binary's
// package with the random sequences of seed sd (and the same -run
// pattern).
func rerunCommand(sd uint64) string {
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	run := ""
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		run = " -run " + shellQuote(f.Value.String())
	}
	return fmt.Sprintf("cd %s && CHECKPOINTKIT_SEED=%d go test -count=1%s .", shellQuote(dir), sd, run)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Sizes of the random runs: sequences per spec (fewer under the race
// detector) and operations per sequence.
const (
	randOps       = 40
	maxShrinkRuns = 400
)

// randSequences returns the number of random sequences per spec:
// -checkpointkit.sequences or CHECKPOINTKIT_SEQUENCES when set (for longer
// runs), else 24, or 8 under the race detector.
func randSequences() uint64 {
	if *sequencesFlag > 0 {
		return *sequencesFlag
	}
	if s := os.Getenv("CHECKPOINTKIT_SEQUENCES"); s != "" {
		if v, err := strconv.ParseUint(s, 10, 64); err == nil && v > 0 {
			return v
		}
	}
	if raceEnabled {
		return 8
	}
	return 24
}

// runSequence replays ops against a fresh saver from h and the model,
// comparing every read and, after every write, the whole store. It returns
// the index of the first divergent op and a description, or -1. When the
// contract's model diverges and ops exercise strict rules on which
// LangGraph's savers differ (WRITES-5's batches, PUT-11's re-puts, true
// matching 1 in filters, list(None), whole snapshots), the model adopts
// those behaviours one divergence at a time, and only on evidence: at the
// op where it diverges, the fewest behaviours not yet adopted that carry
// the replay past that op are adopted, and the replay goes on. A behaviour
// the saver never showed is never adopted, so it cannot make the model
// expect what the saver rightly does not do. The focused specs judge the
// differences, this spec the rest.
func runSequence(ctx context.Context, h Harness, ops []op) (int, string) {
	var adopted lgVariant
	at, why := runWith(ctx, h, ops, adopted)
	candidates := lgVariants(ops, h.has(WholeSnapshots))
	for at >= 0 {
		next, nat, nwhy, ok := adoptNext(ctx, h, ops, adopted, candidates, at)
		if !ok {
			break
		}
		adopted, at, why = next, nat, nwhy
	}
	if at >= 0 && adopted.any() {
		why += fmt.Sprintf(" (model following %v)", adopted.behaviours())
	}
	return at, why
}

// adoptNext returns adopted plus the smallest set of candidate behaviours
// not yet adopted that carries the replay of ops past op at, with where the
// replay then diverges (-1 for nowhere); ok is false when no such set
// exists.
func adoptNext(ctx context.Context, h Harness, ops []op, adopted, candidates lgVariant, at int) (lgVariant, int, string, bool) {
	for _, extra := range subsetsOf(without(candidates, adopted)) {
		v := union(adopted, extra)
		if vat, vwhy := runWith(ctx, h, ops, v); vat < 0 || vat > at {
			return v, vat, vwhy, true
		}
	}
	return adopted, at, "", false
}

// lgVariants returns the LangGraph behaviours worth adopting for ops: only
// those ops exercise. snapshots tells that the harness declares whole
// snapshots already.
func lgVariants(ops []op, snapshots bool) lgVariant {
	var v lgVariant
	put := map[mkey]bool{}
	puts := map[[2]string]bool{}
	for _, o := range ops {
		switch {
		case o.want != nil:
		case o.kind == opWrites:
			special := slices.ContainsFunc(o.writes, func(w spec.Write) bool { return spec.IsSpecialChannel(w.Channel) })
			regular := slices.ContainsFunc(o.writes, func(w spec.Write) bool { return !spec.IsSpecialChannel(w.Channel) })
			v.batchRule = v.batchRule || special && regular
		case o.kind == opPut:
			k := mkey{o.cfg.ThreadID, o.cfg.Namespace, o.cp.ID}
			v.firstParent = v.firstParent || put[k]
			// Under whole snapshots a checkpoint reads back the values it
			// was put with, which differs from the contract as soon as two
			// checkpoints of one thread and namespace share a channel.
			v.snapshots = v.snapshots || !snapshots && puts[[2]string{o.cfg.ThreadID, o.cfg.Namespace}]
			puts[[2]string{o.cfg.ThreadID, o.cfg.Namespace}] = true
			put[k] = true
		case o.kind == opList:
			v.listNone = v.listNone || o.opts.ThreadID == "" && (!o.opts.AllNamespaces || o.opts.CheckpointID != "")
			for _, fv := range o.opts.Filter {
				switch fv.(type) {
				case bool, int, int64, float64:
					v.trueIsOne = true
				}
			}
		}
	}
	return v
}

// runWith is runSequence with one model variant.
func runWith(ctx context.Context, h Harness, ops []op, v lgVariant) (int, string) {
	s, cleanup, err := h.New(ctx)
	if err != nil {
		return 0, "Harness.New: " + err.Error()
	}
	if cleanup != nil {
		defer cleanup()
	}
	st := newGenState(h.has(WholeSnapshots) || v.snapshots)
	st.m.lg = v
	for i, o := range ops {
		switch d := step(ctx, s, st, o); d {
		case "":
		case errAcceptedInvalid:
			return -1, ""
		default:
			return i, d
		}
	}
	return -1, ""
}

// step runs one op on the saver and the model and describes any
// divergence, including a panic of the saver.
func step(ctx context.Context, s spec.Saver, st *genState, o op) (diff string) {
	defer func() {
		if r := recover(); r != nil {
			diff = fmt.Sprintf("saver panicked: %v", r)
		}
	}()
	if o.want != nil {
		return stepInvalid(ctx, s, st, o)
	}
	var err error
	switch o.kind {
	case opPut:
		var out spec.Config
		out, err = s.Put(ctx, o.cfg, o.cp, o.md, o.nv)
		if want := (spec.Config{ThreadID: o.cfg.ThreadID, Namespace: o.cfg.Namespace, CheckpointID: o.cp.ID}); err == nil && out != want {
			return fmt.Sprintf("Put returned %+v, want %+v", out, want)
		}
	case opWrites:
		err = s.PutWrites(ctx, o.cfg, o.writes, o.task, taskPath)
	case opGet:
		got, gerr := s.GetTuple(ctx, o.cfg)
		want := st.m.get(o.cfg)
		switch {
		case want == nil && !errors.Is(gerr, spec.ErrNotFound):
			return fmt.Sprintf("GetTuple: got (%v, %v), want ErrNotFound", got != nil, gerr)
		case want != nil && gerr != nil:
			return fmt.Sprintf("GetTuple: unexpected error %v, want %s", gerr, keyString(want.Config))
		case want != nil:
			if d := diffTuple(got, want); d != "" {
				return "GetTuple: " + d
			}
		}
		return ""
	case opList:
		got, lerr := collect(s.List(ctx, o.opts))
		if lerr != nil {
			return "List: unexpected error " + lerr.Error()
		}
		if d := compareListed(got, st.m.listAll(o.opts), o.opts.Limit); d != "" {
			return "List: " + d
		}
		return ""
	case opDelete:
		err = s.DeleteThread(ctx, o.thread)
	case opCopy:
		err = s.(spec.ThreadCopier).CopyThread(ctx, o.thread, o.dst)
	case opRuns:
		err = s.(spec.RunDeleter).DeleteForRuns(ctx, o.runs)
	case opPrune:
		err = s.(spec.Pruner).Prune(ctx, o.threads, o.strategy)
	}
	if err != nil {
		return "unexpected error: " + err.Error()
	}
	st.apply(o)
	if d := compareStore(ctx, s, st.m); d != "" {
		return "store differs from the model after this op: " + d
	}
	return ""
}

// compareStore compares everything the saver holds in the generator's
// threads with the model, listing one thread at a time (so that it needs
// no List across threads) with ties in LIST-ORDER-2's order.
func compareStore(ctx context.Context, s spec.Saver, m *model) string {
	var got, want []*spec.Tuple
	for _, th := range rThreads {
		ts, err := collect(s.List(ctx, spec.ListOptions{ThreadID: th, AllNamespaces: true}))
		if err != nil {
			return fmt.Sprintf("List of thread %q: unexpected error %v", th, err)
		}
		got = append(got, ts...)
		want = append(want, m.list(spec.ListOptions{ThreadID: th, AllNamespaces: true})...)
	}
	// In key order: the order of a listing is the List rules' matter.
	byKey := func(ts []*spec.Tuple) []*spec.Tuple {
		return slices.SortedFunc(slices.Values(ts), func(a, b *spec.Tuple) int { return strings.Compare(keyString(a.Config), keyString(b.Config)) })
	}
	return compareLists(loose(byKey(got)), loose(byKey(want)))
}

// stepInvalid runs an invalid op: it must leave the store unchanged.
func stepInvalid(ctx context.Context, s spec.Saver, st *genState, o op) string {
	var err error
	switch o.kind {
	case opPut:
		_, err = s.Put(ctx, o.cfg, o.cp, o.md, o.nv)
	case opWrites:
		err = s.PutWrites(ctx, o.cfg, o.writes, o.task, taskPath)
	case opGet:
		var t *spec.Tuple
		t, err = s.GetTuple(ctx, o.cfg)
		if err != nil && t != nil {
			return "GetTuple returned a tuple with its error"
		}
	case opList:
		_, err = collect(s.List(ctx, o.opts))
	}
	// Which error, and whether there is one, is the matter of the focused
	// specs of ERR-*, VALUE-4 and VALUE-5 (strict rules). A call that
	// failed must leave what can be read unchanged; after one that was
	// accepted, the model no longer knows what the saver holds.
	if err == nil {
		return errAcceptedInvalid
	}
	if d := compareStore(ctx, s, st.m); d != "" {
		return "a failed call changed the store: " + d
	}
	return ""
}

// errAcceptedInvalid ends a sequence without judging the rest when the
// saver accepts an invalid call.
const errAcceptedInvalid = "(the saver accepted an invalid call; the rest of the sequence is not judged)"

// shrink returns a shorter sequence that still diverges: it greedily
// removes chunks of ops, then simplifies the remaining ops one by one, as
// long as the sequence stays valid and keeps diverging. at is -1 when the
// divergence does not reproduce on a fresh saver.
func shrink(ctx context.Context, h Harness, ops []op) (small []op, at int, why string) {
	at, why = runSequence(ctx, h, ops)
	if at < 0 {
		return ops, -1, "the divergence did not reproduce on a fresh saver (is the saver deterministic?)"
	}
	ops = ops[:at+1]
	runs := 1
	try := func(cand []op) bool {
		if len(cand) == 0 || runs >= maxShrinkRuns || !validSequence(cand) {
			return false
		}
		runs++
		if cat, cwhy := runSequence(ctx, h, cand); cat >= 0 {
			ops, at, why = cand[:cat+1], cat, cwhy
			return true
		}
		return false
	}
	for chunk := len(ops) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(ops); {
			if !try(append(append([]op{}, ops[:i]...), ops[i+chunk:]...)) {
				i++
			}
		}
	}
	for i := 0; i < len(ops); i++ {
		for changed := true; changed && i < len(ops); {
			changed = false
			for _, v := range simpler(ops[i]) {
				cand := slices.Clone(ops)
				cand[i] = v
				if try(cand) {
					changed = true // simplify the new ops[i] further
					break
				}
			}
		}
	}
	return ops, at, why
}

// simpler returns simpler variants of o, each dropping one detail.
// Invalid ops are kept as they are.
func simpler(o op) []op {
	if o.want != nil {
		return nil
	}
	var out []op
	switch o.kind {
	case opPut:
		if len(o.md) > 0 {
			v := o
			v.md = spec.Metadata{}
			out = append(out, v)
		}
		if o.cfg.CheckpointID != "" {
			v := o
			v.cfg.CheckpointID = ""
			out = append(out, v)
		}
		for ch := range o.cp.ChannelVersions {
			v := o
			v.cp.ChannelVersions = maps.Clone(o.cp.ChannelVersions)
			v.cp.ChannelValues = maps.Clone(o.cp.ChannelValues)
			v.nv = maps.Clone(o.nv)
			delete(v.cp.ChannelVersions, ch)
			delete(v.cp.ChannelValues, ch)
			delete(v.nv, ch)
			out = append(out, v)
		}
	case opWrites:
		for j := range o.writes {
			if len(o.writes) > 1 {
				v := o
				v.writes = slices.Delete(slices.Clone(o.writes), j, j+1)
				out = append(out, v)
			}
		}
	case opList:
		for _, f := range []func(*spec.ListOptions){
			func(l *spec.ListOptions) { l.Filter = nil },
			func(l *spec.ListOptions) { l.Before = "" },
			func(l *spec.ListOptions) { l.Limit = 0 },
			func(l *spec.ListOptions) { l.CheckpointID = "" },
		} {
			v := o
			f(&v.opts)
			if !reflect.DeepEqual(v.opts, o.opts) {
				out = append(out, v)
			}
		}
	}
	return out
}

// randomSpec registers one model-based random spec of the given broad
// group over the given capabilities; it lists across threads when the
// saver can.
func randomSpec(e *env, text, group string, labels g.Labels, c caps, need func()) {
	checkBroad(text, group, labels, nil, func(ctx g.SpecContext) {
		if need != nil {
			need()
		}
		c.listThreads, _ = e.canListThreads(ctx)
		base := seed()
		seedNote.Do(func() {
			fmt.Fprintf(os.Stdout, "checkpointkit conformance: random sequences from seed %d; this run again: %s\n", base, rerunCommand(base))
		})
		for n := range randSequences() {
			sd := base + n
			ops := genSequence(sd, randOps, c)
			if at, _ := runSequence(ctx, e.h, ops); at < 0 {
				continue
			}
			small, at, why := shrink(ctx, e.h, ops)
			attributeFailure(opRules(small[at], why)...)
			g.Fail(fmt.Sprintf("saver diverges from the model of the contract (seed %d, sequence %d; rerun with CHECKPOINTKIT_SEED=%d: %s).\n"+
				"Minimal reproduction (%d ops, shrunk from %d), on an empty saver s:\n%s"+
				"op %d diverges: %s", base, n, sd, rerunCommand(sd), len(small), len(ops), reproduction(small), at, why))
		}
	})
}

// modelSpecs registers the model-based random specs.
func modelSpecs(e *env) {
	g.Describe("Model-based random sequences", func() {
		// The base random spec cites every rule its operations exercise, so
		// a harness that skips one of them skips this spec too.
		randomSpec(e, cite([]string{
			"ID-1", "ID-2", "ID-3", "ID-4", "NS-1", "NS-2",
			"PUT-1", "PUT-2", "PUT-3", "PUT-4", "PUT-5", "PUT-6", "PUT-7", "PUT-8", "PUT-9", "PUT-11",
			"VALUE-1", "VALUE-6",
			"WRITES-1", "WRITES-2", "WRITES-3", "WRITES-4", "WRITES-5", "WRITES-6", "WRITES-7", "WRITES-10",
			"GET-1", "GET-2", "GET-3", "GET-4", "GET-5", "GET-6", "GET-7",
			"LIST-SCOPE-1", "LIST-SCOPE-2", "LIST-SCOPE-3", "LIST-SCOPE-4", "LIST-SCOPE-5",
			"LIST-ORDER-1", "LIST-ORDER-3", "LIST-ORDER-4", "LIST-BEFORE-1", "LIST-BEFORE-2", "LIST-BEFORE-3", "LIST-BEFORE-4",
			"LIST-FILTER-1", "LIST-FILTER-3", "LIST-FILTER-4",
			"LIST-LIMIT-1", "LIST-LIMIT-2", "DELETE-1", "DELETE-2", "DELETE-3", "DELETE-4", "DELETE-5",
			"ERR-1", "ERR-2", "ERR-3", "ERR-4", "VALUE-4", "VALUE-5",
		})+" random Put/PutWrites/GetTuple/List/DeleteThread sequences match the model", "model", lModel, caps{}, nil)
		randomSpec(e, "[COPY-1][COPY-2][COPY-5] random sequences with CopyThread match the model", "model copy_thread", lCopy, caps{copy: true}, func() { e.copier() })
		randomSpec(e, "[RUNS-1][RUNS-2] random sequences with DeleteForRuns match the model", "model delete_for_runs", lRuns, caps{runs: true}, func() { e.runDeleter() })
		randomSpec(e, "[PRUNE-1][PRUNE-2][PRUNE-3] random sequences with Prune match the model", "model prune", lPrune, caps{prune: true}, func() { e.pruner() })
	})
}
