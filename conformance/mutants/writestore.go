package mutants

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// writeStore is a side store of pending writes with one deliberate flaw
// chosen by its policy. A mutant built on it still forwards every call to
// the memory adapter (which validates arguments and keeps the checkpoints),
// but reads take their pending writes from the side store. This is how a
// mutant changes storage-level write semantics without touching the memory
// adapter.
type writeStore struct {
	policy writePolicy
	inner  spec.Saver

	mu     sync.Mutex
	writes map[ckey]map[wkey]spec.PendingWrite
}

// writePolicy selects the flaw. The zero policy is the contract.
type writePolicy struct {
	regularLastWins   bool // a repeated regular write replaces the stored one
	specialFirstWins  bool // a special write never replaces one stored by an earlier call
	batchFirstSpecial bool // within one call, the first special write to a channel wins
	channelInKey      bool // the channel is part of the key
	skipSpecialSlots  bool // regular writes are numbered without counting special ones
	ignoreNamespace   bool // the namespace is not part of the key
	dropOnReput       bool // re-putting a checkpoint forgets its writes
	dropIfMissing     bool // writes to a checkpoint not yet put are discarded
	batchRuleOfFirst  bool // a batch is first-wins or last-wins as a whole, by the kind of its first write
	batchRuleMixed    bool // a batch holding a regular write only inserts new keys (LangGraph's SQL savers)
	ignoreTask        bool // the task ID is not part of the key
	ignoreThread      bool // the thread ID is not part of the key
}

type wkey struct {
	task    string
	idx     int
	channel string // only with channelInKey
}

// withWriteStore returns a mutant whose pending writes follow policy.
func withWriteStore(policy writePolicy) *Wrapper {
	w := wrap()
	ws := &writeStore{policy: policy, inner: w.Inner, writes: map[ckey]map[wkey]spec.PendingWrite{}}
	w.OnPut = ws.put
	w.OnPutWrites = ws.putWrites
	w.MapTuple = ws.fill
	w.OnDeleteThread = func(ctx context.Context, thread string) error {
		if err := w.Inner.DeleteThread(ctx, thread); err != nil {
			return err
		}
		ws.dropThread(thread)
		return nil
	}
	w.OnCopyThread = func(ctx context.Context, src, dst string) error {
		if err := w.Inner.CopyThread(ctx, src, dst); err != nil {
			return err
		}
		ws.copyThread(src, dst)
		return nil
	}
	w.OnDeleteForRuns = func(ctx context.Context, runIDs []string) error {
		before, err := collect(ctx, w.Inner, spec.ListOptions{AllNamespaces: true})
		if err != nil {
			return err
		}
		if err := w.Inner.DeleteForRuns(ctx, runIDs); err != nil {
			return err
		}
		return ws.dropVanished(ctx, before)
	}
	w.OnPrune = func(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
		if err := w.Inner.Prune(ctx, threads, strategy); err != nil {
			return err
		}
		for _, th := range threads {
			after, err := threadTuples(ctx, w.Inner, th)
			if err != nil {
				return err
			}
			ws.keepOnly(th, after)
		}
		return nil
	}
	return w
}

func (ws *writeStore) key(thread, ns, id string) ckey {
	if ws.policy.ignoreNamespace {
		ns = ""
	}
	if ws.policy.ignoreThread {
		thread = ""
	}
	return ckey{thread, ns, id}
}

func (ws *writeStore) put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	existed := false
	if ws.policy.dropOnReput && cfg.ThreadID != "" && cp.ID != "" {
		_, err := ws.inner.GetTuple(ctx, spec.Config{ThreadID: cfg.ThreadID, Namespace: cfg.Namespace, CheckpointID: cp.ID})
		existed = err == nil
	}
	out, err := ws.inner.Put(ctx, cfg, cp, md, nv)
	if err == nil && existed {
		ws.mu.Lock()
		delete(ws.writes, ws.key(out.ThreadID, out.Namespace, out.CheckpointID))
		ws.mu.Unlock()
	}
	return out, err
}

