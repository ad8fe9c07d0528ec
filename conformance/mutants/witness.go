package mutants

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// This file holds the small helpers that Witness scenarios share. A witness
// turns everything it sees, errors included, into a printable observation,
// so that the package's tests can compare the memory adapter with a mutant
// with reflect.DeepEqual.

// putCP puts a checkpoint whose channels all get version "v<id>", storing
// every value in vals.
func putCP(ctx context.Context, s spec.Saver, thread, ns, id, parent string, md spec.Metadata, vals map[string]any) error {
	vers := spec.Versions{}
	for ch := range vals {
		vers[ch] = spec.Version("v" + id)
	}
	cp := spec.Checkpoint{V: 4, ID: id, ChannelValues: vals, ChannelVersions: vers}
	_, err := s.Put(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: parent}, cp, md, maps.Clone(vers))
	return err
}

// errKind names the sentinel (or context error) err wraps.
func errKind(err error) string {
	for _, e := range []error{spec.ErrNotFound, spec.ErrInvalidConfig, spec.ErrInvalidArgument, spec.ErrUnsupportedValue, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return "error: " + e.Error()
		}
	}
	if err != nil {
		return "error: other"
	}
	return "ok"
}

// listKeys lists with opts and returns "thread/ns/id" per result, then the
// error kind if the listing failed.
func listKeys(ctx context.Context, s spec.Saver, opts spec.ListOptions) []string {
	out := []string{}
	for t, err := range s.List(ctx, opts) {
		if err != nil {
			return append(out, errKind(err))
		}
		out = append(out, t.Config.ThreadID+"/"+t.Config.Namespace+"/"+t.Config.CheckpointID)
	}
	return out
}

// describe summarises a GetTuple result.
func describe(t *spec.Tuple, err error) string {
	if err != nil {
		return errKind(err)
	}
	parent := "<nil>"
	if t.Parent != nil {
		parent = fmt.Sprintf("%+v", *t.Parent)
	}
	writes := make([]string, len(t.PendingWrites))
	for i, w := range t.PendingWrites {
		writes[i] = w.TaskID + ":" + w.Channel + "=" + typed(w.Value)
	}
	return fmt.Sprintf("config=%+v id=%q parent=%s values=%s versions=%v seen=%v updated=%#v md=%s writes=%v",
		t.Config, t.Checkpoint.ID, parent, typed(t.Checkpoint.ChannelValues), t.Checkpoint.ChannelVersions,
		t.Checkpoint.VersionsSeen, t.Checkpoint.UpdatedChannels, typed(t.Metadata), writes)
}

// typed prints a plain value with the Go type of every scalar and nil
// collections marked, so that int64(1) and float64(1) print differently.
func typed(v any) string {
	switch x := v.(type) {
	case spec.Metadata:
		if x == nil {
			return "Metadata(nil)"
		}
		return typed(map[string]any(x))
	case map[string]any:
		if x == nil {
			return "map(nil)"
		}
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, strconv.Quote(k)+":"+typed(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		if x == nil {
			return "list(nil)"
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = typed(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T(%#v)", v, v)
}

// get describes GetTuple of (thread, ns, id).
func get(ctx context.Context, s spec.Saver, thread, ns, id string) string {
	return describe(s.GetTuple(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id}))
}

// writesOf describes the pending writes of (thread, ns, id) as
// "task:channel=value" strings, in the order returned.
func writesOf(ctx context.Context, s spec.Saver, thread, ns, id string) []string {
	t, err := s.GetTuple(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: id})
	if err != nil {
		return []string{errKind(err)}
	}
	out := []string{}
	for _, w := range t.PendingWrites {
		out = append(out, w.TaskID+":"+w.Channel+"="+typed(w.Value))
	}
	return out
}

// obs collects observations of a multi-step witness.
type obs []any

func (o *obs) add(v ...any) { *o = append(*o, v...) }

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
