package mutants

import (
	"context"
	"slices"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Mutants of the core halves of three rules that were split by tier once
// LangGraph Python's engine was read as evidence (conformance/TIERS.md):
// each breaks only the part that engine depends on, and leaves the strict
// rule it was split from (WRITES-9, PUT-14, VALUE-6) as intact as the
// overlap of the two rules allows.

// reverseRegularWritesPerTask reverses, for each task ID, the order of its
// regular writes (index >= 0) in place: the slots a task's regular writes
// occupy stay the same, and so do its special writes and the order of the
// tasks.
func reverseRegularWritesPerTask(pws []spec.PendingWrite) {
	slots := map[string][]int{}
	var tasks []string
	for i, w := range pws {
		if spec.IsSpecialChannel(w.Channel) {
			continue
		}
		if _, ok := slots[w.TaskID]; !ok {
			tasks = append(tasks, w.TaskID)
		}
		slots[w.TaskID] = append(slots[w.TaskID], i)
	}
	for _, task := range tasks {
		idx := slots[task]
		vals := make([]spec.PendingWrite, len(idx))
		for j, i := range idx {
			vals[j] = pws[i]
		}
		slices.Reverse(vals)
		for j, i := range idx {
			pws[i] = vals[j]
		}
	}
}

// floatTopLevelInts turns the top-level int64 values of md into float64,
// leaving nested values alone.
func floatTopLevelInts(md spec.Metadata) {
	for k, v := range md {
		if i, ok := v.(int64); ok {
			md[k] = float64(i)
		}
	}
}

func init() {
	register(Mutant{
		Name: "task-writes-reversed", Rule: "WRITES-13",
		Description: "The regular writes of each task come back in reverse index order; tasks and special writes keep their places.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) { reverseRegularWritesPerTask(t.PendingWrites) }
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_ = putCP(ctx, s, "t", "", "a", "", nil, nil)
			putW(ctx, s, "a", "task", wr("log", "first"), wr(spec.ErrorChannel, "e"), wr("log", "second"), wr("other", 3))
			return writesOf(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "updated-channels-shortened", Rule: "PUT-15",
		Description: "A non-empty UpdatedChannels of two or more channels reads back without its last channel.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) {
				if n := len(t.Checkpoint.UpdatedChannels); n >= 2 {
					t.Checkpoint.UpdatedChannels = slices.Clone(t.Checkpoint.UpdatedChannels[:n-1])
				}
			}
			return w
		},
		Witness: func(ctx context.Context, s spec.Saver) any {
			_, _ = s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{V: 4, ID: "a", UpdatedChannels: []string{"branch:to:review", "draft"}}, nil, nil)
			return get(ctx, s, "t", "", "a")
		},
	})
	register(Mutant{
		Name: "metadata-top-level-int-as-float", Rule: "VALUE-11",
		Description: "Top-level integer metadata values, step included, read back as float64; nested integers stay int64.",
		New: func() spec.Saver {
			w := wrap()
			w.MapTuple = func(t *spec.Tuple) { floatTopLevelInts(t.Metadata) }
			return w
		},
		Witness: witnessMeta(spec.Metadata{"step": 3, "source": "loop"}),
	})
}
