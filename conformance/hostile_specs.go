package conformance

import (
	"context"
	"fmt"
	"time"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

func init() { extraGroups = append(extraGroups, hostileSpecs) }

// nested returns a value depth levels deep: lists and maps in turn around
// a string, so a value of depth 1 is []any{"leaf"}.
func nested(depth int) any {
	var v any = "leaf"
	for i := range depth {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{"k": v}
		}
	}
	return v
}

// selfContaining returns values that contain themselves: a map holding
// itself, a list holding itself, and a map reaching itself through a list.
func selfContaining() map[string]any {
	m := map[string]any{"a": int64(1)}
	m["self"] = m
	l := make([]any, 2)
	l[0] = "x"
	l[1] = l
	outer := map[string]any{"k": "v"}
	outer["list"] = []any{"y", map[string]any{"back": outer}}
	return map[string]any{"map": m, "list": l, "indirect": outer}
}

// callTimeout bounds a call that might recurse or loop on a hostile value.
const callTimeout = 20 * time.Second

// returns runs fn on its own goroutine and fails the spec unless it
// returns within callTimeout; it returns fn's error. A saver that exhausts
// the stack still crashes the process: nothing can catch that.
func returns(what string, fn func() error) error {
	g.GinkgoHelper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- fn()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(callTimeout):
		g.Fail(fmt.Sprintf("%s did not return within %v", what, callTimeout))
		return nil
	}
}

