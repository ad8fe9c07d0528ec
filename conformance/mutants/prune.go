package mutants

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of Prune and NextVersion.

// links is a symmetric relation between thread IDs.
type links struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

func newLinks() *links { return &links{m: map[string]map[string]bool{}} }

func (l *links) link(a, b string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a == b {
		return
	}
	for _, p := range [][2]string{{a, b}, {b, a}} {
		if l.m[p[0]] == nil {
			l.m[p[0]] = map[string]bool{}
		}
		l.m[p[0]][p[1]] = true
	}
}

// take returns the threads linked to t and forgets those links.
func (l *links) take(t string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Sorted(maps.Keys(l.m[t]))
	delete(l.m, t)
	for _, o := range out {
		delete(l.m[o], t)
	}
	return out
}

// pruneKeeping rebuilds each listed thread keeping, per namespace, the
// checkpoint chosen by pick (from the namespace's checkpoints in descending
// ID order), with its writes when withWrites is set.
func pruneKeeping(ctx context.Context, w *Wrapper, threads []string, strategy spec.PruneStrategy, pick func([]*spec.Tuple) *spec.Tuple, withWrites bool) error {
	if strategy != spec.KeepLatest {
		return w.Inner.Prune(ctx, threads, strategy)
	}
	if err := strategy.Validate(); err != nil {
		return err
	}
	for _, th := range threads {
		if err := spec.ValidateThreadID("prune", th); err != nil {
			return err
		}
	}
	for _, th := range threads {
		ts, err := threadTuples(ctx, w.Inner, th)
		if err != nil {
			return err
		}
		byNS := map[string][]*spec.Tuple{}
		for _, t := range ts {
			byNS[t.Config.Namespace] = append(byNS[t.Config.Namespace], t)
		}
		if err := w.Inner.Prune(ctx, []string{th}, spec.DeleteAll); err != nil {
			return err
		}
		for _, ns := range sortedKeys(byNS) {
			t := pick(byNS[ns])
			if err := restore(ctx, w.Inner, t, th, t.Config.CheckpointID, parentID(t), withWrites); err != nil {
				return err
			}
		}
	}
	return nil
}

func first(ts []*spec.Tuple) *spec.Tuple { return ts[0] }
func last(ts []*spec.Tuple) *spec.Tuple  { return ts[len(ts)-1] }

func witnessPrune(threads []string, strategy spec.PruneStrategy) func(context.Context, spec.Saver) any {
	return witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
		return s.(spec.Pruner).Prune(ctx, threads, strategy)
	})
}

func init() {
	register(Mutant{
		Name: "prune-keeps-oldest", Rule: "PRUNE-1",
		Description: "Prune with KeepLatest keeps the oldest checkpoint (least ID) of each namespace instead of the latest.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				return pruneKeeping(ctx, w, threads, strategy, last, true)
			}
			return w
		},
		Witness: witnessPrune([]string{"t"}, spec.KeepLatest),
	})
	register(Mutant{
		Name: "prune-drops-writes", Rule: "PRUNE-2",
		Description: "Prune with KeepLatest keeps the latest checkpoint but drops its pending writes.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				return pruneKeeping(ctx, w, threads, strategy, first, false)
			}
			return w
		},
		Witness: witnessPrune([]string{"t"}, spec.KeepLatest),
	})
	register(Mutant{
		Name: "prune-delete-all-keeps-latest", Rule: "PRUNE-3",
		Description: "Prune with DeleteAll behaves like KeepLatest.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				if strategy == spec.DeleteAll {
					strategy = spec.KeepLatest
				}
				return w.Inner.Prune(ctx, threads, strategy)
			}
			return w
		},
		Witness: witnessPrune([]string{"t"}, spec.DeleteAll),
	})
	register(Mutant{
		Name: "prune-every-thread", Rule: "PRUNE-4",
		Description: "Prune applies to every thread, not only the listed ones.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				if len(threads) > 0 {
					all, err := collect(ctx, w.Inner, spec.ListOptions{AllNamespaces: true})
					if err != nil {
						return err
					}
					for _, t := range all {
						if !slices.Contains(threads, t.Config.ThreadID) {
							threads = append(threads, t.Config.ThreadID)
						}
					}
				}
				return w.Inner.Prune(ctx, threads, strategy)
			}
			return w
		},
		Witness: witnessThreadOps(func(ctx context.Context, s spec.Saver) error {
			_ = putCP(ctx, s, "t2", "", "b", "a", nil, nil)
			return s.(spec.Pruner).Prune(ctx, []string{"t"}, spec.KeepLatest)
		}),
	})
	register(Mutant{
		Name: "prune-nothing-error", Rule: "PRUNE-5",
		Description: "Prune with an empty list of threads fails with ErrInvalidArgument.",
		New: func() spec.Saver {
			w := wrap()
			w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
				if len(threads) == 0 {
					return spec.ErrInvalidArgument
				}
				return w.Inner.Prune(ctx, threads, strategy)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			return errKind(s.(spec.Pruner).Prune(ctx, nil, spec.KeepLatest))
		},
	})
	register(Mutant{
		Name: "next-version-not-increasing", Rule: "VERSION-1",
		Description: "NextVersion returns its argument unchanged once it is not empty.",
		New: func() spec.Saver {
			w := wrap()
			w.OnNextVersion = func(cur spec.Version) spec.Version {
				if cur == "" {
					return w.Inner.NextVersion(cur)
				}
				return cur
			}
			return w
		},
		Witness: func(_ context.Context, s spec.Saver) any {
			v := s.(spec.VersionGenerator).NextVersion("")
			return spec.CompareVersions(s.(spec.VersionGenerator).NextVersion(v), v)
		},
	})
	register(Mutant{
		Name: "next-version-deterministic", Rule: "VERSION-2",
		Description: "NextVersion has no random part, so two forks mint the same version and overwrite each other's values.",
		New: func() spec.Saver {
			w := wrap()
			w.OnNextVersion = func(cur spec.Version) spec.Version {
				v := string(w.Inner.NextVersion(cur))
				return spec.Version(v[:len(v)-16] + "0000000000000000")
			}
			return w
		},
		Witness: func(_ context.Context, s spec.Saver) any {
			vg := s.(spec.VersionGenerator)
			return vg.NextVersion("5") == vg.NextVersion("5")
		},
	})
}
