package mutants

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

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
	_, err := s.Put(ctx, spec.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: parent}, cp, md, maps.Clone(vers))
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
		out = append(out, t.Config.ThreadID+"/"+t.Config.CheckpointNS+"/"+t.Config.CheckpointID)
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
	return fmt.Sprintf("config=%+v parent=%s values=%#v versions=%v seen=%v updated=%#v md=%#v writes=%#v",
		t.Config, parent, t.Checkpoint.ChannelValues, t.Checkpoint.ChannelVersions,
		t.Checkpoint.VersionsSeen, t.Checkpoint.UpdatedChannels, t.Metadata, t.PendingWrites)
}

// get describes GetTuple of (thread, ns, id).
func get(ctx context.Context, s spec.Saver, thread, ns, id string) string {
	return describe(s.GetTuple(ctx, spec.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: id}))
}

// writesOf describes the pending writes of (thread, ns, id) as
// "task:channel=value" strings, in the order returned.
func writesOf(ctx context.Context, s spec.Saver, thread, ns, id string) []string {
	t, err := s.GetTuple(ctx, spec.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: id})
	if err != nil {
		return []string{errKind(err)}
	}
	out := []string{}
	for _, w := range t.PendingWrites {
		out = append(out, fmt.Sprintf("%s:%s=%v", w.TaskID, w.Channel, w.Value))
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
