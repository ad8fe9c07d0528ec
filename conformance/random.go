package conformance

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// opKind is the kind of one operation of a random sequence.
type opKind int

const (
	opPut opKind = iota
	opWrites
	opGet
	opList
	opDelete
	opCopy
	opRuns
	opPrune
)

// op is one operation of a random sequence. Ops are self-contained (no
// references to earlier results), so any subsequence can be replayed.
type op struct {
	kind     opKind
	cfg      spec.Config
	cp       spec.Checkpoint
	md       spec.Metadata
	nv       spec.Versions
	writes   []spec.Write
	task     string
	opts     spec.ListOptions
	thread   string // DeleteThread; CopyThread source
	dst      string
	runs     []string
	threads  []string
	strategy spec.PruneStrategy
	// want, when set, marks an invalid op: the call must fail with an
	// error matching want and change nothing.
	want error
}

// String renders the op as Go code against a saver s.
func (o op) String() string {
	if o.want != nil {
		return o.call() + " // must fail: " + o.want.Error()
	}
	return o.call()
}

func (o op) call() string {
	switch o.kind {
	case opPut:
		return fmt.Sprintf("s.Put(ctx, %#v, spec.Checkpoint{V: %d, ID: %q, TS: %q, ChannelValues: %#v, ChannelVersions: %#v}, %#v, %#v)",
			o.cfg, o.cp.V, o.cp.ID, o.cp.TS, o.cp.ChannelValues, o.cp.ChannelVersions, o.md, o.nv)
	case opWrites:
		return fmt.Sprintf("s.PutWrites(ctx, %#v, %#v, %q, %q)", o.cfg, o.writes, o.task, taskPath)
	case opGet:
		return fmt.Sprintf("s.GetTuple(ctx, %#v)", o.cfg)
	case opList:
		return fmt.Sprintf("s.List(ctx, %#v)", o.opts)
	case opDelete:
		return fmt.Sprintf("s.DeleteThread(ctx, %q)", o.thread)
	case opCopy:
		return fmt.Sprintf("s.(spec.ThreadCopier).CopyThread(ctx, %q, %q)", o.thread, o.dst)
	case opRuns:
		return fmt.Sprintf("s.(spec.RunDeleter).DeleteForRuns(ctx, %#v)", o.runs)
	case opPrune:
		return fmt.Sprintf("s.(spec.Pruner).Prune(ctx, %#v, spec.%s)", o.threads, o.strategy)
	}
	return "?"
}

// Pools of adversarial names the generator draws from.
var (
	rThreads  = []string{"t", "t|1", "t:2%", "ü_'\""}
	rNS       = []string{"", "a:1", "a:1|b:2", "%_\\"}
	rIDs      = []string{"1", "10", "2", "9", "a|b", "é", "%_"}
	rChannels = []string{"x", "y", "z"}
	rWriteChs = []string{"c1", "c2", spec.ErrorChannel, spec.InterruptChannel, spec.ResumeChannel}
	rTasks    = []string{"t1", "t2", "a|b:%"}
	rRuns     = []string{"r1", "r2", "r|%"}
	rStrings  = []string{"", "plain", "|:%_'\"\\", "ü日本", "a\x00b", "NULL"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// randValue returns a small random plain value.
func randValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(10); {
	case n == 0:
		return nil
	case n == 1:
		return r.IntN(2) == 0
	case n == 2:
		return int64(r.IntN(5)) - 2
	case n == 3:
		return pick(r, []float64{0.5, -0, 1e300, 2})
	case n == 4:
		return []byte(pick(r, rStrings))
	case n == 5 && depth < 2:
		l := make([]any, r.IntN(3))
		for i := range l {
			l[i] = randValue(r, depth+1)
		}
		return l
	case n == 6 && depth < 2:
		m := map[string]any{}
		for range r.IntN(3) {
			m[pick(r, rStrings)] = randValue(r, depth+1)
		}
		return m
	}
	return pick(r, rStrings)
}

// randMetadata returns metadata in the JSON subset, with keys the filters
// of randList use. It holds no NULs and no dotted keys, which some
// backends reject: the specs of VALUE-7, LIST-FILTER-2 and LIST-FILTER-9
// check those.
func randMetadata(r *rand.Rand) spec.Metadata {
	m := spec.Metadata{"source": pick(r, []string{"input", "loop", "update"}), "step": r.IntN(3)}
	if r.IntN(2) == 0 {
		m["run_id"] = pick(r, rRuns)
	}
	if r.IntN(3) == 0 {
		m["kd"] = pick(r, []any{true, 1, 1.0, nil, "1"})
	}
	if r.IntN(4) == 0 {
		m["nested"] = map[string]any{"a": pick(r, []any{int64(1), "x"}), "l": []any{"p", int64(r.IntN(2))}}
	}
	return m
}

// genState tracks what the generator needs beyond the model: state the
// contract leaves unspecified must never be observed again. That is values
// left over by DeleteForRuns or Prune and referenced by no checkpoint, and
// writes stored for a checkpoint that does not exist when its thread is
// pruned or copied. Version numbers never repeat.
type genState struct {
	m               *model
	uncertain       map[mval]bool
	uncertainWrites map[mkey]bool
	version         int
}

// newGenState returns the state of an empty saver; snapshots selects the
// model of the WholeSnapshots variant.
func newGenState(snapshots bool) *genState {
	return &genState{m: newModel(snapshots), uncertain: map[mval]bool{}, uncertainWrites: map[mkey]bool{}}
}

// sortedKeys returns the model's checkpoint keys in a fixed order.
func (s *genState) sortedKeys() []mkey {
	keys := make([]mkey, 0, len(s.m.cps))
	for k := range s.m.cps {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b mkey) int {
		return cmp.Or(cmp.Compare(a.thread, b.thread), cmp.Compare(a.ns, b.ns), cmp.Compare(a.id, b.id))
	})
	return keys
}

