package enginetest_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

var update = flag.Bool("update", false, "rewrite the golden traces in testdata/")

// TestScenarios runs every engine scenario on the in-memory adapter.
func TestScenarios(t *testing.T) {
	for _, sc := range enginetest.All() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			env := &enginetest.Env{Saver: memory.New()}
			if err := sc.Run(context.Background(), env); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// seqVersions makes channel versions reproducible: the counter of the
// current version plus one, and a sequence number as the fraction (unique,
// so forks never share a version).
type seqVersions struct {
	spec.Saver
	seq atomic.Int64
}

func (s *seqVersions) NextVersion(cur spec.Version) spec.Version {
	n := s.seq.Add(1)
	next := spec.NextVersion(cur) // counter+1 with a random fraction
	prefix := string(next[:32])
	return spec.Version(prefix + "." + padInt(n))
}

func padInt(n int64) string {
	s := []byte("0000000000000000")
	for i := len(s) - 1; i >= 0 && n > 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}

// nondeterministic scenarios use concurrent tasks, so their traces vary.
var nondeterministic = map[string]bool{"linear_concurrent": true, "fanout_failure": true, "send_map_reduce": true}

// TestGoldenTraces records each deterministic scenario with reproducible
// IDs and versions, compares the trace with testdata/<name>.json (after
// trace.Normalize) and replays the golden trace against a fresh saver.
func TestGoldenTraces(t *testing.T) {
	for _, sc := range enginetest.All() {
		if nondeterministic[sc.Name] {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			env := &enginetest.Env{
				Saver: &seqVersions{Saver: memory.New()},
				NewID: trace.SequentialIDs(time.Date(2025, 4, 2, 15, 20, 1, 0, time.UTC)),
			}
			if err := sc.Run(context.Background(), env); err != nil {
				t.Fatal(err)
			}
			got, err := trace.Marshal(env.Calls)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", sc.Name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			ng, err := trace.Normalize(got)
			if err != nil {
				t.Fatal(err)
			}
			nw, err := trace.Normalize(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ng, nw) {
				t.Errorf("trace differs from %s (run with -update after checking the change):\n%s", path, firstDiff(nw, ng))
			}
			calls, err := trace.Unmarshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if err := trace.Replay(context.Background(), memory.New(), calls); err != nil {
				t.Errorf("replaying %s on a fresh saver: %v", path, err)
			}
		})
	}
}

// TestGoldenTracesEmbedded checks that RefengineGoldenTraces returns one trace per
// deterministic scenario and that each replays on a fresh saver.
func TestGoldenTracesEmbedded(t *testing.T) {
	traces, err := enginetest.RefengineGoldenTraces()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, sc := range enginetest.All() {
		if !nondeterministic[sc.Name] {
			want++
		}
	}
	if len(traces) != want {
		t.Fatalf("%d golden traces embedded, want %d", len(traces), want)
	}
	for _, tr := range traces {
		if err := trace.Replay(context.Background(), memory.New(), tr.Calls); err != nil {
			t.Errorf("%s: %v", tr.Name, err)
		}
	}
}

// firstDiff shows the first line where two traces differ.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + padInt(int64(i+1)) + ":\n  want: " + string(w) + "\n  got:  " + string(g)
		}
	}
	return ""
}
