package conformance

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

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

// fixtureTS is the timestamp of generated checkpoints.
const fixtureTS = "2026-01-02T03:04:05.123456Z"

// cpOf builds a checkpoint with the given ID, values and versions.
func cpOf(id string, values map[string]any, versions spec.Versions) spec.Checkpoint {
	if versions == nil {
		versions = spec.Versions{}
	}
	return spec.Checkpoint{V: 4, ID: id, TS: fixtureTS, ChannelValues: values, ChannelVersions: versions, VersionsSeen: map[string]spec.Versions{}}
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

// writes calls PutWrites and fails the spec on error.
func (e *env) writes(ctx context.Context, cfg spec.Config, task string, ws ...spec.Write) {
	g.GinkgoHelper()
	Expect(e.s.PutWrites(ctx, cfg, ws, task, "")).To(Succeed(), "PutWrites %+v task %q", cfg, task)
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

// expectSame asserts same(got, want) with a readable message.
func expectSame(got, want any, what string) {
	g.GinkgoHelper()
	if !same(got, want) {
		g.Fail(fmt.Sprintf("%s: got %s, want %s", what, show(got), show(want)))
	}
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
// the contract: values by same, everything else exactly).
func diffTuple(got, want *spec.Tuple) string {
	switch {
	case got == nil && want == nil:
		return ""
	case got == nil || want == nil:
		return fmt.Sprintf("tuple: got %v, want %v", got != nil, want != nil)
	}
	var d []string
	add := func(f string, a ...any) { d = append(d, fmt.Sprintf(f, a...)) }
	if got.Config != want.Config {
		add("config: got %+v, want %+v", got.Config, want.Config)
	}
	if (got.Parent == nil) != (want.Parent == nil) || (got.Parent != nil && *got.Parent != *want.Parent) {
		add("parent: got %s, want %s", showCfg(got.Parent), showCfg(want.Parent))
	}
	if !same(map[string]any(got.Metadata), map[string]any(want.Metadata)) {
		add("metadata: got %s, want %s", show(map[string]any(got.Metadata)), show(map[string]any(want.Metadata)))
	}
	if !same(got.Checkpoint.ChannelValues, want.Checkpoint.ChannelValues) {
		add("channel values: got %s, want %s", show(got.Checkpoint.ChannelValues), show(want.Checkpoint.ChannelValues))
	}
	if !reflect.DeepEqual(got.Checkpoint.ChannelVersions, want.Checkpoint.ChannelVersions) {
		add("channel versions: got %v, want %v", got.Checkpoint.ChannelVersions, want.Checkpoint.ChannelVersions)
	}
	if got.Checkpoint.ID != want.Checkpoint.ID || got.Checkpoint.TS != want.Checkpoint.TS || got.Checkpoint.V != want.Checkpoint.V {
		add("checkpoint id/ts/v: got %q %q %d, want %q %q %d", got.Checkpoint.ID, got.Checkpoint.TS, got.Checkpoint.V, want.Checkpoint.ID, want.Checkpoint.TS, want.Checkpoint.V)
	}
	if got.PendingWrites == nil {
		add("pending writes: nil")
	}
	if len(got.PendingWrites) != len(want.PendingWrites) || !slices.EqualFunc(got.PendingWrites, want.PendingWrites, func(a, b spec.PendingWrite) bool {
		return a.TaskID == b.TaskID && a.Channel == b.Channel && same(a.Value, b.Value)
	}) {
		add("pending writes: got %s, want %s", show(got.PendingWrites), show(want.PendingWrites))
	}
	return strings.Join(d, "; ")
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
