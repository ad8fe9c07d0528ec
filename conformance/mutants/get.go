package mutants

import (
	"context"
	"errors"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of GetTuple and of what Put reports back.

func init() {
	register(Mutant{
		Name: "latest-last-inserted", Rule: "GET-2",
		Description: "GetTuple without an ID returns the checkpoint put last, not the one with the greatest ID.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			last := map[[2]string]string{}
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if err == nil {
					mu.Lock()
					last[[2]string{out.ThreadID, out.Namespace}] = out.CheckpointID
					mu.Unlock()
				}
				return out, err
			}
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				if cfg.CheckpointID == "" {
					mu.Lock()
					id := last[[2]string{cfg.ThreadID, cfg.Namespace}]
					mu.Unlock()
					if id != "" {
						byID := cfg
						byID.CheckpointID = id
						if t, err := w.Inner.GetTuple(ctx, byID); err == nil {
							return t, nil
						}
					}
				}
				return w.Inner.GetTuple(ctx, cfg)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "b", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return get(ctx, s, "t", "", "")
		},
	})
	register(Mutant{
		Name: "get-missing-falls-back", Rule: "GET-1",
		Description: "GetTuple with an ID that does not exist returns the latest checkpoint instead of ErrNotFound.",
		New: func() spec.Saver {
			w := wrap()
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				t, err := w.Inner.GetTuple(ctx, cfg)
				if errors.Is(err, spec.ErrNotFound) && cfg.CheckpointID != "" {
					cfg.CheckpointID = ""
					return w.Inner.GetTuple(ctx, cfg)
				}
				return t, err
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return get(ctx, s, "t", "", "zzz")
		},
	})
	register(Mutant{
		Name: "get-latest-any-namespace", Rule: "GET-3",
		Description: "GetTuple without an ID, in a namespace with no checkpoint, returns the thread's latest checkpoint of any namespace.",
		New: func() spec.Saver {
			w := wrap()
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				t, err := w.Inner.GetTuple(ctx, cfg)
				if errors.Is(err, spec.ErrNotFound) && cfg.CheckpointID == "" {
					for t2, err2 := range w.Inner.List(ctx, spec.ListOptions{ThreadID: cfg.ThreadID, AllNamespaces: true, Limit: 1}) {
						if err2 == nil {
							return t2, nil
						}
					}
				}
				return t, err
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "sub:1", "a", "", nil, nil)
			return get(ctx, s, "t", "", "")
		},
	})
	register(Mutant{
		Name: "get-config-incomplete", Rule: "GET-4",
		Description: "GetTuple without an ID returns a Config without the checkpoint ID, echoing the request.",
		New: func() spec.Saver {
			w := wrap()
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				t, err := w.Inner.GetTuple(ctx, cfg)
				if t != nil {
					t.Config = cfg
				}
				return t, err
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return get(ctx, s, "t", "", "")
		},
	})
	register(Mutant{
		Name: "parent-dropped", Rule: "PUT-2",
		Description: "The parent ID is never returned: every tuple has Parent == nil.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) { t.Parent = nil }
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "b", "a", nil, nil)
			return get(ctx, s, "t", "", "b")
		},
	})
	register(Mutant{
		Name: "parent-only-if-exists", Rule: "GET-5",
		Description: "Parent is reported only while the parent checkpoint exists (as a join on the parent row would).",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if t.Parent == nil {
					return
				}
				if _, err := w.Inner.GetTuple(context.Background(), *t.Parent); err != nil {
					t.Parent = nil
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "b", "a", nil, nil)
			return get(ctx, s, "t", "", "b")
		},
	})
	register(Mutant{
		Name: "put-returns-parent-config", Rule: "PUT-1",
		Description: "Put returns the config it was given (naming the parent) instead of the stored checkpoint's.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				_, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if err != nil {
					return spec.Config{}, err
				}
				return cfg, nil
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			out, err := s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, spec.Checkpoint{ID: "b"}, nil, nil)
			return []any{out, errKind(err)}
		},
	})
	register(Mutant{
		Name: "reput-ignored", Rule: "PUT-11",
		Description: "Putting an existing checkpoint again is ignored (insert-or-ignore): the first checkpoint, metadata and parent stay.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if cfg.ThreadID != "" && cp.ID != "" {
					key := spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}
					if _, err := w.Inner.GetTuple(ctx, key); err == nil {
						return key, nil
					}
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"n": 1}, nil)
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"n": 2}, nil)
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "reput-keeps-first-parent", Rule: "PUT-11",
		Description: "Putting an existing checkpoint again replaces its checkpoint and metadata but keeps its first parent (LangGraph's PostgreSQL savers).",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if cfg.ThreadID != "" && cp.ID != "" {
					key := spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID}
					if old, err := w.Inner.GetTuple(ctx, key); err == nil {
						cfg.CheckpointID = ""
						if old.Parent != nil {
							cfg.CheckpointID = old.Parent.CheckpointID
						}
					}
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "b", "a", nil, nil)
			_ = putCP(ctx, s, "t", "", "b", "", spec.Metadata{"n": 2}, nil)
			return get(ctx, s, "t", "", "b")
		},
	})
	register(Mutant{
		Name: "updated-channels-not-stored", Rule: "PUT-14",
		Description: "UpdatedChannels is not stored: every checkpoint comes back with nil (LangGraph.js's savers drop updated_channels).",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) { t.Checkpoint.UpdatedChannels = nil }
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{V: 4, ID: "a", UpdatedChannels: []string{"c"}}, nil, nil)
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "updated-channels-nil-to-empty", Rule: "PUT-14",
		Description: "A nil UpdatedChannels (unknown) reads back as an empty list.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if t.Checkpoint.UpdatedChannels == nil {
					t.Checkpoint.UpdatedChannels = []string{}
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "versions-seen-dropped", Rule: "PUT-10",
		Description: "VersionsSeen is not stored: it reads back empty.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) { t.Checkpoint.VersionsSeen = map[string]spec.Versions{} }
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			cp := spec.Checkpoint{ID: "a", VersionsSeen: map[string]spec.Versions{"node": {"c": "1"}}}
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t"}, cp, nil, nil)
			return get(ctx, s, "t", "", "a")
		},
	})
}
