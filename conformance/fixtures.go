package conformance

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	gtypes "github.com/onsi/gomega/types"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Label shorthands, one per capability.
var (
	lPut      = g.Label("put")
	lWrites   = g.Label("put_writes")
	lGet      = g.Label("get_tuple")
	lList     = g.Label("list")
	lDelete   = g.Label("delete_thread")
	lCopy     = g.Label("copy_thread")
	lRuns     = g.Label("delete_for_runs")
	lPrune    = g.Label("prune")
	lVersions = g.Label("versions")
	lConc     = g.Label("concurrency")
	lErrors   = g.Label("errors")
	lModel    = g.Label("model")
)

// Adversarial identifiers: thread IDs, namespaces and checkpoint IDs must
// survive byte for byte (ID-2).
var (
	oddThreads = []string{"t|1:%_'\"\\ x", "thread-ü-日本", "%", "_"}
	oddNS      = []string{"", "child:1", "parent:1f2a|child:9b|3", "n%_'\"\\ é"}
)

// fixtureEpoch is the time of the smallest checkpoint ID.
var fixtureEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// tsOf returns the timestamp of a fixture checkpoint: it grows with the ID
// (byte-wise, by the first six bytes, one microsecond per step), so that a
// saver that orders by timestamp sees the order the IDs give.
func tsOf(id string) string {
	var n int64
	for i := range 6 {
		n <<= 8
		if i < len(id) {
			n |= int64(id[i])
		}
	}
	return fixtureEpoch.Add(time.Duration(n) * time.Microsecond).Format("2006-01-02T15:04:05.000000Z07:00")
}

// cpOf builds a checkpoint with the given ID, values and versions, and a
// timestamp consistent with its ID.
func cpOf(id string, values map[string]any, versions spec.Versions) spec.Checkpoint {
	if versions == nil {
		versions = spec.Versions{}
	}
	return spec.Checkpoint{V: 4, ID: id, TS: tsOf(id), ChannelValues: values, ChannelVersions: versions, VersionsSeen: map[string]spec.Versions{}}
}

// put stores a checkpoint with no values and the given metadata, with
// parent as parent ID ("" for none), and fails the spec on error.
func (e *env) put(ctx context.Context, thread, ns, parent, id string, md spec.Metadata) spec.Config {
	g.GinkgoHelper()
	return e.putCP(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: parent}, cpOf(id, nil, nil), md, spec.Versions{})
}

// putCP calls Put and fails the spec on error.
func (e *env) putCP(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) spec.Config {
	g.GinkgoHelper()
	out, err := e.s.Put(ctx, cfg, cp, md, nv)
	Expect(err).NotTo(HaveOccurred(), "Put %+v id %q", cfg, cp.ID)
	return out
}

// putValues stores a checkpoint whose values are all new.
func (e *env) putValues(ctx context.Context, thread, ns, parent, id string, values map[string]any, versions spec.Versions) spec.Config {
	g.GinkgoHelper()
	return e.putCP(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: parent}, cpOf(id, values, versions), nil, versions)
}

// taskPath is the task path the specs pass to PutWrites; only the spec of
// WRITES-8 passes others, the empty one included.
const taskPath = "task-path"

// writes calls PutWrites and fails the spec on error.
func (e *env) writes(ctx context.Context, cfg spec.Config, task string, ws ...spec.Write) {
	g.GinkgoHelper()
	Expect(e.s.PutWrites(ctx, cfg, ws, task, taskPath)).To(Succeed(), "PutWrites %+v task %q", cfg, task)
}

// get calls GetTuple and fails the spec unless it succeeds.
func (e *env) get(ctx context.Context, thread, ns, id string) *spec.Tuple {
	g.GinkgoHelper()
	t, err := e.s.GetTuple(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id})
	Expect(err).NotTo(HaveOccurred(), "GetTuple %q %q %q", thread, ns, id)
	Expect(t).NotTo(BeNil(), "GetTuple returned a nil tuple without error")
	return t
}

// expectMissing asserts that GetTuple reports ErrNotFound.
func (e *env) expectMissing(ctx context.Context, thread, ns, id string) {
	g.GinkgoHelper()
	t, err := e.s.GetTuple(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id})
	Expect(err).To(MatchError(spec.ErrNotFound), "GetTuple %q %q %q should be ErrNotFound", thread, ns, id)
	Expect(t).To(BeNil())
}

// list drains List and fails the spec on error.
func (e *env) list(ctx context.Context, opts spec.ListOptions) []*spec.Tuple {
	g.GinkgoHelper()
	ts, err := collect(e.s.List(ctx, opts))
	Expect(err).NotTo(HaveOccurred(), "List %+v", opts)
	return ts
}

