package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/adapters/postgres"
	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/conformance/benchmarks"
	"github.com/checkpointkit/checkpointkit/spec"
)

// result is what one side prints for one saver and one round; the JS side
// prints the same shape without Allocs.
type result struct {
	Side   string    `json:"side"`  // "go" or "js"
	Saver  string    `json:"saver"` // memory, sqlite, postgres, mongo
	Name   string    `json:"name"`  // e.g. "Go memory", "LangGraph.js MemorySaver"
	Iters  int       `json:"iters"`
	Depths []int     `json:"depths"`
	PutMS  float64   `json:"put_ms"`
	GetMS  []float64 `json:"get_ms"`  // per depth
	ListMS []float64 `json:"list_ms"` // per depth
	Allocs *allocs   `json:"allocs,omitempty"`

	round string // from the file name, set by report
}

// allocs are the heap allocations of one call, measured at the first depth.
type allocs struct {
	Put  opAllocs `json:"put"`
	Get  opAllocs `json:"get"`
	List opAllocs `json:"list"`
	// ListPayload is the size of the values one List returns: its tuples'
	// channel values and pending-write values.
	ListPayload int `json:"list_payload_bytes"`
}

// opAllocs are the allocations and allocated bytes of one call.
type opAllocs struct {
	Count float64 `json:"allocs"`
	Bytes float64 `json:"bytes"`
}

// defaultIters is the number of timed calls per figure when -iters is 0.
var defaultIters = map[string]int{"memory": 2000, "sqlite": 500, "postgres": 300, "mongo": 20}

