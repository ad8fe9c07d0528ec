// Package peertest holds what bridge/lgjs and bridge/lgpy share: they judge
// a third-party runtime's savers (LangGraph.js's, LangGraph Python's) by the
// conformance suite, through one bridge server process of that runtime for
// the whole run. The packages differ only in how the server is found and
// started.
package peertest

import (
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// kinds maps each saver kind to the variable naming its server ("" for
// none).
var kinds = map[string]string{
	"memory":   "",
	"sqlite":   "",
	"postgres": "CHECKPOINTKIT_POSTGRES_DSN",
	"mongo":    "CHECKPOINTKIT_MONGO_URI",
}

// required reports whether a missing prerequisite must fail the test
// rather than skip it.
func required() bool {
	return os.Getenv("CI") != "" || os.Getenv("CHECKPOINTKIT_REQUIRE_BACKENDS") != ""
}

// Missing skips the test, or fails it in CI (CI or
// CHECKPOINTKIT_REQUIRE_BACKENDS set), saying what is missing.
func Missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if required() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// Kind gives the saver kind the variable env names: memory (its default),
// sqlite, postgres or mongo. Another value fails the test; a kind whose
// server is not given in the environment is Missing. runtime names the
// saver's runtime in the messages ("LangGraph.js").
func Kind(t *testing.T, env, runtime string) string {
	t.Helper()
	kind := os.Getenv(env)
	if kind == "" {
		kind = "memory"
	}
	server, ok := kinds[kind]
	if !ok {
		t.Fatalf("%s=%q: want memory, sqlite, postgres or mongo", env, kind)
	}
	if server != "" && os.Getenv(server) == "" {
		Missing(t, "%s %s saver: set %s to a server to test it (ci/backends starts one)", runtime, kind, server)
	}
	return kind
}

// Run starts cmd as a bridge server, with the test's environment, and runs
// the conformance suite on it as the harness named harness, opening a fresh
// saver on the server for every spec. server names the server in the
// messages ("the LangGraph.js memory server"). The server is closed when
// the test ends.
func Run(t *testing.T, cmd *exec.Cmd, server, harness string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd.Env = os.Environ()
	proc, err := bridge.Start(ctx, cmd)
	if err != nil {
		t.Fatalf("starting %s: %v", server, err)
	}
	t.Cleanup(func() {
		if err := proc.Close(); err != nil {
			t.Errorf("closing %s: %v", server, err)
		}
	})
	t.Logf("server: %s, capabilities %v", proc.Name(), proc.Capabilities())

	conformance.Run(t, conformance.Harness{
		Name: harness,
		Skip: skipsFor(proc),
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			s, err := proc.Open(ctx)
			if err != nil {
				return nil, nil, err
			}
			return s, func() { closeSaver(t, s) }, nil
		},
	})
}

// closeSaver releases a saver's storage on the server (the schema, database
// or file it was given). A failure is reported but does not fail a spec:
// the spec judged the saver, not its teardown.
func closeSaver(t *testing.T, s spec.Saver) {
	c, ok := s.(io.Closer)
	if !ok {
		return
	}
	if err := c.Close(); err != nil {
		t.Logf("closing a saver: %v", err)
	}
}

// skipsFor maps the features the server's LangGraph predates to the specs
// the suite then skips, each with the reason.
func skipsFor(proc *bridge.Process) map[string]string {
	skip := map[string]string{}
	if slices.Contains(proc.Unsupported(), "delta_channels") {
		skip[conformance.DeltaChannels] = proc.Name() + " runs on a LangGraph without delta channels (no snapshot type to store)"
	}
	return skip
}
