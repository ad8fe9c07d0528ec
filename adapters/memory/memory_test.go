package memory_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

var ctx = context.Background()

func wr(ch string, v any) spec.Write { return spec.Write{Channel: ch, Value: v} }

func cp(id string, values map[string]any, versions spec.Versions) spec.Checkpoint {
	return spec.Checkpoint{V: 4, ID: id, TS: "2026-01-01T00:00:00Z", ChannelValues: values, ChannelVersions: versions}
}

func mustPut(t *testing.T, s spec.Saver, thread, ns, parent string, c spec.Checkpoint, md spec.Metadata, nv spec.Versions) {
	t.Helper()
	got, err := s.Put(ctx, spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: parent}, c, md, nv)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if want := (spec.Config{ThreadID: thread, Namespace: ns, CheckpointID: c.ID}); got != want {
		t.Fatalf("Put returned %+v, want %+v", got, want)
	}
}

func ids(t *testing.T, s spec.Saver, opts spec.ListOptions) []string {
	t.Helper()
	var out []string
	for tu, err := range s.List(ctx, opts) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		out = append(out, tu.Config.ThreadID+"/"+tu.Config.Namespace+"/"+tu.Config.CheckpointID)
	}
	return out
}

func TestGetLatestIsGreatestID(t *testing.T) {
	s := memory.New()
	for _, id := range []string{"b", "c", "a"} { // out of order on purpose
		mustPut(t, s, "t", "", "", cp(id, nil, nil), nil, nil)
	}
	tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if err != nil || tu.Checkpoint.ID != "c" {
		t.Fatalf("latest = %v, %v; want c", tu, err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "zz"}); !errors.Is(err, spec.ErrNotFound) {
		t.Fatalf("missing id: %v, want ErrNotFound", err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t", Namespace: "other"}); !errors.Is(err, spec.ErrNotFound) {
		t.Fatalf("other namespace: %v, want ErrNotFound", err)
	}
}

func TestValuesPerVersion(t *testing.T) {
	s := memory.New()
	mustPut(t, s, "t", "", "", cp("1", map[string]any{"a": "a1", "b": int64(1)}, spec.Versions{"a": "1", "b": "1"}), nil, spec.Versions{"a": "1", "b": "1"})
	// Second checkpoint only rewrites b; a keeps its stored value; c is cleared.
	mustPut(t, s, "t", "", "1", cp("2", map[string]any{"b": int64(2)}, spec.Versions{"a": "1", "b": "2", "c": "2"}), nil, spec.Versions{"b": "2", "c": "2"})
	tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": "a1", "b": int64(2)}
	if !reflect.DeepEqual(tu.Checkpoint.ChannelValues, want) {
		t.Fatalf("values = %#v, want %#v", tu.Checkpoint.ChannelValues, want)
	}
	old, _ := s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"})
	if !reflect.DeepEqual(old.Checkpoint.ChannelValues, map[string]any{"a": "a1", "b": int64(1)}) {
		t.Fatalf("old values = %#v", old.Checkpoint.ChannelValues)
	}
	if tu.Parent == nil || *tu.Parent != (spec.Config{ThreadID: "t", CheckpointID: "1"}) {
		t.Fatalf("parent = %+v", tu.Parent)
	}
	// nil is a value, distinct from absent.
	mustPut(t, s, "t", "", "2", cp("3", map[string]any{"n": nil}, spec.Versions{"n": "3"}), nil, spec.Versions{"n": "3"})
	tu, _ = s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if v, ok := tu.Checkpoint.ChannelValues["n"]; !ok || v != nil {
		t.Fatalf("nil value lost: %#v", tu.Checkpoint.ChannelValues)
	}
}

func TestWritesSemantics(t *testing.T) {
	s := memory.New()
	cfg := spec.Config{ThreadID: "t", CheckpointID: "1"}
	// Writes before the checkpoint exists.
	if err := s.PutWrites(ctx, cfg, []spec.Write{wr("x", "first"), wr(spec.InterruptChannel, "i1")}, "task-b", "p"); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "t", "", "", cp("1", nil, nil), nil, nil)
	if err := s.PutWrites(ctx, cfg, []spec.Write{wr("x", "second"), wr(spec.InterruptChannel, "i2"), wr(spec.InterruptChannel, "i3")}, "task-b", "p"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []spec.Write{wr("y", int64(1))}, "task-a", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, nil, "task-c", ""); err != nil {
		t.Fatal(err)
	}
	tu, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := []spec.PendingWrite{
		{TaskID: "task-a", Channel: "y", Value: int64(1)},
		{TaskID: "task-b", Channel: spec.InterruptChannel, Value: "i3"}, // last wins, index -3 sorts first
		{TaskID: "task-b", Channel: "x", Value: "first"},                // first wins
	}
	if !reflect.DeepEqual(tu.PendingWrites, want) {
		t.Fatalf("writes = %#v\nwant %#v", tu.PendingWrites, want)
	}
	// Re-putting the checkpoint keeps its writes; a child has none.
	mustPut(t, s, "t", "", "", cp("1", nil, nil), spec.Metadata{"again": true}, nil)
	mustPut(t, s, "t", "", "1", cp("2", nil, nil), nil, nil)
	again, _ := s.GetTuple(ctx, cfg)
	child, _ := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if len(again.PendingWrites) != 3 || again.Metadata["again"] != true || child.PendingWrites == nil || len(child.PendingWrites) != 0 {
		t.Fatalf("re-put writes %d md %v; child writes %#v", len(again.PendingWrites), again.Metadata, child.PendingWrites)
	}
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t"}, []spec.Write{wr("x", 1)}, "t", ""); !errors.Is(err, spec.ErrInvalidConfig) {
		t.Fatalf("no checkpoint id: %v", err)
	}
}

