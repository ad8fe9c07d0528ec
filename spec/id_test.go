package spec_test

import (
	"regexp"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

var uuidV6 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewCheckpointIDLayout(t *testing.T) {
	tests := []struct {
		step  int
		group string
	}{{0, "8000"}, {3, "8003"}, {-1, "bfff"}, {-2, "bffe"}, {16384, "8000"}, {16383, "bfff"}}
	for _, tt := range tests {
		id := spec.NewCheckpointID(tt.step)
		if !uuidV6.MatchString(id) {
			t.Fatalf("step %d: %q is not a UUIDv6", tt.step, id)
		}
		if got := id[19:23]; got != tt.group {
			t.Errorf("step %d: clock sequence group %q, want %q", tt.step, got, tt.group)
		}
	}
	before := time.Now().Add(-time.Second)
	id := spec.NewCheckpointID(0)
	ts, ok := spec.CheckpointIDTime(id)
	if !ok || ts.Before(before) || ts.After(time.Now().Add(time.Second)) {
		t.Fatalf("embedded time %v (ok=%v) not near now", ts, ok)
	}
	if _, ok := spec.CheckpointIDTime("not-an-id"); ok {
		t.Fatal("garbage parsed as an ID")
	}
}

func TestNewCheckpointIDMonotonicConcurrent(t *testing.T) {
	const workers, each = 8, 2000
	results := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, each)
			for i := range ids {
				ids[i] = spec.NewCheckpointID(i)
			}
			results[w] = ids
		}()
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	for _, ids := range results {
		if !sort.StringsAreSorted(ids) {
			t.Fatal("IDs from one goroutine are not strictly increasing")
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] == ids[i-1] {
				t.Fatal("duplicate consecutive ID")
			}
		}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("duplicate ID %s", id)
			}
			seen[id] = true
		}
	}
	// Across goroutines, timestamps must be unique too: the 60-bit prefix
	// (everything before the clock sequence) never repeats.
	prefixes := make(map[string]bool, len(seen))
	for id := range seen {
		p := id[:18]
		if prefixes[p] {
			t.Fatalf("timestamp prefix %s reused", p)
		}
		prefixes[p] = true
	}
}

func FuzzNewCheckpointIDOrder(f *testing.F) {
	f.Add(0, 5)
	f.Fuzz(func(t *testing.T, a, b int) {
		first, second := spec.NewCheckpointID(a), spec.NewCheckpointID(b)
		if first >= second {
			t.Fatalf("%s (step %d) not before %s (step %d)", first, a, second, b)
		}
	})
}
