package lgjs_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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

// missing skips the test, or fails it in CI, saying what is missing.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if required() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// TestConformance runs the conformance suite against the LangGraph.js saver
// named by CHECKPOINTKIT_LGJS_SAVER, through one node process for the whole
// run.
func TestConformance(t *testing.T) {
	kind := os.Getenv("CHECKPOINTKIT_LGJS_SAVER")
	if kind == "" {
		kind = "memory"
	}
	env, ok := kinds[kind]
	if !ok {
		t.Fatalf("CHECKPOINTKIT_LGJS_SAVER=%q: want memory, sqlite, postgres or mongo", kind)
	}
	if env != "" && os.Getenv(env) == "" {
		missing(t, "LangGraph.js %s saver: set %s to a server to test it (ci/backends starts one)", kind, env)
	}
	js, err := filepath.Abs(filepath.Join("..", "js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "@langchain", "langgraph-checkpoint")); err != nil {
		missing(t, "LangGraph.js is not installed: run `npm ci` in %s (%v)", js, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(node, filepath.Join(js, "server.js"), "--saver", kind)
	cmd.Env = os.Environ()
	proc, err := bridge.Start(ctx, cmd)
	if err != nil {
		t.Fatalf("starting the LangGraph.js %s server: %v", kind, err)
	}
	t.Cleanup(func() {
		if err := proc.Close(); err != nil {
			t.Errorf("closing the LangGraph.js %s server: %v", kind, err)
		}
	})
	t.Logf("server: %s, capabilities %v", proc.Name(), proc.Capabilities())

	conformance.Run(t, conformance.Harness{
		Name: "lgjs-" + kind,
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			s, err := proc.Open(ctx)
			if err != nil {
				return nil, nil, err
			}
			return s, func() { closeSaver(t, s) }, nil
		},
	})
}

// closeSaver releases a saver's storage on the server (the schema or
// database it was given). A failure is reported but does not fail a spec:
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
