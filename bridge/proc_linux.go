//go:build linux

package bridge

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttrs puts the server in a process group of its own, so that
// killGroup reaches whatever it starts, and asks the kernel to send it
// SIGTERM when the thread that started it dies, so that a killed parent
// does not leave it behind (SIGTERM rather than SIGKILL: the server gets to
// release its storage; its standard input reaches EOF at the same moment).
// A cmd made by exec.CommandContext kills the whole group when its context
// ends.
func setProcAttrs(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return killGroup(cmd) }
	}
}

// killGroup sends SIGKILL to the server's process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}

// pipe returns a pipe between the client and the server. The server's end
// is blocking, so that a server written in Go reads and writes it with
// plain system calls that wake the waiting thread directly, without the
// runtime's poller; on a two-core machine that takes about a sixth off a
// call's round trip. The client's end is non-blocking, so that the poller
// serves it and Close interrupts a read or write in progress.
func pipe(clientReads bool) (client, server *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	c, s := fds[1], fds[0] // the client writes, the server reads
	if clientReads {
		c, s = fds[0], fds[1]
	}
	if err := syscall.SetNonblock(c, true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(c), "bridge-client"), os.NewFile(uintptr(s), "bridge-server"), nil
}
