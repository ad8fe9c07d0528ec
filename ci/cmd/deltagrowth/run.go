package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/checkpointkit/checkpointkit/refengine"
	"github.com/checkpointkit/checkpointkit/spec"
)

// point is one measurement: one saver, one mode, one step. The Python side
// prints the same shape.
type point struct {
	Side  string `json:"side"`  // "go" or "py"
	Saver string `json:"saver"` // memory, sqlite, postgres, mongo
	Name  string `json:"name"`  // e.g. "Go SQLite", "SqliteSaver"
	Mode  string `json:"mode"`  // list, delta100, delta50
	Step  int    `json:"step"`
	Iters int    `json:"iters"`
	// Bytes is the storage the thread occupies after Step steps.
	Bytes int64 `json:"bytes"`
	// ReadMS is the median latency of one read, in milliseconds.
	ReadMS float64 `json:"read_ms"`
	// Replayed is the number of writes the read's delta history returned
	// (0 for a list, or when the latest checkpoint holds a snapshot).
	Replayed int `json:"replayed"`
	// History reports whether the read needed the delta history at all.
	History bool `json:"history"`
	// Queries is the number of queries or commands one read sent, when
	// the side can count them (-1: not counted).
	Queries int `json:"queries"`
}

var goNames = map[string]string{
	"memory":   "Go memory",
	"sqlite":   "Go SQLite",
	"postgres": "Go PostgreSQL",
	"mongo":    "Go MongoDB",
}

// modeChannels maps each mode to the messages channel it declares.
var modeChannels = map[string]func() refengine.Channel{
	"list":     func() refengine.Channel { return refengine.Reducer(refengine.AppendList, []any{}) },
	"delta100": func() refengine.Channel { return refengine.Delta(refengine.AppendDelta, nil, 100) },
	"delta50":  func() refengine.Channel { return refengine.Delta(refengine.AppendDelta, nil, 50) },
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	saverName := fs.String("saver", "", "memory, sqlite, postgres or mongo")
	stepList := fs.String("steps", "10,100,1000", "steps at which to measure, ascending; the last is the thread's length")
	iters := fs.Int("iters", 50, "timed reads per figure")
	modeList := fs.String("modes", "list,delta100,delta50", "channels to measure")
	msgSize := fs.Int("msg", 500, "bytes per message")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, ok := goNames[*saverName]; !ok {
		return fmt.Errorf("unknown -saver %q", *saverName)
	}
	steps, err := parseSteps(*stepList)
	if err != nil {
		return err
	}
	modes := strings.Split(*modeList, ",")
	for _, m := range modes {
		if _, ok := modeChannels[m]; !ok {
			return fmt.Errorf("unknown mode %q", m)
		}
	}
	tmp, err := os.MkdirTemp("", "deltagrowth-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	enc := json.NewEncoder(os.Stdout)
	for i, mode := range modes {
		storage := fmt.Sprintf("deltagrowth_%d_%d", os.Getpid(), i)
		st, cs, err := openStore(ctx, *saverName, tmp, storage)
		if err != nil {
			return err
		}
		err = measureMode(ctx, st, cs, mode, steps, *iters, *msgSize, func(p point) error {
			p.Side, p.Saver, p.Name = "go", *saverName, goNames[*saverName]
			return enc.Encode(p)
		})
		st.close()
		if err != nil {
			return fmt.Errorf("%s %s: %w", *saverName, mode, err)
		}
	}
	return nil
}

func parseSteps(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("bad -steps %q: want ascending positive integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// message returns n bytes of random base-64 text.
func message(r *rand.Rand, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// measureMode grows one thread step by step and emits a point at each of
// steps.
func measureMode(ctx context.Context, st *store, cs *countingSaver, mode string, steps []int, iters, msgSize int, emit func(point) error) error {
	r := rand.New(rand.NewPCG(1, 2))
	g, err := refengine.NewStateGraph().
		AddKey("messages", modeChannels[mode]()).
		AddKey("turn", refengine.LastValue()).
		AddNode("bot", func(context.Context, refengine.State) (refengine.Update, error) {
			return refengine.Update{"messages": []any{message(r, msgSize)}}, nil
		}).
		AddEdge(refengine.Start, "bot").
		Compile(refengine.CompileOptions{Saver: st.saver})
	if err != nil {
		return err
	}
	cfg := refengine.RunConfig{ThreadID: "growth", Durability: refengine.DurabilitySync, Deterministic: true}
	done := 0
	for _, target := range steps {
		for ; done < target; done++ {
			if _, err := g.Invoke(ctx, refengine.State{"turn": int64(done + 1)}, cfg); err != nil {
				return fmt.Errorf("step %d: %w", done+1, err)
			}
		}
		if cs != nil {
			cs.on.Store(false) // reads encode nothing the saver keeps
		}
		p, err := measureReads(ctx, st, mode, target, iters)
		if cs != nil {
			cs.on.Store(true)
		}
		if err != nil {
			return fmt.Errorf("step %d: %w", target, err)
		}
		if p.Bytes, err = st.bytes(ctx); err != nil {
			return fmt.Errorf("step %d: bytes: %w", target, err)
		}
		if err := emit(p); err != nil {
			return err
		}
	}
	return nil
}

// measureReads times iters reads of the thread's latest state after step
// steps, after one warm-up read.
func measureReads(ctx context.Context, st *store, mode string, step, iters int) (point, error) {
	p := point{Mode: mode, Step: step, Iters: iters, Queries: -1}
	lat := make([]time.Duration, 0, iters)
	// Start the reads with the garbage of the writes collected, so that a
	// collection the writes made due does not land on them.
	runtime.GC()
	for i := range iters + 1 {
		t0 := time.Now()
		n, replayed, history, err := read(ctx, st.saver)
		d := time.Since(t0)
		if err != nil {
			return p, err
		}
		if n != step {
			return p, fmt.Errorf("read %d messages, want %d", n, step)
		}
		p.Replayed, p.History = replayed, history
		if i > 0 {
			lat = append(lat, d)
		}
	}
	slices.Sort(lat)
	p.ReadMS = float64(lat[len(lat)/2].Nanoseconds()) / 1e6
	return p, nil
}

// read loads the messages of the thread's latest checkpoint as the
// engine's load does, and returns how many there are, how many writes the
// delta history replayed and whether it was read.
func read(ctx context.Context, s spec.Saver) (n, replayed int, history bool, err error) {
	t, err := s.GetTuple(ctx, spec.Config{ThreadID: "growth"})
	if err != nil {
		return 0, 0, false, err
	}
	if v, ok := t.Checkpoint.ChannelValues["messages"]; ok {
		if snap, ok := v.(spec.DeltaSnapshot); ok {
			v = snap.Value
		}
		l, _ := v.([]any)
		return len(l), 0, false, nil
	}
	hs, err := spec.ReadDeltaHistory(ctx, s, t.Config, []string{"messages"})
	if err != nil {
		return 0, 0, true, err
	}
	h, ok := hs["messages"]
	if !ok {
		return 0, 0, true, errors.New("no history for messages")
	}
	var base any = []any{}
	if h.HasSeed {
		base = h.Seed
		if snap, ok := base.(spec.DeltaSnapshot); ok {
			base = snap.Value
		}
	}
	writes := make([]any, len(h.Writes))
	for i, w := range h.Writes {
		writes[i] = w.Value
	}
	v, err := refengine.AppendDelta(base, writes)
	if err != nil {
		return 0, 0, true, err
	}
	l, _ := v.([]any)
	return len(l), len(h.Writes), true, nil
}