// hostileSpecs covers hostile values (VALUE-9, VALUE-10) and the bytes of
// strings that must be stored or matched byte for byte (ERR-9).
func hostileSpecs(e *env) {
	g.Describe("Self-containing and deep values", func() {
		// valueCalls are the four places a value goes: channel values,
		// writes, metadata and a filter. Each call is made on thread t,
		// which holds the checkpoint c1 with one write.
		valueCalls := func(ctx context.Context, v any) map[string]func() error {
			return map[string]func() error{
				"channel value": func() error {
					_, err := e.s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, cpOf("c2", map[string]any{"c": v}, spec.Versions{"c": "2"}), nil, spec.Versions{"c": "2"})
					return err
				},
				"write": func() error {
					return e.s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, []spec.Write{{Channel: "d", Value: v}}, "task-2", taskPath)
				},
				"metadata": func() error {
					_, err := e.s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "c1"}, cpOf("c3", nil, nil), spec.Metadata{"m": v}, nil)
					return err
				},
				"filter": func() error { return listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", Filter: spec.Metadata{"m": v}}) },
			}
		}
		setup := func(ctx context.Context) []*spec.Tuple {
			g.GinkgoHelper()
			cfg := e.putValues(ctx, "t", "", "", "c1", map[string]any{"c": "v"}, spec.Versions{"c": "1"})
			e.writes(ctx, cfg, "task", spec.Write{Channel: "w", Value: "w"})
			return e.snapshot(ctx, "t")
		}

		check("[VALUE-9] rejects self-containing values in channel values, writes, metadata and filters with ErrUnsupportedValue and stores nothing", lPut, func(ctx context.Context) {
			before := setup(ctx)
			for name, v := range inOrder(selfContaining()) {
				for where, call := range inOrder(valueCalls(ctx, v)) {
					err := returns(fmt.Sprintf("a %s holding a self-containing %s", where, name), call)
					Expect(err).To(MatchError(spec.ErrUnsupportedValue), "a %s holding a self-containing %s", where, name)
				}
			}
			e.expectSnapshot(ctx, before, "t")
		})

		check("[VALUE-10] rejects values nested deeper than spec.MaxValueDepth with ErrUnsupportedValue and stores nothing", lPut, func(ctx context.Context) {
			before := setup(ctx)
			for _, where := range []string{"channel value", "write", "metadata", "filter"} {
				// Metadata and filters are maps themselves: their values
				// may nest one level less.
				depth := spec.MaxValueDepth + 1
				if where == "metadata" || where == "filter" {
					depth = spec.MaxValueDepth
				}
				err := returns(fmt.Sprintf("a %s nested %d levels deep", where, depth), valueCalls(ctx, nested(depth))[where])
				Expect(err).To(MatchError(spec.ErrUnsupportedValue), "a %s nested %d levels deep", where, depth)
			}
			e.expectSnapshot(ctx, before, "t")
		})

		// The deep filter value relies on nested filter values being accepted.
		checkNeeds("[VALUE-10] round-trips values nested exactly spec.MaxValueDepth levels deep", []string{"LIST-FILTER-6"}, lPut, func(ctx context.Context) {
			setup(ctx)
			deep, deepMeta := nested(spec.MaxValueDepth), nested(spec.MaxValueDepth-1)
			calls := valueCalls(ctx, deep)
			Expect(returns("a channel value at the depth limit", calls["channel value"])).To(Succeed(), "channel value at the limit")
			Expect(returns("a write at the depth limit", calls["write"])).To(Succeed(), "write at the limit")
			calls = valueCalls(ctx, deepMeta)
			Expect(returns("metadata at the depth limit", calls["metadata"])).To(Succeed(), "metadata at the limit")
			Expect(returns("a filter at the depth limit", calls["filter"])).To(Succeed(), "filter at the limit")
			expectSame(e.get(ctx, "t", "", "c2").Checkpoint.ChannelValues, map[string]any{"c": deep}, "channel values at the limit")
			expectSame(writeValues(e.get(ctx, "t", "", "c1").PendingWrites)["d"], deep, "write value at the limit")
			expectSame(e.get(ctx, "t", "", "c3").Metadata["m"], deepMeta, "metadata at the limit")
		})
	})

	g.Describe("Bytes of task paths, versions and run IDs", func() {
		bads := []string{"a\x00b", "\xff\xfe"}
		check("[ERR-9] rejects task paths, versions and node names holding a NUL byte or invalid UTF-8 with ErrInvalidConfig and stores nothing", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			parent := spec.Config{ThreadID: "t", CheckpointID: "3"}
			putWith := func(f func(cp *spec.Checkpoint, nv spec.Versions)) error {
				cp := cpOf("9", map[string]any{"c": "v"}, spec.Versions{"c": "9"})
				nv := spec.Versions{"c": "9"}
				f(&cp, nv)
				_, err := e.s.Put(ctx, parent, cp, nil, nv)
				return err
			}
			for _, bad := range bads {
				v := spec.Version(bad)
				for what, call := range inOrder(map[string]func() error{
					"task path": func() error {
						return e.s.PutWrites(ctx, parent, []spec.Write{{Channel: "w", Value: 1}}, "task-9", bad)
					},
					"version in ChannelVersions and newVersions": func() error {
						return putWith(func(cp *spec.Checkpoint, nv spec.Versions) { cp.ChannelVersions["c"], nv["c"] = v, v })
					},
					"version in ChannelVersions only": func() error {
						return putWith(func(cp *spec.Checkpoint, nv spec.Versions) { cp.ChannelVersions["d"] = v })
					},
					"version in newVersions only": func() error {
						return putWith(func(cp *spec.Checkpoint, nv spec.Versions) { nv["c"] = v })
					},
					"version in VersionsSeen": func() error {
						return putWith(func(cp *spec.Checkpoint, nv spec.Versions) { cp.VersionsSeen["node"] = spec.Versions{"c": v} })
					},
					"node name in VersionsSeen": func() error {
						return putWith(func(cp *spec.Checkpoint, nv spec.Versions) { cp.VersionsSeen[bad] = spec.Versions{"c": "1"} })
					},
					"channel in VersionsSeen": func() error {
						return putWith(func(cp *spec.Checkpoint, nv spec.Versions) { cp.VersionsSeen["node"] = spec.Versions{bad: "1"} })
					},
				}) {
					Expect(call()).To(MatchError(spec.ErrInvalidConfig), "%s %q", what, bad)
				}
			}
			e.expectSnapshot(ctx, before, "t")
			e.expectMissing(ctx, "t", "", "9")
		})

		check("[ERR-9] keeps a checkpoint's TS byte for byte, NUL bytes and invalid UTF-8 included", lErrors, func(ctx context.Context) {
			for i, ts := range []string{"2026-01-02T03:04:05\x00Z", "\xff\xfe", "späť\x00"} {
				cp := cpOf(fmt.Sprintf("c%d", i), nil, nil)
				cp.TS = ts
				e.putCP(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
				Expect(e.get(ctx, "t", "", cp.ID).Checkpoint.TS).To(Equal(ts), "TS %q", ts)
			}
		})

		check("[ERR-9] rejects run IDs holding a NUL byte or invalid UTF-8 with ErrInvalidConfig and removes nothing", lRuns, func(ctx context.Context) {
			d := e.runDeleter()
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			for _, bad := range bads {
				Expect(d.DeleteForRuns(ctx, []string{"run-1", bad})).To(MatchError(spec.ErrInvalidConfig), "run ID %q", bad)
				Expect(d.DeleteForRuns(ctx, []string{bad, "run-2"})).To(MatchError(spec.ErrInvalidConfig), "run ID %q", bad)
			}
			e.expectSnapshot(ctx, before, "t")
		})

		check("[ERR-9] rejects CopyThread thread IDs holding a NUL byte or invalid UTF-8 with ErrInvalidConfig and copies nothing", lCopy, func(ctx context.Context) {
			c := e.copier()
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			for _, bad := range bads {
				Expect(c.CopyThread(ctx, "t", bad)).To(MatchError(spec.ErrInvalidConfig), "destination %q", bad)
				Expect(c.CopyThread(ctx, bad, "t")).To(MatchError(spec.ErrInvalidConfig), "source %q", bad)
			}
			e.expectSnapshot(ctx, before, "t")
		})

		check("[ERR-9] rejects Prune thread IDs holding a NUL byte or invalid UTF-8 with ErrInvalidConfig and removes nothing", lPrune, func(ctx context.Context) {
			p := e.pruner()
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			for _, bad := range bads {
				for _, s := range []spec.PruneStrategy{spec.KeepLatest, spec.DeleteAll} {
					Expect(p.Prune(ctx, []string{"t", bad}, s)).To(MatchError(spec.ErrInvalidConfig), "thread %q", bad)
				}
			}
			e.expectSnapshot(ctx, before, "t")
		})
	})
}
