package mutants

import (
	"context"
	"errors"
	"iter"
	"maps"
	"strings"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of metadata storage.

// nulOriginals returns the top-level string values of md that contain NUL
// characters, normalised but not stripped.
func nulOriginals(md spec.Metadata) map[string]any {
	out := map[string]any{}
	nf, err := spec.NormalizeFilter(md) // like metadata, but keeps NULs
	if err != nil {
		return out
	}
	for k, v := range nf {
		if s, ok := v.(string); ok && strings.Contains(s, "\x00") {
			out[k] = s
		}
	}
	return out
}

// nulKeeper remembers the NUL-carrying metadata strings of every checkpoint.
type nulKeeper struct {
	mu   sync.Mutex
	orig map[ckey]map[string]any
}

// install hooks Put and DeleteThread of w to maintain the originals.
func (n *nulKeeper) install(w *Wrapper) {
	n.orig = map[ckey]map[string]any{}
	w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
		out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
		if err == nil {
			n.mu.Lock()
			n.orig[ckey{out.ThreadID, out.Namespace, out.CheckpointID}] = nulOriginals(md)
			n.mu.Unlock()
		}
		return out, err
	}
	onDeleteThread(w, &n.mu, func(thread string) {
		maps.DeleteFunc(n.orig, func(k ckey, _ map[string]any) bool { return k.thread == thread })
	})
}

// restored returns md with the original NUL strings of checkpoint k.
func (n *nulKeeper) restored(k ckey, md spec.Metadata) spec.Metadata {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := maps.Clone(md)
	maps.Copy(out, n.orig[k])
	return out
}

// stripDeep removes NULs from every string inside md, nested ones included.
func stripDeep(md spec.Metadata) spec.Metadata {
	out := spec.Metadata{}
	for k, v := range md {
		out[k] = walk(v, func(x any) any {
			if s, ok := x.(string); ok {
				return strings.ReplaceAll(s, "\x00", "")
			}
			return x
		})
	}
	return out
}

func witnessMeta(md spec.Metadata) func(context.Context, spec.Saver) any {
	return func(ctx context.Context, s spec.Saver) any {
		_ = putCP(ctx, s, "t", "", "a", "", md, nil)
		return get(ctx, s, "t", "", "a")
	}
}