// valid reports whether o may run in the current state: reads of
// unspecified state and copies into non-empty threads are never generated.
func (s *genState) valid(o op) bool {
	if o.want != nil {
		return true // changes nothing
	}
	switch o.kind {
	case opPut:
		if s.uncertainWrites[mkey{o.cfg.ThreadID, o.cfg.Namespace, o.cp.ID}] {
			return false
		}
		for ch, ver := range o.cp.ChannelVersions {
			if _, isNew := o.nv[ch]; !isNew && s.uncertain[mval{o.cfg.ThreadID, o.cfg.Namespace, ch, ver}] {
				return false
			}
		}
	case opWrites:
		return !s.uncertainWrites[mkey{o.cfg.ThreadID, o.cfg.Namespace, o.cfg.CheckpointID}]
	case opCopy:
		if o.thread == o.dst {
			return false
		}
		for k := range s.m.cps {
			if k.thread == o.dst {
				return false
			}
		}
		for k := range s.m.values {
			if k.thread == o.dst {
				return false
			}
		}
		// Writes stored for checkpoints dst does not have also make it
		// non-empty: whether a copy keeps or replaces them is unspecified.
		for k := range s.m.writes {
			if k.thread == o.dst {
				return false
			}
		}
		for k := range s.uncertain {
			if k.thread == o.dst {
				return false
			}
		}
		for k := range s.uncertainWrites {
			if k.thread == o.dst {
				return false
			}
		}
	}
	return true
}

// apply runs o on the model and updates the uncertainty bookkeeping.
// Invalid ops change nothing.
func (s *genState) apply(o op) {
	if o.want != nil {
		return
	}
	m := s.m
	switch o.kind {
	case opPut:
		m.put(o.cfg, o.cp, o.md, o.nv)
		for ch, ver := range o.nv {
			delete(s.uncertain, mval{o.cfg.ThreadID, o.cfg.Namespace, ch, ver})
		}
	case opWrites:
		m.putWrites(o.cfg, o.writes, o.task)
	case opDelete:
		m.deleteThread(o.thread)
		s.forgetThread(o.thread)
	case opCopy:
		for k := range s.orphanWrites(o.thread) {
			s.uncertainWrites[mkey{o.dst, k.ns, k.id}] = true
		}
		for k := range s.uncertainWrites {
			if k.thread == o.thread {
				s.uncertainWrites[mkey{o.dst, k.ns, k.id}] = true
			}
		}
		m.copyThread(o.thread, o.dst)
		for k := range s.uncertain {
			if k.thread == o.thread {
				k.thread = o.dst
				s.uncertain[k] = true
			}
		}
	case opRuns:
		m.deleteForRuns(o.runs)
		s.markUnreferenced(nil)
	case opPrune:
		m.prune(o.threads, o.strategy)
		if o.strategy == spec.DeleteAll {
			for _, th := range o.threads {
				s.forgetThread(th)
			}
		} else {
			s.markUnreferenced(o.threads)
			for _, th := range o.threads {
				for k := range s.orphanWrites(th) {
					s.uncertainWrites[k] = true
					delete(m.writes, k)
				}
			}
		}
	}
}

