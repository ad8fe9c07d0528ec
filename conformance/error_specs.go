package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// errorSpecs covers invalid input (ERR-*).
func errorSpecs(e *env) {
	g.Describe("Errors", func() {
		check("[ERR-1] rejects Put with an empty thread ID or checkpoint ID and stores nothing", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			_, err := e.s.Put(ctx, spec.Config{Namespace: "", CheckpointID: "1"}, cpOf("9", map[string]any{"c": 1}, spec.Versions{"c": "9"}), nil, spec.Versions{"c": "9"})
			Expect(err).To(MatchError(spec.ErrInvalidConfig), "empty thread ID")
			_, err = e.s.Put(ctx, spec.Config{ThreadID: "t"}, cpOf("", map[string]any{"c": 1}, spec.Versions{"c": "9"}), nil, spec.Versions{"c": "9"})
			Expect(err).To(MatchError(spec.ErrInvalidConfig), "empty checkpoint ID")
			_, err = e.s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "3"}, cpOf("", nil, nil), nil, nil)
			Expect(err).To(MatchError(spec.ErrInvalidConfig), "empty checkpoint ID with a parent")
			e.expectSnapshot(ctx, before, "t")
			// The rejected value c@9 must not have been stored either.
			e.putCP(ctx, spec.Config{ThreadID: "t"}, cpOf("9", nil, spec.Versions{"c": "9"}), nil, nil)
			expectSame(e.get(ctx, "t", "", "9").Checkpoint.ChannelValues, map[string]any{}, "values of a rejected Put")
		})

		check("[ERR-2] rejects PutWrites with an empty thread ID or checkpoint ID and stores nothing", lErrors, func(ctx context.Context) {
			e.put(ctx, "t", "", "", "1", nil)
			ws := []spec.Write{{Channel: "a", Value: 1}, {Channel: spec.InterruptChannel, Value: 2}}
			Expect(e.s.PutWrites(ctx, spec.Config{CheckpointID: "1"}, ws, "task", taskPath)).To(MatchError(spec.ErrInvalidConfig))
			Expect(e.s.PutWrites(ctx, spec.Config{ThreadID: "t"}, ws, "task", taskPath)).To(MatchError(spec.ErrInvalidConfig))
			Expect(e.get(ctx, "t", "", "1").PendingWrites).To(BeEmpty())
		})

		check("[ERR-3] rejects GetTuple and DeleteThread with an empty thread ID", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			for _, id := range []string{"", "1"} {
				t, err := e.s.GetTuple(ctx, spec.Config{CheckpointID: id})
				Expect(err).To(MatchError(spec.ErrInvalidConfig))
				Expect(t).To(BeNil())
			}
			Expect(e.s.DeleteThread(ctx, "")).To(MatchError(spec.ErrInvalidConfig))
			e.expectSnapshot(ctx, before, "t")
		})

		check("[ERR-4] rejects a negative limit with ErrInvalidArgument and an unsupported filter value with ErrUnsupportedValue", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			Expect(listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", Limit: -1})).To(MatchError(spec.ErrInvalidArgument))
			Expect(listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", AllNamespaces: true, Limit: -5})).To(MatchError(spec.ErrInvalidArgument))
			for _, f := range []spec.Metadata{{"b": []byte("x")}, {"f": math.NaN()}, {"s": struct{}{}}, {"m": map[string]any{"c": make(chan int)}}} {
				Expect(listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", Filter: f})).To(MatchError(spec.ErrUnsupportedValue), "filter %v", f)
			}
		})

		check("[ERR-5] reports a List error as one nil tuple with the error, then stops", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			calls := 0
			for t, err := range e.s.List(ctx, spec.ListOptions{ThreadID: "t", Limit: -1}) {
				calls++
				Expect(t).To(BeNil())
				Expect(err).To(HaveOccurred())
			}
			Expect(calls).To(Equal(1))
			for t, err := range e.s.List(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true}) {
				Expect(err).NotTo(HaveOccurred())
				Expect(t).NotTo(BeNil())
			}
		})

		check("[ERR-6] rejects CopyThread with an empty source or destination and copies nothing", lCopy, func(ctx context.Context) {
			c := e.copier()
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			Expect(c.CopyThread(ctx, "", "dst")).To(MatchError(spec.ErrInvalidConfig))
			Expect(c.CopyThread(ctx, "t", "")).To(MatchError(spec.ErrInvalidConfig))
			e.expectSnapshot(ctx, before, "t")
		})

		check("[ERR-7] rejects Prune with an empty thread ID or an unknown strategy and removes nothing", lPrune, func(ctx context.Context) {
			p := e.pruner()
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			Expect(p.Prune(ctx, []string{"t", ""}, spec.DeleteAll)).To(MatchError(spec.ErrInvalidConfig))
			Expect(p.Prune(ctx, []string{"", "t"}, spec.KeepLatest)).To(MatchError(spec.ErrInvalidConfig))
			Expect(p.Prune(ctx, []string{"t"}, spec.PruneStrategy(7))).To(MatchError(spec.ErrInvalidArgument))
			Expect(p.Prune(ctx, []string{"t"}, spec.PruneStrategy(-1))).To(MatchError(spec.ErrInvalidArgument))
			e.expectSnapshot(ctx, before, "t")
		})

		check("[ERR-8] rejects identifiers holding a NUL byte or invalid UTF-8 with ErrInvalidConfig and stores nothing", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t")
			w := []spec.Write{{Channel: "a", Value: 1}}
			for _, bad := range []string{"a\x00b", "\xff\xfe"} {
				calls := map[string]func() error{
					"put thread": func() error { return putErr(ctx, e.s, spec.Config{ThreadID: bad}, cpOf("9", nil, nil)) },
					"put namespace": func() error {
						return putErr(ctx, e.s, spec.Config{ThreadID: "t", Namespace: bad}, cpOf("9", nil, nil))
					},
					"put parent": func() error {
						return putErr(ctx, e.s, spec.Config{ThreadID: "t", CheckpointID: bad}, cpOf("9", nil, nil))
					},
					"put id": func() error { return putErr(ctx, e.s, spec.Config{ThreadID: "t"}, cpOf(bad, nil, nil)) },
					"put channel": func() error {
						_, err := e.s.Put(ctx, spec.Config{ThreadID: "t"}, cpOf("9", map[string]any{bad: 1}, spec.Versions{bad: "9"}), nil, spec.Versions{bad: "9"})
						return err
					},
					"writes thread": func() error {
						return e.s.PutWrites(ctx, spec.Config{ThreadID: bad, CheckpointID: "1"}, w, "task", taskPath)
					},
					"writes namespace": func() error {
						return e.s.PutWrites(ctx, spec.Config{ThreadID: "t", Namespace: bad, CheckpointID: "1"}, w, "task", taskPath)
					},
					"writes checkpoint": func() error {
						return e.s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: bad}, w, "task", taskPath)
					},
					"writes task": func() error {
						return e.s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, w, bad, taskPath)
					},
					"writes channel": func() error {
						return e.s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"}, append(w, spec.Write{Channel: bad, Value: 2}), "task", taskPath)
					},
					"get thread":     func() error { _, err := e.s.GetTuple(ctx, spec.Config{ThreadID: bad}); return err },
					"get namespace":  func() error { _, err := e.s.GetTuple(ctx, spec.Config{ThreadID: "t", Namespace: bad}); return err },
					"get checkpoint": func() error { _, err := e.s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: bad}); return err },
					"list thread":    func() error { return listErr(ctx, e.s, spec.ListOptions{ThreadID: bad}) },
					"list namespace": func() error { return listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", Namespace: bad}) },
					"list id":        func() error { return listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", CheckpointID: bad}) },
					"list before":    func() error { return listErr(ctx, e.s, spec.ListOptions{ThreadID: "t", Before: bad}) },
					"delete thread":  func() error { return e.s.DeleteThread(ctx, bad) },
				}
				for what, call := range inOrder(calls) {
					Expect(call()).To(MatchError(spec.ErrInvalidConfig), "%s %q", what, bad)
				}
			}
			e.expectSnapshot(ctx, before, "t")
		})
	})
}

