package bridge_test

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The test binary doubles as a bridge server: with helperEnv set, TestMain
// serves instead of testing (the os/exec helper-process pattern), so the
// protocol tests run against real processes whose savers can block, crash
// or lack capabilities on request.
const (
	helperEnv    = "CHECKPOINTKIT_BRIDGE_TEST_HELPER"
	helperBinEnv = "CHECKPOINTKIT_BRIDGE_TEST_SAVER_BIN"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(bridgetest.Main(m))
}

// helperCmd returns the command that runs this test binary as a helper
// server in mode.
func helperCmd(t testing.TB, mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperBinEnv+"="+bridgetest.SaverBin(t))
	return cmd
}

// startHelper starts a helper server and closes it when the test ends.
func startHelper(t testing.TB, mode string, opts ...bridge.Option) *bridge.Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := bridge.Start(ctx, helperCmd(t, mode), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func runHelper(mode string) int {
	ctx := context.Background()
	serve := func(open bridge.Opener) int {
		if err := bridge.Serve(ctx, os.Stdin, os.Stdout, open); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		return 0
	}
	switch mode {
	case "gate":
		fmt.Fprintln(os.Stderr, "gate server ready")
		return serve(func(context.Context) (spec.Saver, error) { return newGate(), nil })
	case "limited": // a saver with no optional capability
		return serve(func(context.Context) (spec.Saver, error) { return struct{ spec.Saver }{memory.New()}, nil })
	case "walker": // a memory saver whose delta history is LangGraph's base walk
		return serve(func(context.Context) (spec.Saver, error) { return walker{memory.New()}, nil })
	case "stubborn": // serves, then neither exits nor dies of SIGTERM
		signal.Ignore(syscall.SIGTERM)
		serve(func(context.Context) (spec.Saver, error) { return memory.New(), nil })
		hang()
	case "garbage": // answers hello, then writes a line that is no message
		in := bufio.NewScanner(os.Stdin)
		for n := 0; in.Scan(); n++ {
			if n == 0 {
				fmt.Println(`{"id":1,"result":{"protocol":"checkpointkit-bridge","version":1,"name":"garbage","capabilities":["open"]}}`)
			} else {
				fmt.Println("this is not a message")
			}
		}
		return 0
	case "parent": // starts a saver server, prints its pid, waits to be killed
		p, err := bridge.Start(ctx, exec.Command(os.Getenv(helperBinEnv), "-adapter", "memory"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		fmt.Println(p.Pid())
		hang()
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
	return 2
}

// hang blocks forever; the helper waits there to be killed.
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}

// gate is a memory saver whose reads of threads named "verb:name" act out
// scenarios the protocol tests need, coordinated by name:
//
//	GetTuple block:N    marks N started, waits for its context to end, records why
//	GetTuple ignore:N   marks N started, ignores its context until release:N
//	GetTuple started:N  returns once N has started
//	GetTuple ended:N    returns once N has ended, reporting why
//	GetTuple deadline:N reports the milliseconds left on its context (-1: none)
//	GetTuple produced:N=K returns once list N has produced K tuples, reporting the count
//	GetTuple crash:N    writes 8 KB and "fatal: boom" to stderr and exits with status 3
//	GetTuple panic:N    panics
//	DeleteThread ignore:N marks N started, ignores its context until release:N, then deletes
//	DeleteThread refuse:N marks N started, ignores its context until release:N, then fails with ErrInvalidConfig
//	List block:N        yields one tuple, then acts like GetTuple block:N
//	List produce:N      yields up to 1000 tuples, counting them; an early stop ends N
//
// A report is a tuple whose metadata "report" holds the answer.
type gate struct {
	*memory.Saver
	mu     sync.Mutex
	states map[string]*gateState
}

type gateState struct {
	startOnce, endOnce, releaseOnce sync.Once
	started, ended, released        chan struct{}
	why                             string // set before ended is closed
	produced                        atomic.Int64
	producedWake                    chan struct{}
}

func newGate() *gate { return &gate{Saver: memory.New(), states: map[string]*gateState{}} }

func (g *gate) state(name string) *gateState {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.states[name]
	if st == nil {
		st = &gateState{started: make(chan struct{}), ended: make(chan struct{}), released: make(chan struct{}), producedWake: make(chan struct{}, 1)}
		g.states[name] = st
	}
	return st
}

func (st *gateState) start() { st.startOnce.Do(func() { close(st.started) }) }

func (st *gateState) end(why string) {
	st.endOnce.Do(func() { st.why = why; close(st.ended) })
}

func report(cfg spec.Config, v any) *spec.Tuple {
	return &spec.Tuple{
		Config:        spec.Config{ThreadID: cfg.ThreadID, CheckpointID: "report"},
		Checkpoint:    spec.Checkpoint{V: 4, ID: "report", ChannelValues: map[string]any{}, ChannelVersions: spec.Versions{}, VersionsSeen: map[string]spec.Versions{}},
		Metadata:      spec.Metadata{"report": v},
		PendingWrites: []spec.PendingWrite{},
	}
}

func waitCh(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// GetTuple implements spec.Saver; see gate.
func (g *gate) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	verb, name, ok := strings.Cut(cfg.ThreadID, ":")
	if !ok {
		return g.Saver.GetTuple(ctx, cfg)
	}
	switch verb {
	case "block":
		st := g.state(name)
		st.start()
		<-ctx.Done()
		st.end(ctx.Err().Error())
		return nil, ctx.Err()
	case "ignore":
		st := g.state(name)
		st.start()
		<-st.released
		st.end("released")
		return report(cfg, "released"), nil
	case "release":
		st := g.state(name)
		st.releaseOnce.Do(func() { close(st.released) })
		return report(cfg, "ok"), nil
	case "started":
		if err := waitCh(ctx, g.state(name).started); err != nil {
			return nil, err
		}
		return report(cfg, "started"), nil
	case "ended":
		st := g.state(name)
		if err := waitCh(ctx, st.ended); err != nil {
			return nil, err
		}
		return report(cfg, st.why), nil
	case "deadline":
		d, ok := ctx.Deadline()
		if !ok {
			return report(cfg, int64(-1)), nil
		}
		return report(cfg, time.Until(d).Milliseconds()), nil
	case "produced":
		name, k, _ := strings.Cut(name, "=")
		want, _ := strconv.ParseInt(k, 10, 64)
		st := g.state(name)
		for st.produced.Load() < want {
			if err := waitCh(ctx, st.producedWake); err != nil {
				return nil, err
			}
		}
		return report(cfg, st.produced.Load()), nil
	case "crash":
		for i := range 8 << 10 / 16 {
			fmt.Fprintf(os.Stderr, "noise line %05d\n", i)
		}
		fmt.Fprintln(os.Stderr, "fatal: boom")
		os.Exit(3)
	case "panic":
		panic("boom")
	}
	return g.Saver.GetTuple(ctx, cfg)
}

// DeleteThread implements spec.Saver; see gate. Its verbs are writes that
// land, or fail on their own, after their request was cancelled.
func (g *gate) DeleteThread(ctx context.Context, threadID string) error {
	verb, name, ok := strings.Cut(threadID, ":")
	if !ok || (verb != "ignore" && verb != "refuse") {
		return g.Saver.DeleteThread(ctx, threadID)
	}
	st := g.state(name)
	st.start()
	<-st.released
	st.end("released")
	if verb == "refuse" {
		return fmt.Errorf("delete thread %q: refused: %w", threadID, spec.ErrInvalidConfig)
	}
	return g.Saver.DeleteThread(context.WithoutCancel(ctx), threadID)
}

// List implements spec.Saver; see gate.
func (g *gate) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	verb, name, ok := strings.Cut(opts.ThreadID, ":")
	if !ok || (verb != "block" && verb != "produce") {
		return g.Saver.List(ctx, opts)
	}
	cfg := spec.Config{ThreadID: opts.ThreadID}
	return func(yield func(*spec.Tuple, error) bool) {
		st := g.state(name)
		if verb == "block" {
			if !yield(report(cfg, int64(0)), nil) {
				st.end("stopped by the consumer")
				return
			}
			st.start()
			<-ctx.Done()
			st.end(ctx.Err().Error())
			yield(nil, ctx.Err())
			return
		}
		for i := range 1000 {
			st.produced.Add(1)
			select {
			case st.producedWake <- struct{}{}:
			default:
			}
			if !yield(report(cfg, int64(i)), nil) {
				st.end("stopped by the consumer")
				return
			}
		}
		st.end("done")
	}
}
