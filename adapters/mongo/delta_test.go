package mongo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// TestDelta runs the adapters' shared delta-history scenarios (package
// savertest) on fresh savers.
func TestDelta(t *testing.T) {
	savertest.RunDelta(t, func(t *testing.T) savertest.DeltaSaver { return saverT(t) })
}

// TestDeltaRoundTrips checks, with the command log of
// BenchmarkPeersCommands, that DeltaHistory sends as many commands for a
// chain of 300 ancestors as for one of 3 (getMores aside) when the
// metadata holds the engines' counters, and at most a fixed few more
// without them.
func TestDeltaRoundTrips(t *testing.T) {
	ctx := context.Background()
	s, log := monitoredSaver(t)
	total := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	// A first read, not counted: the client connects.
	savertest.BuildSteps(t, s, "warm", "", savertest.SnapshotChain(1))
	if _, err := s.DeltaHistory(ctx, spec.Config{ThreadID: "warm"}, []string{"msgs"}); err != nil {
		t.Fatal(err)
	}
	for _, counters := range []bool{true, false} {
		counts := map[int]map[string]int{}
		for _, n := range []int{3, 300} {
			thread := fmt.Sprintf("rt%d-%v", n, counters)
			steps := savertest.SnapshotChain(n)
			if counters {
				for i := range steps {
					steps[i].MD = spec.Metadata{spec.DeltaCountersKey: map[string]any{"msgs": []any{int64(i), int64(i)}}}
				}
			}
			savertest.BuildSteps(t, s, thread, "", steps)
			log.reset()
			h, err := s.DeltaHistory(ctx, spec.Config{ThreadID: thread}, []string{"msgs"})
			if err != nil {
				t.Fatal(err)
			}
			counts[n], _ = log.snapshot()
			// getMore continues a reply past the server's batch: it grows with
			// the bytes returned (assemble's value and write reads use the
			// default batch), not with queries per ancestor. Logged, not compared.
			getMores := 0
			for key, c := range counts[n] {
				if strings.HasPrefix(key, "getMore ") {
					getMores += c
					delete(counts[n], key)
				}
			}
			t.Logf("counters %v, chain of %d: %d getMores", counters, n, getMores)
			if got := len(h["msgs"].Writes); got != n-1 || !h["msgs"].HasSeed {
				t.Fatalf("chain of %d: %d writes, seed %v", n, got, h["msgs"].HasSeed)
			}
		}
		t.Logf("counters %v: commands per DeltaHistory call: chain of 3 %v, chain of 300 %v", counters, counts[3], counts[300])
		switch {
		case counters && fmt.Sprint(counts[3]) != fmt.Sprint(counts[300]):
			t.Errorf("with counters, commands per DeltaHistory call: chain of 3 %v, chain of 300 %v", counts[3], counts[300])
		case total(counts[300]) > total(counts[3])+4:
			// At most two more pages of parent links below the target (the
			// second one the rest of the range) and their has flags.
			t.Errorf("without counters, commands per DeltaHistory call: chain of 3 %v, chain of 300 %v", counts[3], counts[300])
		}
	}
}
