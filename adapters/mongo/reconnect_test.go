package mongo_test

import (
	"bufio"
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// binEnv names the environment variable holding the path of the ci/ferretdb
// launcher binary.
const binEnv = "CHECKPOINTKIT_FERRETDB_BIN"

// launcher is a running ci/ferretdb process.
type launcher struct {
	cmd *exec.Cmd
	uri string
}

// startLauncher starts the launcher on addr with data in dir and waits for
// the URI line it prints once listening.
func startLauncher(t *testing.T, bin, addr, dir string) *launcher {
	t.Helper()
	cmd := exec.Command(bin, "-listen-addr", addr, "-data-dir", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case uri := <-line:
		if !strings.HasPrefix(uri, "mongodb://") {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("launcher printed %q, want a mongodb:// URI", uri)
		}
		return &launcher{cmd: cmd, uri: uri}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("launcher did not print its URI within 60s")
	}
	return nil
}

// stop sends SIGTERM and waits for a clean exit.
func (l *launcher) stop(t *testing.T) {
	t.Helper()
	if l.cmd.ProcessState != nil {
		return
	}
	_ = l.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- l.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("launcher exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		_ = l.cmd.Process.Kill()
		<-done
		t.Error("launcher did not stop within 30s of SIGTERM")
	}
}

// TestReconnectAfterRestart stops the server under a saver and starts it
// again on the same port and data directory: the saver must recover on its
// own (the driver reconnects), with the data written before the restart.
func TestReconnectAfterRestart(t *testing.T) {
	bin := os.Getenv(binEnv)
	if bin == "" {
		msg := binEnv + " is not set: build ci/ferretdb (go build -C ci/ferretdb -o BIN .) to run the restart test"
		if backendRequired() {
			t.Fatal(msg + "; CI or CHECKPOINTKIT_REQUIRE_BACKENDS is set, so this is a failure")
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	l := startLauncher(t, bin, "127.0.0.1:0", dir)
	t.Cleanup(func() { l.stop(t) })
	u, err := url.Parse(l.uri)
	if err != nil {
		t.Fatal(err)
	}
	addr := u.Host

	ctx := context.Background()
	s, err := mongo.Open(ctx, l.uri+"?serverSelectionTimeoutMS=2000&connectTimeoutMS=2000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	put(t, s, "t", "", "", "1", map[string]any{"c": "before"}, spec.Metadata{"step": int64(1)})

	l.stop(t)
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err == nil {
		t.Fatal("GetTuple succeeded with the server stopped")
	} else if errors.Is(err, spec.ErrNotFound) {
		t.Fatalf("a stopped server reported as not found: %v", err)
	}

	l = startLauncher(t, bin, addr, dir)
	deadline := time.Now().Add(60 * time.Second)
	var tup *spec.Tuple
	for {
		tup, err = s.GetTuple(ctx, spec.Config{ThreadID: "t"})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // poll until the driver has reconnected
	}
	if err != nil {
		t.Fatalf("saver did not recover within 60s: %v", err)
	}
	if tup.Checkpoint.ChannelValues["c"] != "before" {
		t.Errorf("after restart: %#v", tup.Checkpoint.ChannelValues)
	}
	put(t, s, "t", "", "1", "2", map[string]any{"c": "after"}, nil)
	if got := listIDs(t, s, spec.ListOptions{ThreadID: "t"}); strings.Join(got, ",") != "t//2,t//1" {
		t.Errorf("list after restart: %q", got)
	}
}