// orphanWrites returns the keys, in thread th, of writes stored for a
// checkpoint that does not exist.
func (s *genState) orphanWrites(th string) map[mkey]bool {
	out := map[mkey]bool{}
	for k := range s.m.writes {
		if k.thread == th && s.m.cps[k] == nil {
			out[k] = true
		}
	}
	return out
}

func (s *genState) forgetThread(th string) {
	for k := range s.uncertain {
		if k.thread == th {
			delete(s.uncertain, k)
		}
	}
	for k := range s.uncertainWrites {
		if k.thread == th {
			delete(s.uncertainWrites, k)
		}
	}
}

// markUnreferenced marks as uncertain every stored value, in the given
// threads (all when nil), that no remaining checkpoint references.
func (s *genState) markUnreferenced(threads []string) {
	referenced := map[mval]bool{}
	for k, c := range s.m.cps {
		for ch, ver := range c.cp.ChannelVersions {
			referenced[mval{k.thread, k.ns, ch, ver}] = true
		}
	}
	for k := range s.m.values {
		if (threads == nil || slices.Contains(threads, k.thread)) && !referenced[k] {
			s.uncertain[k] = true
			delete(s.m.values, k)
		}
	}
}

// caps says which optional capabilities a generated sequence may use.
type caps struct{ copy, runs, prune, listThreads bool }

// genOp draws one valid op.
func (s *genState) genOp(r *rand.Rand, c caps) op {
	for {
		o := s.drawOp(r, c)
		if s.valid(o) {
			return o
		}
	}
}

func (s *genState) drawOp(r *rand.Rand, c caps) op {
	th, ns := pick(r, rThreads), pick(r, rNS)
	switch n := r.IntN(100); {
	case n < 35:
		return s.drawPut(r, th, ns)
	case n < 55:
		keys := s.sortedKeys()
		var k mkey
		if len(keys) == 0 || r.IntN(4) == 0 {
			k = mkey{th, ns, pick(r, rIDs)} // may not exist yet (WRITES-7)
		} else {
			k = pick(r, keys)
		}
		ws := make([]spec.Write, 1+r.IntN(3))
		for i := range ws {
			ws[i] = spec.Write{Channel: pick(r, rWriteChs), Value: randValue(r, 0)}
		}
		return op{kind: opWrites, cfg: spec.Config{ThreadID: k.thread, Namespace: k.ns, CheckpointID: k.id}, writes: ws, task: pick(r, rTasks)}
	case n < 61:
		return s.drawInvalid(r, th, ns)
	case n < 68:
		id := ""
		if r.IntN(2) == 0 {
			id = pick(r, rIDs)
		}
		return op{kind: opGet, cfg: spec.Config{ThreadID: th, Namespace: ns, CheckpointID: id}}
	case n < 85:
		return op{kind: opList, opts: randList(r, c.listThreads)}
	case n < 89:
		return op{kind: opDelete, thread: th}
	case n < 93 && c.copy:
		return op{kind: opCopy, thread: th, dst: pick(r, rThreads)}
	case n < 96 && c.runs:
		return op{kind: opRuns, runs: []string{pick(r, rRuns)}}
	case n < 100 && c.prune:
		return op{kind: opPrune, threads: []string{th}, strategy: spec.PruneStrategy(r.IntN(4) / 3)}
	}
	return op{kind: opList, opts: randList(r, c.listThreads)}
}

// drawInvalid returns an op with invalid input, which must fail with the
// right sentinel error and store nothing (ERR-1, ERR-2, ERR-3, ERR-4,
// VALUE-4, VALUE-5).
func (s *genState) drawInvalid(r *rand.Rand, th, ns string) op {
	switch r.IntN(8) {
	case 0:
		o := s.drawPut(r, th, ns)
		o.cfg.ThreadID, o.want = "", spec.ErrInvalidConfig
		return o
	case 1:
		o := s.drawPut(r, th, ns)
		o.cp.ID, o.want = "", spec.ErrInvalidConfig
		return o
	case 2:
		o := s.drawPut(r, th, ns)
		s.version++
		ver := spec.Version(fmt.Sprint(s.version))
		o.cp.ChannelValues["bad"], o.cp.ChannelVersions["bad"], o.nv["bad"] = struct{ X int }{1}, ver, ver
		o.want = spec.ErrUnsupportedValue
		return o
	case 3:
		o := s.drawPut(r, th, ns)
		o.md["bad"], o.want = []any{"ok", math.Inf(1)}, spec.ErrUnsupportedValue
		return o
	case 4:
		return op{kind: opWrites, cfg: spec.Config{ThreadID: th, Namespace: ns}, writes: []spec.Write{{Channel: "c1", Value: 1}}, task: pick(r, rTasks), want: spec.ErrInvalidConfig}
	case 5:
		ws := []spec.Write{{Channel: "c1", Value: 1}, {Channel: spec.ErrorChannel, Value: "e"}, {Channel: "c2", Value: map[string]any{"f": func() {}}}}
		return op{kind: opWrites, cfg: spec.Config{ThreadID: th, Namespace: ns, CheckpointID: pick(r, rIDs)}, writes: ws, task: pick(r, rTasks), want: spec.ErrUnsupportedValue}
	case 6:
		o := op{kind: opList, opts: randList(r, false), want: spec.ErrInvalidArgument}
		o.opts.Limit = -1 - r.IntN(3)
		return o
	}
	return op{kind: opGet, cfg: spec.Config{Namespace: ns, CheckpointID: pick(r, rIDs)}, want: spec.ErrInvalidConfig}
}

