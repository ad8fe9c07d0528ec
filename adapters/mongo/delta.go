package mongo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/adapters/internal/deltaprep"
	"github.com/checkpointkit/checkpointkit/spec"
)

var _ spec.DeltaHistoryReader = (*Saver)(nil)

// DeltaHistory implements [spec.DeltaHistoryReader] with a bounded number
// of queries whatever the length of the chain or of the thread (FerretDB
// has neither $graphLookup nor $lookup): the parent links and value
// references of the checkpoints at and below the target are read a page at
// a time, sized by the counters in the target's metadata, and walked in
// memory, finds of the referenced values' has flags cutting the walk at
// each channel's seed (deltaWalk: one page and one has-flag find in the
// common case, at most four and five); the chain is then read like a page
// of List (assemble:
// fences, values, writes), plus one find for the task paths of its write
// batches. Writes of one ancestor come in [spec.WriteOrder] (task path,
// task ID, index).
func (s *Saver) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (out map[string]spec.DeltaHistory, err error) {
	defer classify(&err)
	err = retryLost(ctx, func() error {
		out, err = s.deltaHistory(ctx, cfg, channels)
		return err
	})
	return out, err
}

// deltaHistory is one attempt of DeltaHistory.
func (s *Saver) deltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	out, want, err := deltaprep.Prepare(ctx, "mongo", cfg, channels)
	if err != nil || len(want) == 0 {
		return out, err
	}
	op := fmt.Sprintf("delta history thread %q namespace %q", cfg.ThreadID, cfg.Namespace)
	targetID, hint := cfg.CheckpointID, -1
	if targetID == "" {
		t, err := s.latest(ctx, cfg.ThreadID, cfg.Namespace)
		if err != nil {
			return nil, wrapErr(ctx, op, err)
		}
		if t == nil {
			return out, nil
		}
		targetID, hint = t.Config.CheckpointID, knownHint(t.Metadata, want)
	}
	target, chain, fs, err := s.deltaWalk(ctx, cfg.ThreadID, cfg.Namespace, targetID, want, hint)
	if err != nil {
		return nil, wrapErr(ctx, op, err)
	}
	if target == nil {
		return out, nil
	}
	keys := bson.A{target.Key}
	ids := make([]string, len(chain))
	for i, d := range chain {
		keys = append(keys, d.Key)
		ids[i] = d.ID
	}
	cur, err := s.checkpoints.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}, mopts.Find().SetBatchSize(deltaBatch))
	if err != nil {
		return nil, wrapErr(ctx, op, err)
	}
	var docs []checkpointDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrapErr(ctx, op, err)
	}
	tuples, err := s.assemble(ctx, docs, fs)
	if err != nil {
		return nil, wrapErr(ctx, op, err)
	}
	paths, err := s.taskPaths(ctx, cfg.ThreadID, cfg.Namespace, ids)
	if err != nil {
		return nil, wrapErr(ctx, op, err)
	}
	byID := make(map[string]*spec.Tuple, len(tuples))
	for _, t := range tuples {
		byID[t.Config.CheckpointID] = t
	}
	if byID[targetID] == nil {
		return out, nil // not visible
	}
	if err := foldTuples(byID, paths, targetID, want, out); err != nil {
		return nil, fmt.Errorf("mongo: %s: %w", op, err)
	}
	return out, nil
}

// skelDoc is the part of a checkpoint document the delta walk reads.
type skelDoc struct {
	Key    string     `bson:"_id"`
	ID     string     `bson:"id"`
	Parent string     `bson:"parent"`
	Refs   []valueRef `bson:"refs"`
	Meta   payload    `bson:"meta,omitempty"` // read for counters and runs only
	Thread string     `bson:"thread"`
	NS     string     `bson:"ns"`
}

// hasValues reads which values of the channels want that docs reference
// hold a value (by value _id): one query per deltaBatch values.
func (s *Saver) hasValues(ctx context.Context, docs []*skelDoc, want []string) (map[string]bool, error) {
	var keys bson.A
	seen := map[string]bool{}
	for _, d := range docs {
		for _, r := range d.Refs {
			k := valueKey(d.Thread, d.NS, r.Channel, spec.Version(r.Version))
			if slices.Contains(want, r.Channel) && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	has := map[string]bool{}
	for chunk := range slices.Chunk(keys, deltaBatch) {
		cur, err := s.values.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: chunk}}}},
			mopts.Find().SetProjection(bson.D{{Key: "has", Value: 1}}).SetBatchSize(deltaBatch))
		if err != nil {
			return nil, err
		}
		var vals []struct {
			Key string `bson:"_id"`
			Has bool   `bson:"has"`
		}
		if err := cur.All(ctx, &vals); err != nil {
			return nil, err
		}
		for _, v := range vals {
			has[v.Key] = v.Has
		}
	}
	return has, nil
}