// listFirst drains List, fails the spec on error, and returns the first
// tuple; a listing without any fails the spec instead of panicking, so a
// broken List fails the rule the spec cites.
func (e *env) listFirst(ctx context.Context, opts spec.ListOptions) *spec.Tuple {
	g.GinkgoHelper()
	ts := e.list(ctx, opts)
	Expect(ts).NotTo(BeEmpty(), "List %+v returned no checkpoint", opts)
	return ts[0]
}

// listErr drains List and returns its error.
func listErr(ctx context.Context, s spec.Saver, opts spec.ListOptions) error {
	_, err := collect(s.List(ctx, opts))
	return err
}

// collect drains a List iterator. It returns the first error and checks
// ERR-5: no nil tuple without an error.
func collect(seq func(func(*spec.Tuple, error) bool)) ([]*spec.Tuple, error) {
	var out []*spec.Tuple
	var err error
	seq(func(t *spec.Tuple, e error) bool {
		if e != nil {
			err = e
			return false
		}
		if t == nil {
			err = fmt.Errorf("List yielded a nil tuple without an error (ERR-5)")
			return false
		}
		out = append(out, t)
		return true
	})
	return out, err
}

// keysOf returns the keys of tuples, one string each.
func keysOf(ts []*spec.Tuple) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = keyString(t.Config)
	}
	return out
}

func keyString(c spec.Config) string {
	return fmt.Sprintf("%q/%q/%q", c.ThreadID, c.Namespace, c.CheckpointID)
}

// sortedKeys returns the keys of tuples, sorted: for comparisons that do
// not care about order.
func sortedKeys(ts []*spec.Tuple) []string {
	return slices.Sorted(slices.Values(keysOf(ts)))
}

// sortTies returns ts with each run of equal checkpoint IDs sorted by
// thread, then namespace: the order LIST-ORDER-2 asks for, applied where a
// spec checks another rule.
func sortTies(ts []*spec.Tuple) []*spec.Tuple {
	out := slices.Clone(ts)
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].Config.CheckpointID == out[i].Config.CheckpointID {
			j++
		}
		slices.SortFunc(out[i:j], func(a, b *spec.Tuple) int {
			return cmp.Or(cmp.Compare(a.Config.ThreadID, b.Config.ThreadID), cmp.Compare(a.Config.Namespace, b.Config.Namespace))
		})
		i = j
	}
	return out
}

// sortWrites returns pending writes sorted by task, channel and value, for
// comparisons that do not care about their order (WRITES-9 does).
func sortWrites(ws []spec.PendingWrite) []spec.PendingWrite {
	out := slices.Clone(ws)
	slices.SortStableFunc(out, func(a, b spec.PendingWrite) int {
		return cmp.Or(strings.Compare(a.TaskID, b.TaskID), strings.Compare(a.Channel, b.Channel), strings.Compare(fmt.Sprintf("%#v", a.Value), fmt.Sprintf("%#v", b.Value)))
	})
	if out == nil {
		out = []spec.PendingWrite{}
	}
	return out
}

// byTask returns ws stably sorted by task ID: the order of each task's
// writes is kept, the order of the tasks (which the contract leaves free)
// is not.
func byTask(ws []spec.PendingWrite) []spec.PendingWrite {
	out := slices.Clone(ws)
	slices.SortStableFunc(out, func(a, b spec.PendingWrite) int { return strings.Compare(a.TaskID, b.TaskID) })
	return out
}

// idsOf returns the checkpoint IDs of tuples.
func idsOf(ts []*spec.Tuple) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Config.CheckpointID
	}
	return out
}

// md builds metadata from alternating keys and values.
func md(kv ...any) spec.Metadata {
	m := spec.Metadata{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// pw is a pending write.
func pw(task, ch string, v any) spec.PendingWrite {
	return spec.PendingWrite{TaskID: task, Channel: ch, Value: v}
}

// same reports whether two normalised values are identical: same types,
// same values, floats compared by bits (so -0 differs from 0), any NaN equal
// to any NaN, nil slices distinct from empty ones.
func same(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.IsNaN(x) && math.IsNaN(y)
		}
		return math.Float64bits(x) == math.Float64bits(y)
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !same(xv, yv) {
				return false
			}
		}
		return true
	case spec.Metadata:
		y, ok := b.(spec.Metadata)
		return ok && same(map[string]any(x), map[string]any(y))
	case []byte:
		y, ok := b.([]byte)
		return ok && (x == nil) == (y == nil) && string(x) == string(y)
	}
	return reflect.TypeOf(a) == reflect.TypeOf(b) && reflect.DeepEqual(a, b)
}

