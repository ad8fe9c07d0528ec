package mutants

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of DeleteThread and of the optional capabilities. The memory
// adapter cannot delete one checkpoint, so several of these rebuild a thread
// through the public API: save what must survive, delete, restore.

// runIDOf returns the string run_id of t's metadata.
func runIDOf(t *spec.Tuple) (string, bool) {
	r, ok := t.Metadata["run_id"].(string)
	return r, ok
}

// copyManually copies src to dst checkpoint by checkpoint, mapping IDs with
// rename and copying pending writes when withWrites is set.
func copyManually(ctx context.Context, w *Wrapper, src, dst string, rename func(string) string, withWrites bool) error {
	if err := spec.ValidateThreadID("copy thread", src); err != nil {
		return err
	}
	if err := spec.ValidateThreadID("copy thread", dst); err != nil {
		return err
	}
	ts, err := threadTuples(ctx, w.Inner, src)
	if err != nil {
		return err
	}
	for _, t := range ts {
		parent := parentID(t)
		if parent != "" {
			parent = rename(parent)
		}
		if err := restore(ctx, w.Inner, t, dst, rename(t.Config.CheckpointID), parent, withWrites); err != nil {
			return err
		}
	}
	return nil
}

func same(id string) string { return id }

// witnessThreadOps puts checkpoints a (parent) and b (with a write) in the
// root and in a subgraph namespace of thread "t", plus thread "t2", runs op
// and returns what every thread lists afterwards, with pending writes.
func witnessThreadOps(op func(ctx context.Context, s spec.Saver) error) func(context.Context, spec.Saver) any {
	return func(ctx context.Context, s spec.Saver) any {
		for _, ns := range []string{"", "sub:1"} {
			_ = putCP(ctx, s, "t", ns, "a", "", spec.Metadata{"run_id": "r1"}, map[string]any{"c": 1})
			_ = putCP(ctx, s, "t", ns, "b", "a", spec.Metadata{"run_id": "r2"}, map[string]any{"c": 2})
			_ = s.PutWrites(ctx, spec.Config{ThreadID: "t", Namespace: ns, CheckpointID: "b"}, []spec.Write{wr("x", ns)}, "task", "")
		}
		_ = putCP(ctx, s, "t2", "", "a", "", spec.Metadata{"run_id": "r10"}, nil)
		o := obs{errKind(op(ctx, s))}
		for t, err := range s.List(ctx, spec.ListOptions{AllNamespaces: true}) {
			o.add(describe(t, err))
		}
		return o
	}
}