func init() {
	register(Mutant{
		Name: "metadata-nul-kept", Rule: "VALUE-7",
		Description: "NUL characters in top-level metadata strings are kept instead of removed.",
		New: func() spec.Saver {
			w := wrap()
			n := &nulKeeper{}
			n.install(w)
			w.MapTuple = func(t *spec.Tuple) { t.Metadata = n.restored(keyOf(t), t.Metadata) }
			return w
		},
		Witness: witnessMeta(spec.Metadata{"s": "a\x00b"}),
	})
	register(Mutant{
		Name: "metadata-nul-stripped-deep", Rule: "VALUE-7",
		Description: "NUL characters are removed from nested metadata strings too, not only top-level ones.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				if nmd, err := spec.NormalizeMetadata(md); err == nil {
					md = stripDeep(nmd)
				}
				return w.Inner.Put(ctx, cfg, cp, md, nv)
			}
			return w
		},
		Witness: witnessMeta(spec.Metadata{"m": map[string]any{"s": "a\x00b"}}),
	})
	register(Mutant{
		Name: "filter-sees-nul", Rule: "LIST-FILTER-9",
		Description: "The filter compares against metadata as given, NULs included, not as stored.",
		New: func() spec.Saver {
			w := wrap()
			n := &nulKeeper{}
			n.install(w)
			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
				filter, _ := spec.NormalizeFilter(o.Filter)
				return relist(ctx, w.Inner, o, func(in *spec.ListOptions) { in.Filter = nil }, func(t *spec.Tuple) bool {
					return spec.MatchFilter(n.restored(keyOf(t), t.Metadata), filter)
				})
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", spec.Metadata{"s": "\x00abc"}, nil)
			return listKeys(ctx, s, spec.ListOptions{ThreadID: "t", Filter: spec.Metadata{"s": "abc"}})
		},
	})
	register(Mutant{
		Name: "metadata-int-as-float", Rule: "VALUE-6",
		Description: "Integers nested in metadata values read back as float64, as after a JSON round trip (top-level integers are VALUE-11's).",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				for k, v := range t.Metadata {
					if _, top := v.(int64); top {
						continue
					}
					t.Metadata[k] = walk(v, func(x any) any {
						if i, ok := x.(int64); ok {
							return float64(i)
						}
						return x
					})
				}
			}
			return w
		},
		Witness: witnessMeta(spec.Metadata{"step": 3, "counts": map[string]any{"n": 3}}),
	})
	register(Mutant{
		Name: "metadata-dotted-key-nested", Rule: "VALUE-6",
		Description: "A metadata key with a dot is stored as a path, producing nested maps (as MongoDB's dotted field names would).",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				return w.Inner.Put(ctx, cfg, cp, nestDotted(md), nv)
			}
			return w
		},
		Witness: witnessMeta(spec.Metadata{"a.b": 1}),
	})
	register(Mutant{
		Name: "metadata-empty-as-nil", Rule: "PUT-13",
		Description: "Empty metadata reads back as a nil map.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if len(t.Metadata) == 0 {
					t.Metadata = nil
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
			return err == nil && t.Metadata == nil
		},
	})
	register(Mutant{
		Name: "metadata-unsupported-accepted", Rule: "VALUE-5",
		Description: "Metadata values outside the JSON subset (byte slices, NaN, structs...) are stored as their printed form instead of failing.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if errors.Is(err, spec.ErrUnsupportedValue) {
					if _, mdErr := spec.NormalizeMetadata(md); mdErr != nil {
						fixed := spec.Metadata{}
						for k, v := range md {
							if _, e := spec.NormalizeMetadata(spec.Metadata{k: v}); e != nil {
								v = sanitizeJSON(v)
							}
							fixed[k] = v
						}
						return w.Inner.Put(ctx, cfg, cp, fixed, nv)
					}
				}
				return out, err
			}
			return w
		},
		Witness: witnessMeta(spec.Metadata{"b": []byte("x")}),
	})
	register(Mutant{
		Name: "metadata-shared-across-threads", Rule: "ID-1",
		Description: "Metadata is keyed by (namespace, checkpoint ID) only, so threads sharing an ID read each other's metadata.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			shared := map[[2]string]spec.Metadata{}
			w.OnPut = func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
				out, err := w.Inner.Put(ctx, cfg, cp, md, nv)
				if err == nil {
					nmd, _ := spec.NormalizeMetadata(md)
					mu.Lock()
					shared[[2]string{out.Namespace, out.CheckpointID}] = nmd
					mu.Unlock()
				}
				return out, err
			}
			w.MapTuple = func(t *spec.Tuple) {
				mu.Lock()
				defer mu.Unlock()
				if md, ok := shared[[2]string{t.Config.Namespace, t.Config.CheckpointID}]; ok {
					t.Metadata = copyMeta(md)
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t1", "", "a", "", spec.Metadata{"who": "t1"}, nil)
			_ = putCP(ctx, s, "t2", "", "a", "", spec.Metadata{"who": "t2"}, nil)
			return get(ctx, s, "t1", "", "a")
		},
	})
	register(Mutant{
		Name: "parents-keys-recast", Rule: "NS-4",
		Description: "The namespaces used as keys of the \"parents\" metadata map are recast (task IDs dropped).",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if ps, ok := t.Metadata["parents"].(map[string]any); ok {
					out := map[string]any{}
					for ns, id := range ps {
						out[spec.RecastNamespace(ns)] = id
					}
					t.Metadata["parents"] = out
				}
			}
			return w
		},
		Witness: witnessMeta(spec.Metadata{"parents": map[string]any{"": "root", "a:1": "x"}}),
	})
}

// nestDotted turns each top-level key "a.b.c" of md into nested maps.
func nestDotted(md spec.Metadata) spec.Metadata {
	out := spec.Metadata{}
	for k, v := range md {
		parts := strings.Split(k, ".")
		m := map[string]any(out)
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
	return out
}

// sanitizeJSON replaces a value outside the metadata model by a string.
func sanitizeJSON(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return printed(v)
}