// sameFloat compares floats by bits, so -0 differs from 0, and any NaN
// equals any NaN.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// cmpOpts make go-cmp compare values the way same does.
var cmpOpts = gocmp.Options{gocmp.Comparer(sameFloat)}

// diffOf returns a go-cmp diff of want and got, "-" lines wanted and "+"
// lines got, with the Go type of every value whose type differs; "" when
// they are the same.
func diffOf(got, want any) string {
	if gocmp.Equal(want, got, cmpOpts) {
		return ""
	}
	return gocmp.Diff(want, got, cmpOpts)
}

// expectSame asserts same(got, want), failing with a typed diff.
func expectSame(got, want any, what string) {
	g.GinkgoHelper()
	if !same(got, want) {
		g.Fail(fmt.Sprintf("%s differ (-want +got):\n%s", what, gocmp.Diff(want, got, cmpOpts)))
	}
}

// equalTyped is Gomega's Equal with a go-cmp diff as its failure message,
// so that int64(2) and float64(2) are told apart in the output.
func equalTyped(want any) gtypes.GomegaMatcher { return &typedMatcher{want: want} }

type typedMatcher struct{ want any }

func (m *typedMatcher) Match(actual any) (bool, error) {
	return gocmp.Equal(m.want, actual, cmpOpts), nil
}

func (m *typedMatcher) FailureMessage(actual any) string {
	return "values differ (-want +got):\n" + gocmp.Diff(m.want, actual, cmpOpts)
}

func (m *typedMatcher) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("value should differ from %#v", m.want)
}

// show formats a value with its types, truncating long ones.
func show(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// diffTuple describes how got differs from want ("" when identical under
// the contract: values by same, everything else exactly), field by field
// with typed diffs.
func diffTuple(got, want *spec.Tuple) string {
	switch {
	case got == nil && want == nil:
		return ""
	case got == nil || want == nil:
		return fmt.Sprintf("tuple: got %v, want %v", got != nil, want != nil)
	}
	var d []string
	add := func(what, diff string) {
		if diff != "" {
			d = append(d, what+" (-want +got):\n"+diff)
		}
	}
	if got.Config != want.Config {
		d = append(d, fmt.Sprintf("config: got %s, want %s", keyString(got.Config), keyString(want.Config)))
	}
	if (got.Parent == nil) != (want.Parent == nil) || (got.Parent != nil && *got.Parent != *want.Parent) {
		d = append(d, fmt.Sprintf("parent: got %s, want %s", showCfg(got.Parent), showCfg(want.Parent)))
	}
	if !same(map[string]any(got.Metadata), map[string]any(want.Metadata)) {
		add("metadata", diffOf(map[string]any(got.Metadata), map[string]any(want.Metadata)))
	}
	if !same(got.Checkpoint.ChannelValues, want.Checkpoint.ChannelValues) {
		add("channel values", diffOf(got.Checkpoint.ChannelValues, want.Checkpoint.ChannelValues))
	}
	if !reflect.DeepEqual(got.Checkpoint.ChannelVersions, want.Checkpoint.ChannelVersions) {
		add("channel versions", diffOf(got.Checkpoint.ChannelVersions, want.Checkpoint.ChannelVersions))
	}
	if got.Checkpoint.ID != want.Checkpoint.ID || got.Checkpoint.TS != want.Checkpoint.TS || got.Checkpoint.V != want.Checkpoint.V {
		d = append(d, fmt.Sprintf("checkpoint id/ts/v: got %q %q %d, want %q %q %d", got.Checkpoint.ID, got.Checkpoint.TS, got.Checkpoint.V, want.Checkpoint.ID, want.Checkpoint.TS, want.Checkpoint.V))
	}
	if got.PendingWrites == nil {
		d = append(d, "pending writes: nil")
	}
	// The order of different tasks' writes is free: compared grouped by
	// task, each task's writes in the order returned.
	if gw, ww := byTask(got.PendingWrites), byTask(want.PendingWrites); len(gw) != len(ww) || !slices.EqualFunc(gw, ww, func(a, b spec.PendingWrite) bool {
		return a.TaskID == b.TaskID && a.Channel == b.Channel && same(a.Value, b.Value)
	}) {
		add("pending writes", diffOf(gw, ww))
	}
	return strings.Join(d, "\n")
}

func showCfg(c *spec.Config) string {
	if c == nil {
		return "nil"
	}
	return keyString(*c)
}

// expectTuple asserts that got equals want under diffTuple.
func expectTuple(got, want *spec.Tuple) {
	g.GinkgoHelper()
	if d := diffTuple(got, want); d != "" {
		g.Fail("tuple " + showCfg(&want.Config) + " differs: " + d)
	}
}
