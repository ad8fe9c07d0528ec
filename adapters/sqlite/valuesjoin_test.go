package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestValuesJoinPlan checks that the values join is driven by its keys,
// each a search of the blobs key: no scan of blobs, whatever its size.
func TestValuesJoinPlan(t *testing.T) {
	s := openMemory(t)
	for _, n := range []int{2, 10, maxKeysPerQuery} {
		args := make([]any, 0, 4*n)
		for i := range n {
			args = append(args, "t", "", "c", fmt.Sprint(i))
		}
		plan := queryPlan(t, s, valuesJoin(n), args...)
		if !strings.Contains(plan, "SEARCH b USING INDEX sqlite_autoindex_blobs_1 (thread_id=? AND checkpoint_ns=? AND channel=? AND version=?)") ||
			strings.Contains(plan, "SCAN b") {
			t.Errorf("join of %d keys is not a key search per key:\n%s", n, plan)
		}
	}
}

// TestValuesJoinReadsEachKey checks the join on a page whose keys repeat
// channels and threads, miss, or name a cleared channel: each tuple gets
// exactly its values, through the join and through the probes alike.
func TestValuesJoinReadsEachKey(t *testing.T) {
	ctx := context.Background()
	for _, probes := range []int{1, 100} {
		t.Run(fmt.Sprintf("maxProbes=%d", probes), func(t *testing.T) {
			old := maxProbes
			maxProbes = probes
			defer func() { maxProbes = old }()
			s := openMemory(t)
			want := map[string]map[string]any{}
			for _, thread := range []string{"a", "b"} {
				for i := range 5 {
					id := fmt.Sprintf("%s%d", thread, i)
					values := map[string]any{"n": int64(i), "s": strings.Repeat(id, 40), "l": []any{id, int64(i)}}
					versions := spec.Versions{"n": spec.Version(fmt.Sprint(i + 1)), "s": spec.Version(fmt.Sprint(i + 1)), "l": "1", "gone": "1"}
					if i > 0 {
						values["l"] = []any{thread + "0", int64(0)} // version 1 is the first one put
					}
					cp := spec.Checkpoint{ID: fmt.Sprint(i), ChannelValues: values, ChannelVersions: versions}
					mustPut(t, s, spec.Config{ThreadID: thread}, cp, nil, versions)
					want[thread+cp.ID] = values
				}
			}
			n := 0
			for tup, err := range s.List(ctx, spec.ListOptions{AllNamespaces: true}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				got := tup.Checkpoint.ChannelValues
				w := want[tup.Config.ThreadID+tup.Config.CheckpointID]
				if fmt.Sprint(got) != fmt.Sprint(w) {
					t.Errorf("%s/%s: values %v, want %v", tup.Config.ThreadID, tup.Config.CheckpointID, got, w)
				}
				if _, ok := got["gone"]; ok {
					t.Errorf("%s/%s: a channel with no stored value has one", tup.Config.ThreadID, tup.Config.CheckpointID)
				}
			}
			if n != 10 {
				t.Fatalf("listed %d tuples, want 10", n)
			}
		})
	}
}
