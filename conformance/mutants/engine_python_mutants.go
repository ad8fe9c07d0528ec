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
// Python"). The unit specs never read the latest checkpoint right after
// reading an older one by ID; the engine group's LangGraph Python traces
// do.

func init() {
	register(Mutant{
		Name: "engine-latest-echoes-addressed", Rule: "ENGINE-TRACE-1",
		Description: "A GetTuple of the latest checkpoint right after a GetTuple by ID on the same thread and namespace returns the checkpoint read by ID (a one-entry read cache that ignores the ID), so an engine never sees that the thread moved past the checkpoint it addressed.",
		New: func() spec.Saver {
			w := wrap()
			var mu sync.Mutex
			last := map[[2]string]spec.Config{}
			w.OnGetTuple = func(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
				key := [2]string{cfg.ThreadID, cfg.Namespace}
				mu.Lock()
				prev, cached := last[key]
				delete(last, key)
				if cfg.CheckpointID != "" {
					last[key] = cfg
				}
				mu.Unlock()
				if cfg.CheckpointID == "" && cached {
					cfg = prev
				}
				return w.Inner.GetTuple(ctx, cfg)
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			_ = putCP(ctx, s, "t", "", "b", "a", nil, nil)
			_, _ = s.GetTuple(ctx, spec.Config{ThreadID: "t", CheckpointID: "a"})
			t, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
			if err != nil {
				return errKind(err)
			}
			return t.Config.CheckpointID
		},
	})
}
