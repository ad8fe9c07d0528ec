package mutants

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"strings"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of argument validation: invalid calls that are accepted, that
// report the wrong error, or that change data before failing.

func init() {
	register(Mutant{
		Name: "put-invalid-config-swallowed", Rule: "ERR-1",
		Description: "Put with an empty thread ID or checkpoint ID stores nothing but reports success.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if errors.Is(err, spec.ErrInvalidConfig) {
					return spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}, nil
				}
				return out, err
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(putCP(ctx, s, "", "", "a", "", nil, nil))
		},
	})
	register(Mutant{
		Name: "put-writes-invalid-config-swallowed", Rule: "ERR-2",
		Description: "PutWrites with an empty thread ID or checkpoint ID stores nothing but reports success.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				if err := w.Inner.PutWrites(ctx, cfg, ws, task, path); !errors.Is(err, spec.ErrInvalidConfig) {
					return err
				}
				return nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(s.PutWrites(ctx, spec.Config{ThreadID: "t"}, []spec.Write{wr("x", 1)}, "task", ""))
		},
	})
	register(Mutant{
		Name: "get-empty-thread-not-found", Rule: "ERR-3",
		Description: "GetTuple with an empty thread ID reports ErrNotFound instead of ErrInvalidConfig.",
		New: func() spec.Saver {
			w := wrap()
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				if cfg.ThreadID == "" && ctx.Err() == nil {
					return nil, fmt.Errorf("mutant: no thread %q: %w", cfg.ThreadID, spec.ErrNotFound)
				}
				return w.Inner.GetTuple(ctx, cfg)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any { return get(ctx, s, "", "", "") },
	})
	register(Mutant{
		Name: "list-continues-after-error", Rule: "ERR-5",
		Description: "After yielding an error for invalid options, List goes on and yields results as if the options were valid.",
		New: func() spec.Saver {
			w := wrap()
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				return func(yield func(*spec.Tuple, error) bool) {
					if err := spec.ValidateList(o); err != nil {
						if !yield(nil, err) {
							return
						}
						o.Limit, o.Filter = max(o.Limit, 0), nil
					}
					for t, err := range w.Inner.List(ctx, o) {
						if !yield(t, err) {
							return
						}
					}
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			var seen []string
			for t, err := range s.List(ctx, spec.ListOptions{Limit: -1}) {
				if t != nil {
					seen = append(seen, t.Config.CheckpointID)
				} else {
					seen = append(seen, errKind(err))
				}
			}
			return seen
		},
	})
	register(Mutant{
		Name: "copy-empty-thread-accepted", Rule: "ERR-6",
		Description: "CopyThread with an empty source or destination thread ID does nothing and reports success.",
		New: func() spec.Saver {
			w := wrap()
			w.OnCopyThread = func(ctx context.Context, src, dst string) error {
				if err := w.Inner.CopyThread(ctx, src, dst); !errors.Is(err, spec.ErrInvalidConfig) {
					return err
				}
				return nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(s.(spec.ThreadCopier).CopyThread(ctx, "t", ""))
		},
	})
	register(Mutant{
		Name: "prune-fails-halfway", Rule: "ERR-7",
		Description: "Prune processes the listed threads one by one and fails on an empty thread ID only when it reaches it, after pruning the ones before.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				for _, th := range threads {
					if err := w.Inner.Prune(ctx, []string{th}, strategy); err != nil {
						return err
					}
				}
				return nil
			}
			return w
		},
		Witness: witnessPrune([]string{"t", ""}, spec.DeleteAll),
	})
	register(Mutant{
		Name: "partial-store-on-bad-value", Rule: "VALUE-4",
		Description: "Put and PutWrites store everything that precedes an unsupported value and then fail, instead of storing nothing.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if errors.Is(err, spec.ErrUnsupportedValue) {
					good := maps.Clone(cp.ChannelValues)
					maps.DeleteFunc(good, func(_ string, v any) bool { _, bad := spec.Normalize(v); return bad != nil })
					partial := cp
					partial.ChannelValues = good
					_, _ = w.Inner.Put(ctx, cfg, partial, md, nv)
				}
				return out, err
			}
			w.OnPutWrites = func(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
				err := w.Inner.PutWrites(ctx, cfg, ws, task, path)
				if errors.Is(err, spec.ErrUnsupportedValue) {
					for i, x := range ws {
						if _, bad := spec.Normalize(x.Value); bad != nil {
							_ = w.Inner.PutWrites(ctx, cfg, ws[:i], task, path)
							break
						}
					}
				}
				return err
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			err := putCP(ctx, s, "t", "", "a", "", nil, map[string]any{"good": 1, "bad": make(chan int)})
			return []any{errKind(err), get(ctx, s, "t", "", "a")}
		},
	})
}

func init() {
	register(Mutant{
		Name: "nul-thread-id-truncated", Rule: "ERR-8",
		Description: "Put truncates a thread ID at its first NUL byte, C-string style, and stores the checkpoint under the prefix.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if i := strings.IndexByte(cfg.ThreadID, 0); i > 0 {
					cfg.ThreadID = cfg.ThreadID[:i]
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(putCP(ctx, s, "a\x00b", "", "1", "", nil, nil))
		},
	})
}
