package benchmarks

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// PeerPayload is the size of the value the peer workload stores per put.
const PeerPayload = 1024

// PeerListLimit is the Limit of the peer workload's List; every history
// must be at least this deep.
const PeerListLimit = 10

// PeerDepths are the history depths of the peer workload's reads.
var PeerDepths = []int{10, 2_000}

// Peer is the workload ci/bench-peers compares with LangGraph.js's savers,
// on one thread of one saver: Put stores a checkpoint whose one channel holds
// a PeerPayload-byte string, plus a PutWrites of two writes (that string and
// an integer); Get reads the latest checkpoint; List lists PeerListLimit.
type Peer struct {
	Saver   spec.Saver
	Thread  string
	parent  string
	version spec.Version
	step    int
	payload string
	next    func(spec.Version) spec.Version
}

// NewPeer returns the peer workload on thread of s.
func NewPeer(s spec.Saver, thread string) *Peer {
	p := &Peer{Saver: s, Thread: thread, payload: strings.Repeat("x", PeerPayload), next: spec.NextVersion}
	if vg, ok := s.(spec.VersionGenerator); ok {
		p.next = vg.NextVersion
	}
	return p
}

// Put is one Put plus one PutWrites of two writes.
func (p *Peer) Put(ctx context.Context) error {
	p.version = p.next(p.version)
	nv := spec.Versions{"messages": p.version}
	cp := spec.Checkpoint{
		V: 4, ID: spec.NewCheckpointID(p.step), TS: time.Now().UTC().Format(time.RFC3339Nano),
		ChannelValues:   map[string]any{"messages": p.payload},
		ChannelVersions: nv,
		VersionsSeen:    map[string]spec.Versions{},
	}
	cfg, err := p.Saver.Put(ctx, spec.Config{ThreadID: p.Thread, CheckpointID: p.parent}, cp,
		spec.Metadata{"source": "loop", "step": p.step}, nv)
	if err != nil {
		return err
	}
	writes := []spec.Write{{Channel: "messages", Value: p.payload}, {Channel: "step", Value: p.step}}
	if err := p.Saver.PutWrites(ctx, cfg, writes, fmt.Sprintf("task-%d", p.step), ""); err != nil {
		return err
	}
	p.parent = cfg.CheckpointID
	p.step++
	return nil
}

// Get reads the latest checkpoint and checks it is the last one put.
func (p *Peer) Get(ctx context.Context) (*spec.Tuple, error) {
	t, err := p.Saver.GetTuple(ctx, spec.Config{ThreadID: p.Thread})
	if err != nil {
		return nil, err
	}
	if t.Checkpoint.ID != p.parent {
		return nil, fmt.Errorf("GetTuple returned %s, want the latest %s", t.Checkpoint.ID, p.parent)
	}
	return t, nil
}

// List lists PeerListLimit checkpoints and returns the size of the values they hold
// (channel values and pending writes; 8 bytes for a non-string value).
func (p *Peer) List(ctx context.Context) (payload int, err error) {
	n := 0
	for t, err := range p.Saver.List(ctx, spec.ListOptions{ThreadID: p.Thread, Limit: PeerListLimit}) {
		if err != nil {
			return 0, err
		}
		n++
		for _, v := range t.Checkpoint.ChannelValues {
			payload += valueSize(v)
		}
		for _, w := range t.PendingWrites {
			payload += valueSize(w.Value)
		}
	}
	if n != PeerListLimit {
		return 0, fmt.Errorf("List returned %d tuples, want %d", n, PeerListLimit)
	}
	return payload, nil
}

// ListBytes returns the bytes a List allocates per call in steady state:
// the least, over loops loops of runs calls, of the bytes allocated per
// call. A single loop also counts what other goroutines allocate meanwhile
// and, when the garbage collector runs in it, the refilling of buffers a
// saver recycles through sync.Pool: a few hundred bytes per call that
// depend on the rest of the process, not on the read.
func (p *Peer) ListBytes(ctx context.Context, runs, loops int) (float64, error) {
	perCall := math.Inf(1)
	for range loops {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if _, err := p.List(ctx); err != nil {
				return 0, err
			}
		}
		runtime.ReadMemStats(&after)
		perCall = min(perCall, float64(after.TotalAlloc-before.TotalAlloc)/float64(runs))
	}
	return perCall, nil
}

func valueSize(v any) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	}
	return 8
}

// PopulatePeer puts depth checkpoints with the peer workload on a thread of
// s and returns the workload, ready to read.
func PopulatePeer(tb testing.TB, s spec.Saver, depth int) *Peer {
	tb.Helper()
	p := NewPeer(s, fmt.Sprintf("peer-%d", depth))
	for range depth {
		if err := p.Put(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// RunPeers runs the peer workload as Go benchmarks, reporting allocations:
// Put, then Get and List at each of PeerDepths (each history in a saver of
// its own). List also reports its payload in bytes ("payload-B/op"), so
// B/op can be read against it.
func RunPeers(b *testing.B, newSaver Factory) {
	ctx := context.Background()
	b.Run("Put", func(b *testing.B) {
		p := NewPeer(newSaver(b), "peer-put")
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Put(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, depth := range PeerDepths {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			p := PopulatePeer(b, newSaver(b), depth)
			b.Run("Get", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := p.Get(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("List", func(b *testing.B) {
				b.ReportAllocs()
				payload := 0
				for b.Loop() {
					n, err := p.List(ctx)
					if err != nil {
						b.Fatal(err)
					}
					payload = n
				}
				b.ReportMetric(float64(payload), "payload-B/op")
			})
		})
	}
}