func TestListOrderBeforeFilterLimit(t *testing.T) {
	s := memory.New()
	mustPut(t, s, "t1", "", "", cp("3", nil, nil), spec.Metadata{"k": int64(1)}, nil)
	mustPut(t, s, "t1", "sub:1", "", cp("3", nil, nil), spec.Metadata{"k": int64(2)}, nil)
	mustPut(t, s, "t2", "", "", cp("5", nil, nil), spec.Metadata{"k": 1.0}, nil)
	mustPut(t, s, "t2", "", "", cp("1", nil, nil), spec.Metadata{"k": true}, nil)
	mustPut(t, s, "t1", "", "", cp("4", nil, nil), spec.Metadata{"k": int64(1)}, nil)
	tests := []struct {
		name string
		opts spec.ListOptions
		want []string
	}{
		{"all root", spec.ListOptions{}, []string{"t2//5", "t1//4", "t1//3", "t2//1"}},
		{"all namespaces, tie by ns", spec.ListOptions{AllNamespaces: true}, []string{"t2//5", "t1//4", "t1//3", "t1/sub:1/3", "t2//1"}},
		{"one namespace", spec.ListOptions{Namespace: "sub:1"}, []string{"t1/sub:1/3"}},
		{"global before", spec.ListOptions{Before: "4", AllNamespaces: true}, []string{"t1//3", "t1/sub:1/3", "t2//1"}},
		{"before a missing id", spec.ListOptions{Before: "35"}, []string{"t1//3", "t2//1"}},
		{"thread", spec.ListOptions{ThreadID: "t2"}, []string{"t2//5", "t2//1"}},
		{"filter numbers by value", spec.ListOptions{Filter: spec.Metadata{"k": 1}}, []string{"t2//5", "t1//4", "t1//3"}},
		{"filter true is not 1", spec.ListOptions{Filter: spec.Metadata{"k": true}}, []string{"t2//1"}},
		{"limit after filter", spec.ListOptions{Filter: spec.Metadata{"k": 1}, Limit: 2, Before: "5"}, []string{"t1//4", "t1//3"}},
		{"checkpoint id", spec.ListOptions{CheckpointID: "3", AllNamespaces: true}, []string{"t1//3", "t1/sub:1/3"}},
		{"unknown thread", spec.ListOptions{ThreadID: "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(t, s, tt.opts); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	for _, err := range s.List(ctx, spec.ListOptions{Limit: -1}) {
		if !errors.Is(err, spec.ErrInvalidArgument) {
			t.Fatalf("negative limit: %v", err)
		}
	}
}

func TestListStopsEarlyAndSurvivesConcurrentDelete(t *testing.T) {
	s := memory.New()
	for i := range 10 {
		mustPut(t, s, "t", "", "", cp(fmt.Sprintf("%02d", i), nil, nil), nil, nil)
	}
	n := 0
	for range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		n++
		if n == 2 {
			if err := s.DeleteThread(ctx, "t"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n != 2 {
		t.Fatalf("listing went on after the thread was deleted: %d items", n)
	}
}

func TestIsolationFromCallerMaps(t *testing.T) {
	s := memory.New()
	vals := map[string]any{"l": []any{"a"}}
	md := spec.Metadata{"m": map[string]any{"x": "y"}}
	c := cp("1", vals, spec.Versions{"l": "1"})
	mustPut(t, s, "t", "", "", c, md, spec.Versions{"l": "1"})
	vals["l"].([]any)[0] = "changed"
	md["m"].(map[string]any)["x"] = "changed"
	c.ChannelVersions["l"] = "9"
	tu, _ := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	tu.Checkpoint.ChannelValues["l"].([]any)[0] = "changed again"
	tu.Metadata["m"].(map[string]any)["x"] = "changed again"
	tu.Checkpoint.ChannelVersions["l"] = "8"
	tu, _ = s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if tu.Checkpoint.ChannelValues["l"].([]any)[0] != "a" || tu.Metadata["m"].(map[string]any)["x"] != "y" || tu.Checkpoint.ChannelVersions["l"] != "1" {
		t.Fatalf("stored state changed through caller maps: %#v %#v", tu.Checkpoint, tu.Metadata)
	}
}

func TestBadInputStoresNothing(t *testing.T) {
	s := memory.New()
	_, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp("1", map[string]any{"c": make(chan int)}, spec.Versions{"c": "1"}), nil, spec.Versions{"c": "1"})
	if !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("Put bad value: %v", err)
	}
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp("1", nil, nil), spec.Metadata{"b": []byte("x")}, nil); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("Put bad metadata: %v", err)
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); !errors.Is(err, spec.ErrNotFound) {
		t.Fatalf("something was stored: %v", err)
	}
	mustPut(t, s, "t", "", "", cp("1", nil, nil), nil, nil)
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, []spec.Write{wr("ok", 1), wr("bad", func() {})}, "task", ""); !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Fatalf("PutWrites bad value: %v", err)
	}
	if tu, _ := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); len(tu.PendingWrites) != 0 {
		t.Fatalf("partial writes stored: %v", tu.PendingWrites)
	}
}