// callEvery calls every method of s (optional ones when implemented) with
// ctx, on data that exists, and returns the errors by method name.
func callEvery(ctx context.Context, s spec.Saver) map[string]error {
	errs := map[string]error{}
	_, errs["Put"] = s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "3"}, cpOf("4", map[string]any{"c": "new"}, spec.Versions{"c": "4"}), nil, spec.Versions{"c": "4"})
	errs["PutWrites"] = s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "3"}, []spec.Write{{Channel: "new", Value: 1}, {Channel: spec.ErrorChannel, Value: "new"}}, "task", taskPath)
	_, errs["GetTuple"] = s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	_, errs["GetTuple(id)"] = s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "1"})
	errs["List"] = listErr(ctx, s, spec.ListOptions{ThreadID: "t", AllNamespaces: true})
	errs["DeleteThread"] = s.DeleteThread(ctx, "t")
	if c, ok := s.(spec.ThreadCopier); ok {
		errs["CopyThread"] = c.CopyThread(ctx, "t", "copy")
	}
	if d, ok := s.(spec.RunDeleter); ok {
		errs["DeleteForRuns"] = d.DeleteForRuns(ctx, []string{"run-1"})
	}
	if p, ok := s.(spec.Pruner); ok {
		errs["Prune(KeepLatest)"] = p.Prune(ctx, []string{"t"}, spec.KeepLatest)
		errs["Prune(DeleteAll)"] = p.Prune(ctx, []string{"t"}, spec.DeleteAll)
	}
	return errs
}