func (s *genState) drawPut(r *rand.Rand, th, ns string) op {
	parent := ""
	if r.IntN(2) == 0 {
		parent = pick(r, rIDs)
	}
	vals, vers, nv := map[string]any{}, spec.Versions{}, spec.Versions{}
	for _, ch := range rChannels {
		switch r.IntN(4) {
		case 0: // absent
		case 1: // new version with a value
			s.version++
			ver := spec.Version(fmt.Sprint(s.version))
			vers[ch], nv[ch] = ver, ver
			vals[ch] = randValue(r, 0)
		case 2: // new version without a value (cleared)
			s.version++
			ver := spec.Version(fmt.Sprint(s.version))
			vers[ch], nv[ch] = ver, ver
		case 3: // an existing version, or one never stored
			vers[ch] = spec.Version(fmt.Sprint(r.IntN(s.version + 2)))
		}
	}
	cp := cpOf(pick(r, rIDs), vals, vers)
	// Today's format version and later ones, without drawing from r: a
	// saver that drops V diverges. Not earlier ones: LangGraph's savers
	// migrate a checkpoint of format version 1 to 3 stored with a parent
	// (its pending sends move from the parent's writes into
	// "__pregel_tasks"), which PUT-10's focused spec leaves out too.
	cp.V = 4 + s.version%3
	return op{kind: opPut, cfg: spec.Config{ThreadID: th, Namespace: ns, CheckpointID: parent}, cp: cp, md: randMetadata(r), nv: nv}
}

// randList returns random, valid list options; an empty thread ID only
// when the saver lists across threads.
func randList(r *rand.Rand, listThreads bool) spec.ListOptions {
	o := spec.ListOptions{}
	if r.IntN(3) > 0 || !listThreads {
		o.ThreadID = pick(r, rThreads)
	}
	if r.IntN(3) == 0 {
		o.AllNamespaces = true
	} else {
		o.Namespace = pick(r, rNS)
	}
	if r.IntN(6) == 0 {
		o.CheckpointID = pick(r, rIDs)
	}
	if r.IntN(3) == 0 {
		o.Before = pick(r, rIDs)
	}
	if r.IntN(3) == 0 {
		o.Limit = 1 + r.IntN(3)
	}
	// Plain filter values: nil and nested values are LIST-FILTER-6, -7 and
	// -8's matter, where LangGraph's savers disagree.
	switch r.IntN(6) {
	case 0:
		o.Filter = spec.Metadata{"source": pick(r, []string{"input", "loop", "update", "fork"})}
	case 1:
		o.Filter = spec.Metadata{"kd": pick(r, []any{true, 1, 1.0, "1"})}
	case 2:
		o.Filter = spec.Metadata{"run_id": pick(r, rRuns), "step": r.IntN(3)}
	}
	return o
}

// genSequence draws a sequence of n valid ops from seed.
func genSequence(seed uint64, n int, c caps) []op {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := newGenState(false)
	ops := make([]op, n)
	for i := range ops {
		ops[i] = s.genOp(r, c)
		s.apply(ops[i])
	}
	return ops
}

// validSequence reports whether every op of ops is valid where it stands,
// which a shrunk sequence must stay.
func validSequence(ops []op) bool {
	s := newGenState(false)
	for _, o := range ops {
		if !s.valid(o) {
			return false
		}
		s.apply(o)
	}
	return true
}

// reproduction renders ops as a Go snippet.
func reproduction(ops []op) string {
	var b strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&b, "\t/* %2d */ %s\n", i, o)
	}
	return b.String()
}