func TestCancelledContext(t *testing.T) {
	s := memory.New()
	mustPut(t, s, "t", "", "", cp("1", nil, nil), nil, nil)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	checks := map[string]error{}
	_, checks["put"] = s.Put(cctx, spec.Config{ThreadID: "t"}, cp("2", nil, nil), nil, nil)
	checks["writes"] = s.PutWrites(cctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, []spec.Write{wr("a", 1)}, "x", "")
	_, checks["get"] = s.GetTuple(cctx, spec.Config{ThreadID: "t"})
	for _, err := range s.List(cctx, spec.ListOptions{}) {
		checks["list"] = err
	}
	checks["delete"] = s.DeleteThread(cctx, "t")
	checks["copy"] = s.CopyThread(cctx, "t", "u")
	checks["runs"] = s.DeleteForRuns(cctx, []string{"r"})
	checks["prune"] = s.Prune(cctx, []string{"t"}, spec.KeepLatest)
	for op, err := range checks {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", op, err)
		}
	}
	if got := ids(t, s, spec.ListOptions{AllNamespaces: true}); !reflect.DeepEqual(got, []string{"t//1"}) {
		t.Fatalf("cancelled calls changed storage: %v", got)
	}
}

func TestCapabilities(t *testing.T) {
	s := memory.New()
	mustPut(t, s, "src", "", "", cp("1", map[string]any{"a": "v1"}, spec.Versions{"a": "1"}), spec.Metadata{"run_id": "r1"}, spec.Versions{"a": "1"})
	mustPut(t, s, "src", "", "1", cp("2", map[string]any{"a": "v2"}, spec.Versions{"a": "2"}), spec.Metadata{"run_id": "r2"}, spec.Versions{"a": "2"})
	mustPut(t, s, "src", "sub:1", "", cp("1", nil, nil), spec.Metadata{"run_id": "r1"}, nil)
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "src", CheckpointID: "2"}, []spec.Write{wr("w", 1)}, "task", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	a := ids(t, s, spec.ListOptions{ThreadID: "src", AllNamespaces: true})
	b := ids(t, s, spec.ListOptions{ThreadID: "dst", AllNamespaces: true})
	if len(a) != 3 || len(b) != 3 {
		t.Fatalf("copy: src %v dst %v", a, b)
	}
	dl, _ := s.GetTuple(ctx, spec.Config{ThreadID: "dst"})
	if dl.Checkpoint.ChannelValues["a"] != "v2" || len(dl.PendingWrites) != 1 || dl.Parent.ThreadID != "dst" {
		t.Fatalf("copied tuple %+v", dl)
	}
	if err := s.DeleteForRuns(ctx, []string{"r1"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, s, spec.ListOptions{AllNamespaces: true}); !reflect.DeepEqual(got, []string{"dst//2", "src//2"}) {
		t.Fatalf("after DeleteForRuns: %v", got)
	}
	mustPut(t, s, "src", "", "2", cp("3", map[string]any{}, spec.Versions{"a": "2"}), nil, nil)
	if err := s.Prune(ctx, []string{"src"}, spec.KeepLatest); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, s, spec.ListOptions{ThreadID: "src", AllNamespaces: true}); !reflect.DeepEqual(got, []string{"src//3"}) {
		t.Fatalf("after prune: %v", got)
	}
	if tu, _ := s.GetTuple(ctx, spec.Config{ThreadID: "src"}); tu.Checkpoint.ChannelValues["a"] != "v2" {
		t.Fatalf("prune dropped a value the latest checkpoint needs: %v", tu.Checkpoint.ChannelValues)
	}
	if err := s.Prune(ctx, []string{"dst"}, spec.DeleteAll); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, s, spec.ListOptions{ThreadID: "dst"}); got != nil {
		t.Fatalf("DeleteAll left %v", got)
	}
	if err := s.Prune(ctx, []string{"src"}, spec.PruneStrategy(5)); !errors.Is(err, spec.ErrInvalidArgument) {
		t.Fatalf("bad strategy: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := memory.New()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			thread := fmt.Sprintf("t%d", w%2) // two goroutines per thread
			for i := range 50 {
				id := fmt.Sprintf("%d-%03d", w, i)
				v := spec.Version(fmt.Sprintf("%d.%d", i+1, w))
				if _, err := s.Put(ctx, spec.Config{ThreadID: thread}, cp(id, map[string]any{"c": id}, spec.Versions{"c": v}), nil, spec.Versions{"c": v}); err != nil {
					t.Error(err)
					return
				}
				if err := s.PutWrites(ctx, spec.Config{ThreadID: thread, CheckpointID: id}, []spec.Write{wr("w", i)}, "task", ""); err != nil {
					t.Error(err)
					return
				}
				for tu, err := range s.List(ctx, spec.ListOptions{ThreadID: thread, Limit: 3}) {
					if err != nil || tu.Checkpoint.ChannelValues["c"] != tu.Checkpoint.ID {
						t.Errorf("torn checkpoint: %v %v", tu, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if got := len(ids(t, s, spec.ListOptions{})); got != 400 {
		t.Fatalf("stored %d checkpoints, want 400", got)
	}
}
