//go:build !linux

package bridge

import (
	"os"
	"os/exec"
)

// setProcAttrs does nothing outside Linux: there is no portable way to tie
// the server's life to its parent's, so only Close ends it.
func setProcAttrs(*exec.Cmd) {}

// killGroup kills the server process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// pipe returns a pipe between the client and the server.
func pipe(clientReads bool) (client, server *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil || !clientReads {
		return w, r, err
	}
	return r, w, nil
}