// ctxSpecs covers contexts and resources (CTX-*).
func ctxSpecs(e *env) {
	g.Describe("Contexts", func() {
		check("[CTX-1] fails every method on a cancelled context with context.Canceled", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			for name, err := range inOrder(callEvery(cctx, e.s)) {
				Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%s: got %v, want context.Canceled", name, err)
			}
		})

		check("[CTX-3] fails every method on an expired deadline with context.DeadlineExceeded", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			dctx, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
			defer cancel()
			for name, err := range inOrder(callEvery(dctx, e.s)) {
				Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "%s: got %v, want context.DeadlineExceeded", name, err)
			}
		})

		check("[CTX-2] changes nothing when a call fails because of its context", lErrors, func(ctx context.Context) {
			e.threadFixture(ctx, "t")
			before := e.snapshot(ctx, "t", "copy")
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			dctx, dcancel := context.WithDeadline(ctx, time.Unix(0, 0))
			defer dcancel()
			for i, c := range []context.Context{cctx, dctx} {
				errs := callEvery(c, e.s)
				// Whether the errors are the right ones is CTX-1's and CTX-3's
				// matter; when a call succeeds, the store may change.
				if slices.ContainsFunc(slices.Collect(maps.Values(errs)), func(err error) bool { return err == nil }) {
					continue
				}
				if d := compareLists(e.snapshot(ctx, "t", "copy"), before); d != "" {
					g.Fail(fmt.Sprintf("calls with a %s context failed but changed the store: %s", []string{"cancelled", "expired"}[i], d))
				}
			}
		})

		check("[CTX-4] releases resources when a List iteration stops early", lErrors, func(ctx context.Context) {
			for i := range 20 {
				e.put(ctx, "t", []string{"", "sub:1"}[i%2], "", string(rune('a'+i)), nil)
			}
			done := make(chan error, 1)
			go func() {
				defer func() {
					if r := recover(); r != nil {
						done <- fmt.Errorf("panic: %v", r)
					}
				}()
				done <- breakEarlyThenUse(ctx, e.s)
			}()
			var err error
			Eventually(done).WithTimeout(10*time.Second).Should(Receive(&err), "the saver blocked after early breaks out of List")
			Expect(err).NotTo(HaveOccurred())
			Expect(e.list(ctx, spec.ListOptions{ThreadID: "t", AllNamespaces: true})).To(BeEmpty())
		})
	})
}

// breakEarlyThenUse stops many List iterations after their first result,
// then writes, reads and deletes on the same thread.
func breakEarlyThenUse(ctx context.Context, s spec.Saver) error {
	for i := range 200 {
		opts := spec.ListOptions{ThreadID: "t", AllNamespaces: i%2 == 0}
		for _, err := range s.List(ctx, opts) {
			if err != nil {
				return err
			}
			break
		}
	}
	if _, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cpOf("z", nil, nil), nil, nil); err != nil {
		return err
	}
	if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: "z"}, []spec.Write{{Channel: "c", Value: 1}}, "task", taskPath); err != nil {
		return err
	}
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err != nil {
		return err
	}
	return s.DeleteThread(ctx, "t")
}

func putErr(ctx context.Context, s spec.Saver, cfg spec.Config, cp spec.Checkpoint) error {
	_, err := s.Put(ctx, cfg, cp, nil, nil)
	return err
}