// cutChain returns path up to the ancestor where the last channel of want
// meets a stored value, and whether every channel of want met one.
func cutChain(path []*skelDoc, want []string, has map[string]bool) ([]*skelDoc, bool) {
	remaining := slices.Clone(want)
	var chain []*skelDoc
	for _, d := range path {
		if len(remaining) == 0 {
			break
		}
		chain = append(chain, d)
		for _, r := range d.Refs {
			if has[valueKey(d.Thread, d.NS, r.Channel, spec.Version(r.Version))] {
				remaining = slices.DeleteFunc(remaining, func(ch string) bool { return ch == r.Channel })
			}
		}
	}
	return chain, len(remaining) == 0
}

// taskPaths reads, with one query, the task path of every task that wrote
// against the checkpoints ids of thread and ns: the path of its first
// batch.
func (s *Saver) taskPaths(ctx context.Context, thread, ns string, ids []string) (map[cpTask]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cur, err := s.writes.Find(ctx, bson.D{{Key: "thread", Value: thread}, {Key: "ns", Value: ns}, {Key: "cid", Value: bson.D{{Key: "$in", Value: ids}}}},
		mopts.Find().SetProjection(bson.D{{Key: "cid", Value: 1}, {Key: "task", Value: 1}, {Key: "seq", Value: 1}, {Key: "path", Value: 1}}).
			SetBatchSize(deltaBatch))
	if err != nil {
		return nil, err
	}
	var batches []pathDoc
	if err := cur.All(ctx, &batches); err != nil {
		return nil, err
	}
	// Last written first, so that the first batch of a task wins below.
	slices.SortFunc(batches, func(a, b pathDoc) int { return cmp.Compare(b.Seq, a.Seq) })
	out := make(map[cpTask]string, len(batches))
	for _, b := range batches {
		out[cpTask{b.CID, b.Task}] = b.Path
	}
	return out, nil
}

// pathDoc is the part of a write batch taskPaths reads.
type pathDoc struct {
	CID  string `bson:"cid"`
	Task string `bson:"task"`
	Seq  int64  `bson:"seq"`
	Path string `bson:"path"`
}

// cpTask names the writes of one task against one checkpoint.
type cpTask struct{ cid, task string }

// foldTuples walks the tuples from the target's parent, as
// spec.WalkDeltaHistory does over GetTuple, ordering each ancestor's writes
// by task path, task ID and index, and fills out.
func foldTuples(byID map[string]*spec.Tuple, paths map[cpTask]string, targetID string, want []string, out map[string]spec.DeltaHistory) error {
	remaining := slices.Clone(want)
	var visited []*spec.Tuple
	seen := map[string]bool{targetID: true}
	for cur := byID[targetID].Parent; cur != nil && len(remaining) > 0; {
		if seen[cur.CheckpointID] {
			break // the parent links loop: the walk ends, as spec.WalkDeltaHistory's
		}
		seen[cur.CheckpointID] = true
		t := byID[cur.CheckpointID]
		if t == nil {
			break
		}
		// Writes come in (task ID, index) order; a stable sort by task path
		// then task ID gives (task path, task ID, index).
		writes := slices.Clone(t.PendingWrites)
		slices.SortStableFunc(writes, func(a, b spec.PendingWrite) int {
			return cmp.Or(strings.Compare(paths[cpTask{t.Config.CheckpointID, a.TaskID}], paths[cpTask{t.Config.CheckpointID, b.TaskID}]),
				strings.Compare(a.TaskID, b.TaskID))
		})
		t.PendingWrites = slices.DeleteFunc(writes, func(w spec.PendingWrite) bool { return !slices.Contains(remaining, w.Channel) })
		visited = append(visited, t)
		for _, ch := range slices.Clone(remaining) {
			if v, ok := t.Checkpoint.ChannelValues[ch]; ok {
				out[ch] = spec.DeltaHistory{Seed: v, HasSeed: true, Writes: out[ch].Writes}
				remaining = slices.DeleteFunc(remaining, func(c string) bool { return c == ch })
			}
		}
		cur = t.Parent
	}
	for i := len(visited) - 1; i >= 0; i-- {
		for _, w := range visited[i].PendingWrites {
			h := out[w.Channel]
			h.Writes = append(h.Writes, w)
			out[w.Channel] = h
		}
	}
	return nil
}

// deltaKeep returns the ancestors of t that its delta channels (named in its
// metadata, spec.DeltaChannels) need back to their seeds: what a prune
// keeping t must keep too (SPEC.md DELTA-12). A checkpoint without delta
// channels needs none, and costs no query; one with them costs deltaWalk's
// bounded finds.
func (s *Saver) deltaKeep(ctx context.Context, t *spec.Tuple) ([]string, error) {
	want := spec.DeltaChannels(t.Metadata)
	if len(want) == 0 {
		return nil, nil
	}
	target, chain, _, err := s.deltaWalk(ctx, t.Config.ThreadID, t.Config.Namespace, t.Config.CheckpointID, want, knownHint(t.Metadata, want))
	if err != nil || target == nil {
		return nil, err
	}
	ids := make([]string, len(chain))
	for i, d := range chain {
		ids[i] = d.ID
	}
	return ids, nil
}

// deltaBatch is the batch size of the delta walk's finds: large enough that
// a chain of thousands of ancestors comes back in one reply, small enough
// that the server never allocates for more (FerretDB sizes its batch by it).
const deltaBatch = 4096
