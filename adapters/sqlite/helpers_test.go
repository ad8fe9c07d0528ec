package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// openFile opens a saver on a new database file in a test temp dir.
func openFile(t testing.TB, opts ...Option) (*Saver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// openMemory opens a saver on a private in-memory database.
func openMemory(t testing.TB, opts ...Option) *Saver {
	t.Helper()
	s, err := Open(context.Background(), ":memory:", opts...)
	if err != nil {
		t.Fatalf("Open(:memory:): %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// checkpoint returns a checkpoint with id whose channels hold values, each
// at version "1".
func checkpoint(id string, values map[string]any) (spec.Checkpoint, spec.Versions) {
	vs := spec.Versions{}
	for ch := range values {
		vs[ch] = "1"
	}
	return spec.Checkpoint{V: 4, ID: id, TS: "2026-01-01T00:00:00Z", ChannelValues: values, ChannelVersions: vs,
		VersionsSeen: map[string]spec.Versions{}}, vs
}

func mustPut(t testing.TB, s spec.Saver, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) {
	t.Helper()
	if _, err := s.Put(context.Background(), cfg, cp, md, nv); err != nil {
		t.Fatalf("Put %q: %v", cp.ID, err)
	}
}

func mustGet(t testing.TB, s spec.Saver, cfg spec.Config) *spec.Tuple {
	t.Helper()
	tup, err := s.GetTuple(context.Background(), cfg)
	if err != nil {
		t.Fatalf("GetTuple %+v: %v", cfg, err)
	}
	return tup
}

func listIDs(t testing.TB, s spec.Saver, opts spec.ListOptions) []string {
	t.Helper()
	var ids []string
	for tup, err := range s.List(context.Background(), opts) {
		if err != nil {
			t.Fatalf("List %+v: %v", opts, err)
		}
		ids = append(ids, tup.Config.ThreadID+"/"+tup.Config.Namespace+"/"+tup.Config.CheckpointID)
	}
	return ids
}
