//go:build linux

package bridge_test

import (
	"bufio"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestParentDeathStopsServer kills a process that started a bridge server
// with SIGKILL, leaving it no chance to clean up, and checks that the
// server goes too.
func TestParentDeathStopsServer(t *testing.T) {
	parent := helperCmd(t, "parent")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		t.Fatalf("reading the server's pid from the parent: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	// Watch the server before its parent dies, so that its pid cannot be
	// reused under us.
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(testTimeout.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			t.Fatalf("server %d still runs %v after its parent was killed", pid, testTimeout)
		}
		return
	}
}
