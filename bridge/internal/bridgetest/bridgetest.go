// Package bridgetest holds what the bridge's test packages share: building
// cmd/checkpointkit-saver once per test binary, starting it as a bridge
// server, and finding the backends in the environment.
package bridgetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/bridge"
)

// saverBin is the path of the built command, set by Main.
var saverBin string

// Main builds cmd/checkpointkit-saver into a temporary directory (with the
// race detector when the tests have it), runs the tests and removes the
// directory. Call it from TestMain: os.Exit(bridgetest.Main(m)).
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "bridgetest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bridgetest:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	saverBin = filepath.Join(dir, "checkpointkit-saver")
	args := []string{"build", "-o", saverBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/checkpointkit/checkpointkit/cmd/checkpointkit-saver")
	build := exec.Command("go", args...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "bridgetest: building cmd/checkpointkit-saver:", err)
		return 2
	}
	return m.Run()
}

// SaverBin returns the path of the command built by Main.
func SaverBin(tb testing.TB) string {
	tb.Helper()
	if saverBin == "" {
		tb.Fatal("bridgetest: SaverBin needs TestMain to call bridgetest.Main")
	}
	return saverBin
}

// Start starts the built command with args as a bridge server and closes
// it when the test ends, failing the test if it exits badly.
func Start(tb testing.TB, args ...string) *bridge.Process {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := bridge.Start(ctx, exec.Command(SaverBin(tb), args...))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := p.Close(); err != nil {
			tb.Errorf("closing %s: %v", p.Name(), err)
		}
	})
	return p
}

// Env returns the environment variable name, or skips the test with a
// message saying what to set — or fails it when CI or
// CHECKPOINTKIT_REQUIRE_BACKENDS is set, so that CI never skips a backend
// silently.
func Env(tb testing.TB, name, example string) string {
	tb.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	msg := name + " is not set; point it at a server the tests may create storage in, e.g. " + name + "='" + example +
		"' (ci/backends starts throwaway servers)"
	if os.Getenv("CI") != "" || os.Getenv("CHECKPOINTKIT_REQUIRE_BACKENDS") != "" {
		tb.Fatal("required here (CI or CHECKPOINTKIT_REQUIRE_BACKENDS is set): " + msg)
	}
	tb.Skip(msg)
	return ""
}