func init() {
	register(Mutant{
		Name: "delete-leaves-writes", Rule: "DELETE-2",
		Description: "DeleteThread leaves the thread's pending writes behind; they reappear when a checkpoint with the same ID is put again.",
		New: func() spec.Saver {
			w := wrap()
			w.OnDeleteThread = func(ctx context.Context, thread string) error {
				var ts []*spec.Tuple
				if thread != "" {
					var err error
					if ts, err = threadTuples(ctx, w.Inner, thread); err != nil {
						return err
					}
				}
				if err := w.Inner.DeleteThread(ctx, thread); err != nil {
					return err
				}
				for _, t := range ts {
					// Orphaned writes, waiting for their checkpoint to return.
					if err := restoreWrites(ctx, w.Inner, t.Config, t.PendingWrites); err != nil {
						return err
					}
				}
				return nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr("x", 1))
			_ = s.DeleteThread(ctx, "t")
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "delete-prefix-threads", Rule: "DELETE-4",
		Description: "DeleteThread also deletes every thread whose ID starts with the given one (LIKE 'id%').",
		New: func() spec.Saver {
			w := wrap()
			w.OnDeleteThread = func(ctx context.Context, thread string) error {
				if err := w.Inner.DeleteThread(ctx, thread); err != nil {
					return err
				}
				all, err := collect(ctx, w.Inner, spec.ListOptions{AllNamespaces: true})
				if err != nil {
					return err
				}
				for _, t := range all {
					if strings.HasPrefix(t.Config.ThreadID, thread) {
						if err := w.Inner.DeleteThread(ctx, t.Config.ThreadID); err != nil {
							return err
						}
					}
				}
				return nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t-other", "", "a", "", nil, nil)
			_ = s.DeleteThread(ctx, "t")
			return listKeys(ctx, s, spec.ListOptions{AllNamespaces: true})
		},
	})
	register(Mutant{
		Name: "delete-root-namespace-only", Rule: "DELETE-1",
		Description: "DeleteThread removes only the root namespace; subgraph checkpoints survive.",
		New: func() spec.Saver {
			w := wrap()
			w.OnDeleteThread = func(ctx context.Context, thread string) error {
				var keep []*spec.Tuple
				if thread != "" {
					ts, err := threadTuples(ctx, w.Inner, thread)
					if err != nil {
						return err
					}
					for _, t := range ts {
						if t.Config.Namespace != "" {
							keep = append(keep, t)
						}
					}
				}
				if err := w.Inner.DeleteThread(ctx, thread); err != nil {
					return err
				}
				for _, t := range keep {
					if err := restore(ctx, w.Inner, t, thread, t.Config.CheckpointID, parentID(t), true); err != nil {
						return err
					}
				}
				return nil
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error { return s.DeleteThread(ctx, "t") }),
	})
	register(Mutant{
		Name: "delete-missing-thread-error", Rule: "DELETE-5",
		Description: "Deleting a thread with nothing stored fails with ErrNotFound.",
		New: func() spec.Saver {
			w := wrap()
			w.OnDeleteThread = func(ctx context.Context, thread string) error {
				if thread != "" {
					ts, err := collect(ctx, w.Inner, spec.ListOptions{ThreadID: thread, AllNamespaces: true, Limit: 1})
					if err != nil {
						return err
					}
					if len(ts) == 0 {
						return spec.ErrNotFound
					}
				}
				return w.Inner.DeleteThread(ctx, thread)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any { return errKind(s.DeleteThread(ctx, "nobody")) },
	})
	register(Mutant{
		Name: "copy-changes-ids", Rule: "COPY-1",
		Description: "CopyThread gives the copies new checkpoint IDs (and rewrites the parent IDs to match).",
		New: func() spec.Saver {
			w := wrap()
			w.OnCopyThread = func(ctx context.Context, src, dst string) error {
				return copyManually(ctx, w, src, dst, func(id string) string { return id + "-copy" }, true)
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
			return s.(spec.ThreadCopier).CopyThread(ctx, "t", "t-copy")
		}),
	})
	register(Mutant{
		Name: "copy-skips-writes", Rule: "COPY-2",
		Description: "CopyThread copies checkpoints but not their pending writes.",
		New: func() spec.Saver {
			w := wrap()
			w.OnCopyThread = func(ctx context.Context, src, dst string) error {
				return copyManually(ctx, w, src, dst, same, false)
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
			return s.(spec.ThreadCopier).CopyThread(ctx, "t", "t-copy")
		}),
	})
	register(Mutant{
		Name: "copy-moves", Rule: "COPY-3",
		Description: "CopyThread moves the thread: the source is deleted after the copy.",
		New: func() spec.Saver {
			w := wrap()
			w.OnCopyThread = func(ctx context.Context, src, dst string) error {
				if err := w.Inner.CopyThread(ctx, src, dst); err != nil || src == dst {
					return err
				}
				return w.Inner.DeleteThread(ctx, src)
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
			return s.(spec.ThreadCopier).CopyThread(ctx, "t", "t-copy")
		}),
	})
	register(Mutant{
		Name: "copy-empty-error", Rule: "COPY-4",
		Description: "Copying a thread with nothing stored fails with ErrInvalidArgument (only nil or ErrNotFound are allowed).",
		New: func() spec.Saver {
			w := wrap()
			w.OnCopyThread = func(ctx context.Context, src, dst string) error {
				if src != "" && dst != "" {
					ts, err := collect(ctx, w.Inner, spec.ListOptions{ThreadID: src, AllNamespaces: true, Limit: 1})
					if err != nil {
						return err
					}
					if len(ts) == 0 {
						return spec.ErrInvalidArgument
					}
				}
				return w.Inner.CopyThread(ctx, src, dst)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(s.(spec.ThreadCopier).CopyThread(ctx, "nobody", "dst"))
		},
	})
	register(Mutant{
		Name: "copy-linked", Rule: "COPY-5",
		Description: "A copied thread stays linked to its source: deleting either deletes both.",
		New: func() spec.Saver {
			w := wrap()
			links := newLinks()
			w.OnCopyThread = func(ctx context.Context, src, dst string) error {
				if err := w.Inner.CopyThread(ctx, src, dst); err != nil {
					return err
				}
				links.link(src, dst)
				return nil
			}
			w.OnDeleteThread = func(ctx context.Context, thread string) error {
				if err := w.Inner.DeleteThread(ctx, thread); err != nil {
					return err
				}
				for _, other := range links.take(thread) {
					if err := w.Inner.DeleteThread(ctx, other); err != nil {
						return err
					}
				}
				return nil
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
			if err := s.(spec.ThreadCopier).CopyThread(ctx, "t2", "t3"); err != nil {
				return err
			}
			return s.DeleteThread(ctx, "t3")
		}),
	})
	register(Mutant{
		Name: "runs-root-namespace-only", Rule: "RUNS-1",
		Description: "DeleteForRuns deletes matching checkpoints of the root namespace only.",
		New: func() spec.Saver {
			w := wrap()
			w.OnDeleteForRuns = func(ctx context.Context, runIDs []string) error {
				all, err := collect(ctx, w.Inner, spec.ListOptions{AllNamespaces: true})
				if err != nil {
					return err
				}
				var keep []*spec.Tuple
				for _, t := range all {
					if r, ok := runIDOf(t); ok && t.Config.Namespace != "" && slices.Contains(runIDs, r) {
						keep = append(keep, t)
					}
				}
				if err := w.Inner.DeleteForRuns(ctx, runIDs); err != nil {
					return err
				}
				for _, t := range keep {
					if err := restore(ctx, w.Inner, t, t.Config.ThreadID, t.Config.CheckpointID, parentID(t), true); err != nil {
						return err
					}
				}
				return nil
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
			return s.(spec.RunDeleter).DeleteForRuns(ctx, []string{"r2"})
		}),
	})
	register(Mutant{
		Name: "runs-prefix-match", Rule: "RUNS-4",
		Description: "DeleteForRuns matches run IDs by prefix, so run \"r1\" also deletes run \"r10\".",
		New: func() spec.Saver {
			w := wrap()
			w.OnDeleteForRuns = func(ctx context.Context, runIDs []string) error {
				all, err := collect(ctx, w.Inner, spec.ListOptions{AllNamespaces: true})
				if err != nil {
					return err
				}
				ids := slices.Clone(runIDs)
				for _, t := range all {
					if r, ok := runIDOf(t); ok && slices.ContainsFunc(runIDs, func(p string) bool { return p != "" && strings.HasPrefix(r, p) }) {
						ids = append(ids, r)
					}
				}
				return w.Inner.DeleteForRuns(ctx, ids)
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
			return s.(spec.RunDeleter).DeleteForRuns(ctx, []string{"r1"})
		}),
	})
	register(Mutant{
		Name: "runs-orphans-lose-parent", Rule: "RUNS-2",
		Description: "After DeleteForRuns, a surviving checkpoint whose parent was deleted no longer reports a parent.",
		New: func() spec.Saver {
			w := wrap()
			w.OnDeleteForRuns = func(ctx context.Context, runIDs []string) error {
				if err := w.Inner.DeleteForRuns(ctx, runIDs); err != nil {
					return err
				}
				all, err := collect(ctx, w.Inner, spec.ListOptions{AllNamespaces: true})
				if err != nil {
					return err
				}
				for _, t := range all {
					if t.Parent == nil {
						continue
					}
					if _, err := w.Inner.GetTuple(ctx, *t.Parent); errors.Is(err, spec.ErrNotFound) {
						if err := restore(ctx, w.Inner, t, t.Config.ThreadID, t.Config.CheckpointID, "", false); err != nil {
							return err
						}
					}
				}
				return nil
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
			return s.(spec.RunDeleter).DeleteForRuns(ctx, []string{"r1"})
		}),
	})
	register(Mutant{
		Name: "runs-empty-list-error", Rule: "RUNS-3",
		Description: "DeleteForRuns with an empty list of run IDs fails with ErrInvalidArgument.",
		New: func() spec.Saver {
			w := wrap()
			w.OnDeleteForRuns = func(ctx context.Context, runIDs []string) error {
				if len(runIDs) == 0 {
					return spec.ErrInvalidArgument
				}
				return w.Inner.DeleteForRuns(ctx, runIDs)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(s.(spec.RunDeleter).DeleteForRuns(ctx, nil))
		},
	})
}