var goNames = map[string]string{
	"memory":   "Go memory",
	"sqlite":   "Go SQLite",
	"postgres": "Go PostgreSQL",
	"mongo":    "Go MongoDB",
	"mongo-pg": "Go MongoDB (FerretDB on PostgreSQL)",
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	saverName := fs.String("saver", "", "memory, sqlite, postgres or mongo")
	iters := fs.Int("iters", 0, "timed calls per figure (0: a default per saver)")
	depthList := fs.String("depths", "10,2000", "history depths of the reads, comma-separated")
	as := fs.String("as", "", "report the result under this saver name (e.g. mongo-pg for the mongo adapter on a FerretDB served from PostgreSQL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	depths, err := parseDepths(*depthList)
	if err != nil {
		return err
	}
	if _, ok := defaultIters[*saverName]; !ok {
		return fmt.Errorf("unknown -saver %q", *saverName)
	}
	n := *iters
	if n <= 0 {
		n = defaultIters[*saverName]
	}
	ctx := context.Background()
	res, err := measure(ctx, *saverName, n, depths)
	if err != nil {
		return err
	}
	if *as != "" {
		res.Saver = *as
		if name, ok := goNames[*as]; ok {
			res.Name = name
		}
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func parseDepths(s string) ([]int, error) {
	var depths []int
	for _, f := range strings.Split(s, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < benchmarks.PeerListLimit {
			return nil, fmt.Errorf("bad depth %q: want integers of at least %d", f, benchmarks.PeerListLimit)
		}
		depths = append(depths, d)
	}
	return depths, nil
}

// opener opens savers over fresh, isolated storage of one backend.
type opener struct {
	name    string
	tmp     string
	seq     int
	closers []func()
}

func (o *opener) open(ctx context.Context) (spec.Saver, error) {
	o.seq++
	storage := fmt.Sprintf("benchpeers_%d_%d", os.Getpid(), o.seq)
	switch o.name {
	case "memory":
		return memory.New(), nil
	case "sqlite":
		// WAL (Open's default) and synchronous=NORMAL, as peers.js sets
		// for SqliteSaver.
		s, err := sqlite.Open(ctx, filepath.Join(o.tmp, storage+".db")+"?_synchronous=NORMAL")
		if err != nil {
			return nil, err
		}
		o.closers = append(o.closers, func() { s.Close() })
		return s, nil
	case "postgres":
		dsn := os.Getenv("CHECKPOINTKIT_POSTGRES_DSN")
		if dsn == "" {
			return nil, errors.New("CHECKPOINTKIT_POSTGRES_DSN is not set")
		}
		s, err := postgres.Open(ctx, dsn, postgres.WithSchema(storage))
		if err != nil {
			return nil, err
		}
		o.closers = append(o.closers, func() {
			s.DropSchema(context.Background())
			s.Close()
		})
		return s, nil
	case "mongo":
		uri := os.Getenv("CHECKPOINTKIT_MONGO_URI")
		if uri == "" {
			return nil, errors.New("CHECKPOINTKIT_MONGO_URI is not set")
		}
		s, err := mongo.Open(ctx, uri, mongo.WithDatabase(storage))
		if err != nil {
			return nil, err
		}
		o.closers = append(o.closers, func() {
			s.Database().Drop(context.Background())
			s.Close()
		})
		return s, nil
	}
	return nil, fmt.Errorf("unknown saver %q", o.name)
}

func (o *opener) close() {
	for _, c := range slices.Backward(o.closers) {
		c()
	}
	if o.tmp != "" {
		os.RemoveAll(o.tmp)
	}
}

func measure(ctx context.Context, name string, iters int, depths []int) (*result, error) {
	tmp, err := os.MkdirTemp("", "benchpeers-")
	if err != nil {
		return nil, err
	}
	o := &opener{name: name, tmp: tmp}
	defer o.close()
	res := &result{Side: "go", Saver: name, Name: goNames[name], Iters: iters, Depths: depths}

	// Put: a fresh thread in fresh storage.
	s, err := o.open(ctx)
	if err != nil {
		return nil, err
	}
	w := benchmarks.NewPeer(s, "put")
	lat := make([]time.Duration, 0, iters)
	for range iters {
		t0 := time.Now()
		if err := w.Put(ctx); err != nil {
			return nil, fmt.Errorf("put: %w", err)
		}
		lat = append(lat, time.Since(t0))
	}
	res.PutMS = ms(median(lat))

	// One history per depth, each in storage of its own.
	hs := make([]*benchmarks.Peer, len(depths))
	for i, d := range depths {
		s, err := o.open(ctx)
		if err != nil {
			return nil, err
		}
		hs[i] = benchmarks.NewPeer(s, fmt.Sprintf("history-%d", d))
		for range d {
			if err := hs[i].Put(ctx); err != nil {
				return nil, fmt.Errorf("populate depth %d: %w", d, err)
			}
		}
	}
	get := func(w *benchmarks.Peer) error { _, err := w.Get(ctx); return err }
	lst := func(w *benchmarks.Peer) error { _, err := w.List(ctx); return err }
	if res.GetMS, err = alternate(hs, iters, get); err != nil {
		return nil, fmt.Errorf("GetTuple: %w", err)
	}
	if res.ListMS, err = alternate(hs, iters, lst); err != nil {
		return nil, fmt.Errorf("List: %w", err)
	}

	// Allocations, on their own loops (no timing in them).
	var a allocs
	n := min(iters, 200)
	if a.Put, err = countAllocs(n, func() error { return w.Put(ctx) }); err != nil {
		return nil, err
	}
	if a.Get, err = countAllocs(n, func() error { return get(hs[0]) }); err != nil {
		return nil, err
	}
	if a.List, err = countAllocs(n, func() error { return lst(hs[0]) }); err != nil {
		return nil, err
	}
	if a.ListPayload, err = hs[0].List(ctx); err != nil {
		return nil, err
	}
	res.Allocs = &a
	return res, nil
}

// alternate times op on every history in turn, rotating which goes first,
// and returns the median latency per history in milliseconds.
func alternate(hs []*benchmarks.Peer, iters int, op func(*benchmarks.Peer) error) ([]float64, error) {
	lat := make([][]time.Duration, len(hs))
	for _, h := range hs { // warm up
		if err := op(h); err != nil {
			return nil, err
		}
	}
	for i := range iters {
		for k := range hs {
			j := (i + k) % len(hs)
			t0 := time.Now()
			if err := op(hs[j]); err != nil {
				return nil, err
			}
			lat[j] = append(lat[j], time.Since(t0))
		}
	}
	out := make([]float64, len(hs))
	for j := range hs {
		out[j] = ms(median(lat[j]))
	}
	return out, nil
}

// countAllocs runs op n times and returns the mean heap allocations and
// bytes per call (like testing.AllocsPerRun, plus bytes).
func countAllocs(n int, op func() error) (opAllocs, error) {
	if err := op(); err != nil { // warm up
		return opAllocs{}, err
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if err := op(); err != nil {
			return opAllocs{}, err
		}
	}
	runtime.ReadMemStats(&after)
	return opAllocs{
		Count: float64(after.Mallocs-before.Mallocs) / float64(n),
		Bytes: float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
	}, nil
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
