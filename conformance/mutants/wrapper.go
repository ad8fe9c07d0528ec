package mutants

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Base is what a mutant wraps: the memory adapter, or, when faults are
// stacked (see [Stack]), the mutant below.
type Base interface {
	spec.Saver
	spec.ThreadCopier
	spec.RunDeleter
	spec.Pruner
	spec.VersionGenerator
}

// Wrapper is a saver built from the memory adapter with some of its methods
// replaced. Every hook left nil forwards to Inner unchanged, so a mutant sets
// only the hooks it needs to break its one rule. Wrapper implements
// [spec.Saver] and every optional capability, like the memory adapter.
type Wrapper struct {
	// Inner is the saver the mutant starts from: the memory adapter, or the
	// mutant below it in a stack.
	Inner Base

	// Each On hook, when set, replaces the method of the same name. Hooks
	// call Inner themselves for whatever part they keep correct.
	OnPut           func(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error)
	OnPutWrites     func(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error
	OnGetTuple      func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error)
	OnList          func(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error]
	OnDeleteThread  func(ctx context.Context, threadID string) error
	OnCopyThread    func(ctx context.Context, src, dst string) error
	OnDeleteForRuns func(ctx context.Context, runIDs []string) error
	OnPrune         func(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) error
	OnNextVersion   func(current spec.Version) spec.Version

	// MapTuple, when set, rewrites every tuple that GetTuple and List return
	// (after OnGetTuple and OnList). It may modify the tuple in place.
	MapTuple func(t *spec.Tuple)
}

var (
	_ spec.Saver            = (*Wrapper)(nil)
	_ spec.ThreadCopier     = (*Wrapper)(nil)
	_ spec.RunDeleter       = (*Wrapper)(nil)
	_ spec.Pruner           = (*Wrapper)(nil)
	_ spec.VersionGenerator = (*Wrapper)(nil)
)

var (
	// buildMu serialises the construction of mutants, during which
	// nextBase says what wrap wraps.
	buildMu  sync.Mutex
	nextBase func(opts ...memory.Option) Base
)

// wrap returns a Wrapper over the base of the mutant being built: a new,
// empty memory saver configured with opts, or the mutant below in a stack.
// Only a mutant's New calls it, through Build or Stack.
func wrap(opts ...memory.Option) *Wrapper {
	if nextBase == nil {
		panic("mutants: a Mutant's New runs only through Mutant.Build or Stack")
	}
	return &Wrapper{Inner: nextBase(opts...)}
}

// plain returns a Wrapper without hooks over a new memory saver.
func plain() *Wrapper { return &Wrapper{Inner: memory.New()} }

// Build returns the mutant over a new, empty memory saver.
func (m Mutant) Build() spec.Saver {
	s, err := Stack(m)
	if err != nil {
		panic(err) // one mutant always stacks
	}
	return s
}

// Stack returns a saver with the faults of every mutant of ms: the first
// wraps a new, empty memory saver and each next one wraps the previous. A
// mutant that configures the memory saver itself (such as a lossy serde)
// can only come first.
func Stack(ms ...Mutant) (spec.Saver, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	defer func() { nextBase = nil }()
	var cur Base
	for i, m := range ms {
		var bad error
		nextBase = func(opts ...memory.Option) Base {
			if i == 0 {
				return memory.New(opts...)
			}
			if len(opts) > 0 {
				bad = fmt.Errorf("mutants: %s configures the memory saver, so it must come first in a stack", m.Name)
			}
			return cur
		}
		s := m.New()
		if bad != nil {
			return nil, bad
		}
		b, ok := s.(Base)
		if !ok {
			return nil, fmt.Errorf("mutants: %s is a %T, which cannot be stacked", m.Name, s)
		}
		cur = b
	}
	if cur == nil {
		return nil, fmt.Errorf("mutants: an empty stack")
	}
	return cur, nil
}

// Put implements [spec.Saver].
func (w *Wrapper) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	if w.OnPut != nil {
		return w.OnPut(ctx, cfg, cp, md, nv)
	}
	return w.Inner.Put(ctx, cfg, cp, md, nv)
}

// PutWrites implements [spec.Saver].
func (w *Wrapper) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if w.OnPutWrites != nil {
		return w.OnPutWrites(ctx, cfg, writes, taskID, taskPath)
	}
	return w.Inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
}

// GetTuple implements [spec.Saver].
func (w *Wrapper) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	var (
		t   *spec.Tuple
		err error
	)
	if w.OnGetTuple != nil {
		t, err = w.OnGetTuple(ctx, cfg)
	} else {
		t, err = w.Inner.GetTuple(ctx, cfg)
	}
	if t != nil && w.MapTuple != nil {
		w.MapTuple(t)
	}
	return t, err
}

// List implements [spec.Saver].
func (w *Wrapper) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	var seq iter.Seq2[*spec.Tuple, error]
	if w.OnList != nil {
		seq = w.OnList(ctx, opts)
	} else {
		seq = w.Inner.List(ctx, opts)
	}
	if w.MapTuple == nil {
		return seq
	}
	return func(yield func(*spec.Tuple, error) bool) {
		for t, err := range seq {
			if t != nil {
				w.MapTuple(t)
			}
			if !yield(t, err) {
				return
			}
		}
	}
}

// DeleteThread implements [spec.Saver].
func (w *Wrapper) DeleteThread(ctx context.Context, threadID string) error {
	if w.OnDeleteThread != nil {
		return w.OnDeleteThread(ctx, threadID)
	}
	return w.Inner.DeleteThread(ctx, threadID)
}

// CopyThread implements [spec.ThreadCopier].
func (w *Wrapper) CopyThread(ctx context.Context, src, dst string) error {
	if w.OnCopyThread != nil {
		return w.OnCopyThread(ctx, src, dst)
	}
	return w.Inner.CopyThread(ctx, src, dst)
}

// DeleteForRuns implements [spec.RunDeleter].
func (w *Wrapper) DeleteForRuns(ctx context.Context, runIDs []string) error {
	if w.OnDeleteForRuns != nil {
		return w.OnDeleteForRuns(ctx, runIDs)
	}
	return w.Inner.DeleteForRuns(ctx, runIDs)
}

// Prune implements [spec.Pruner].
func (w *Wrapper) Prune(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) error {
	if w.OnPrune != nil {
		return w.OnPrune(ctx, threadIDs, strategy)
	}
	return w.Inner.Prune(ctx, threadIDs, strategy)
}

// NextVersion implements [spec.VersionGenerator].
func (w *Wrapper) NextVersion(current spec.Version) spec.Version {
	if w.OnNextVersion != nil {
		return w.OnNextVersion(current)
	}
	return w.Inner.NextVersion(current)
}