func (ws *writeStore) putWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if err := ws.inner.PutWrites(ctx, cfg, writes, taskID, taskPath); err != nil {
		return err
	}
	if ws.policy.dropIfMissing {
		_, err := ws.inner.GetTuple(ctx, cfg)
		if errors.Is(err, spec.ErrNotFound) {
			return nil
		}
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	k := ws.key(cfg.ThreadID, cfg.Namespace, cfg.CheckpointID)
	set := ws.writes[k]
	if set == nil {
		set = map[wkey]spec.PendingWrite{}
		ws.writes[k] = set
	}
	existing := maps.Clone(set)
	inBatch := map[wkey]bool{}
	regular := 0
	batchSpecial := len(writes) > 0 && spec.IsSpecialChannel(writes[0].Channel)
	mixed := slices.ContainsFunc(writes, func(w spec.Write) bool { return !spec.IsSpecialChannel(w.Channel) })
	for i, w := range writes {
		pos := i
		if ws.policy.skipSpecialSlots {
			pos = regular
		}
		idx := spec.WriteIndex(w.Channel, pos)
		if idx >= 0 {
			regular++
		}
		wk := wkey{task: taskID, idx: idx}
		if ws.policy.channelInKey {
			wk.channel = w.Channel
		}
		if ws.policy.ignoreTask {
			wk.task = ""
		}
		_, stored := set[wk]
		switch {
		case ws.policy.batchRuleOfFirst && !batchSpecial && stored:
			continue
		case ws.policy.batchRuleOfFirst && batchSpecial:
		case ws.policy.batchRuleMixed && mixed && stored:
			continue
		case idx >= 0 && stored && !ws.policy.regularLastWins:
			continue
		case idx < 0 && ws.policy.specialFirstWins && hasKey(existing, wk):
			continue
		case idx < 0 && ws.policy.batchFirstSpecial && inBatch[wk]:
			continue
		}
		v, _ := spec.Normalize(w.Value) // the inner saver accepted it
		set[wk] = spec.PendingWrite{TaskID: taskID, Channel: w.Channel, Value: v}
		inBatch[wk] = true
	}
	return nil
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// fill replaces t's pending writes with the side store's.
func (ws *writeStore) fill(t *spec.Tuple) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	set := ws.writes[ws.key(t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID)]
	keys := slices.SortedFunc(maps.Keys(set), func(a, b wkey) int {
		return cmp.Or(cmp.Compare(a.task, b.task), cmp.Compare(a.idx, b.idx), cmp.Compare(a.channel, b.channel))
	})
	t.PendingWrites = make([]spec.PendingWrite, 0, len(keys))
	for _, k := range keys {
		pw := set[k]
		pw.Value = deepCopy(pw.Value)
		t.PendingWrites = append(t.PendingWrites, pw)
	}
}

func (ws *writeStore) dropThread(thread string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for k := range ws.writes {
		if k.thread == thread {
			delete(ws.writes, k)
		}
	}
}

func (ws *writeStore) copyThread(src, dst string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if src == dst {
		return
	}
	for k, set := range ws.writes {
		if k.thread != src {
			continue
		}
		nk := ckey{dst, k.ns, k.id}
		out := map[wkey]spec.PendingWrite{}
		for wk, pw := range set {
			pw.Value = deepCopy(pw.Value)
			out[wk] = pw
		}
		ws.writes[nk] = out
	}
}

// dropVanished forgets the writes of every checkpoint in before that the
// inner saver no longer has.
func (ws *writeStore) dropVanished(ctx context.Context, before []*spec.Tuple) error {
	for _, t := range before {
		_, err := ws.inner.GetTuple(ctx, t.Config)
		if errors.Is(err, spec.ErrNotFound) {
			ws.mu.Lock()
			delete(ws.writes, ws.key(t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID))
			ws.mu.Unlock()
		} else if err != nil {
			return err
		}
	}
	return nil
}

// keepOnly forgets every write of thread except those of the checkpoints in
// kept, as pruning does.
func (ws *writeStore) keepOnly(thread string, kept []*spec.Tuple) {
	keep := map[ckey]bool{}
	for _, t := range kept {
		keep[ws.key(t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID)] = true
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for k := range ws.writes {
		if k.thread == thread && !keep[k] {
			delete(ws.writes, k)
		}
	}
}
