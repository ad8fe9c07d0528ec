package mutants

import (
	"context"
	"sync"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Engine-driven mutants for the traffic LangGraph Python 1.2.24 adds: a
// run or update addressed to a checkpoint by ID reads the thread's latest
// checkpoint right after it, to tell whether the thread has moved past the
// one addressed (refengine's package docs, "Checked against LangGraph
// Python"). The mutant here spoils that second read only after a read of
// an engine checkpoint that starts a branch (an update or a fork): the
// model-based and unit specs never put those, and refengine's own
// scenarios continue such a checkpoint only while it is the latest, so
// only the engine group's LangGraph Python traces (sibling_forks) see it.

func init() {
	register(Mutant{
		Name: "engine-latest-echoes-addressed", Rule: "ENGINE-TRACE-1",
		Description: "A GetTuple of the latest checkpoint right after a GetTuple by ID of an update or fork checkpoint (metadata source \"update\" or \"fork\") on the same thread and namespace returns the checkpoint read by ID (a one-entry read cache that ignores the ID), so an engine continuing a branch never sees that the thread moved past it. Other checkpoints read by ID are not cached: reads of the latest stay right for plain GetTuple use (GET-2) and for updates of loop checkpoints (ENGINE-UPDATE-1); only the LangGraph Python traces, which replay a run continuing a superseded update checkpoint, see it.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			last := map[[2]string]spec.Config{}
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				key := [2]string{cfg.ThreadID, cfg.Namespace}
				mu.Lock()
				prev, cached := last[key]
				delete(last, key)
				mu.Unlock()
				if cfg.CheckpointID == "" && cached {
					cfg = prev
				}
				t, err := w.Inner.GetTuple(ctx, cfg)
				if err == nil && cfg.CheckpointID != "" && engineCP(&t.Checkpoint) && branchStart(t.Metadata) {
					mu.Lock()
					last[key] = cfg
					mu.Unlock()
				}
				return t, err
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t"}, engineCheckpoint("a", map[string]any{"value": 1}, nil), spec.Metadata{"source": "update", "step": 0}, spec.Versions{"value": "va"})
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"}, engineCheckpoint("b", map[string]any{"value": 2}, nil), spec.Metadata{"source": "loop", "step": 1}, spec.Versions{"value": "vb"})
			_, _ = s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"})
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
			if err != nil {
				return errKind(err)
			}
			return t.Config.CheckpointID
		},
	})
}

// branchStart reports whether md is that of a checkpoint that starts a
// branch of its own: an update (source "update") or a copy or replay fork
// (source "fork").
func branchStart(md spec.Metadata) bool {
	src, _ := md["source"].(string)
	return src == "update" || src == "fork"
}
