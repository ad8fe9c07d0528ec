package bridge_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// exitError asserts that err is an *bridge.ExitError naming the helper
// process and quoting wantStderr, and returns it.
func exitError(t *testing.T, err error, wantStderr string) *bridge.ExitError {
	t.Helper()
	var ee *bridge.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("got %v, want a *bridge.ExitError", err)
	}
	if !strings.Contains(ee.Command, os.Args[0]) || !strings.Contains(err.Error(), os.Args[0]) {
		t.Errorf("the error does not name the process %s: %v", os.Args[0], err)
	}
	if !strings.Contains(ee.Stderr, wantStderr) || !strings.Contains(err.Error(), wantStderr) {
		t.Errorf("the error does not quote %q from stderr: %v", wantStderr, err)
	}
	return ee
}

func TestCrashFailsEveryCall(t *testing.T) {
	p := startHelper(t, "gate")
	s := openSaver(t, p)
	ctx := testContext(t)
	errc := make(chan error, 1)
	go func() {
		_, err := s.GetTuple(ctx, spec.Config{ThreadID: "block:pending"})
		errc <- err
	}()
	reportOf(t, ctx, s, "started:pending")
	_, crashErr := s.GetTuple(ctx, spec.Config{ThreadID: "crash:now"})
	pendingErr := <-errc
	_, laterErr := s.GetTuple(ctx, spec.Config{ThreadID: "t"})
	if ctx.Err() != nil {
		t.Fatal("the calls failed only when the test's context expired")
	}
	for name, err := range map[string]error{"crashing call": crashErr, "pending call": pendingErr, "later call": laterErr} {
		ee := exitError(t, err, "fatal: boom")
		var xe *exec.ExitError
		if !errors.As(ee, &xe) || xe.ExitCode() != 3 {
			t.Errorf("%s: %v does not carry exit status 3", name, err)
		}
		if len(ee.Stderr) > 4<<10+8 || strings.Contains(ee.Stderr, "noise line 00000") {
			t.Errorf("%s: the stderr tail holds %d bytes, want the last 4 KiB only", name, len(ee.Stderr))
		}
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close after a crash: %v", err)
	}
}

func TestKilledServer(t *testing.T) {
	p := startHelper(t, "gate")
	s := openSaver(t, p)
	ctx := testContext(t)
	errc := make(chan error, 1)
	go func() {
		_, err := s.GetTuple(ctx, spec.Config{ThreadID: "block:k"})
		errc <- err
	}()
	reportOf(t, ctx, s, "started:k")
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	exitError(t, err, "gate server ready")
	if !strings.Contains(err.Error(), "killed") {
		t.Errorf("the error does not say the server was killed: %v", err)
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	p := bridgetest.Start(t, "-adapter", "memory")
	s := openSaver(t, p)
	pid := p.Pid()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Close (kill 0: %v)", pid, err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("/proc/%d still exists after Close", pid)
	}
	if _, err := s.GetTuple(context.Background(), spec.Config{ThreadID: "t"}); !errors.Is(err, bridge.ErrClosed) {
		t.Errorf("a call after Close: got %v, want ErrClosed", err)
	}
	if _, err := p.Open(context.Background()); !errors.Is(err, bridge.ErrClosed) {
		t.Errorf("Open after Close: got %v, want ErrClosed", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

func TestCloseKillsStubbornServer(t *testing.T) {
	p := startHelper(t, "stubborn", bridge.WithGracePeriod(200*time.Millisecond))
	pid := p.Pid()
	err := p.Close()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Close of a server that does not exit: got %v, want an error saying it was killed", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Close (kill 0: %v)", pid, err)
	}
}

func TestCommandContextKillsServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = helperCmd(t, "gate").Env
	p, err := bridge.Start(testContext(t), cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := openSaver(t, p)
	errc := make(chan error, 1)
	go func() {
		_, err := s.GetTuple(testContext(t), spec.Config{ThreadID: "block:c"})
		errc <- err
	}()
	reportOf(t, testContext(t), s, "started:c")
	cancel()
	exitError(t, <-errc, "gate server ready")
}

// TestAttachInProcess runs Serve and the client over in-process pipes and
// checks that both sides leave no goroutine behind.
func TestAttachInProcess(t *testing.T) {
	defer goleak.VerifyNone(t)
	reqR, reqW := io.Pipe()
	ansR, ansW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- bridge.Serve(context.Background(), reqR, ansW, func(context.Context) (spec.Saver, error) { return memory.New(), nil }, bridge.WithName("in-process"))
		_ = ansW.Close()
	}()
	ctx := testContext(t)
	p, err := bridge.Attach(ctx, ansR, reqW)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "in-process" || p.Pid() != 0 {
		t.Errorf("Name %q Pid %d, want in-process and 0", p.Name(), p.Pid())
	}
	s, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	putN(t, s, "t", 5)
	n := 0
	for _, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 5 {
		t.Errorf("listed %d, want 5", n)
	}
	if err := s.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
