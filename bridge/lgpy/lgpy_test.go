package lgpy_test

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

// target gives the factory to serve and the harness name: the one named by
// CHECKPOINTKIT_LGPY_FACTORY, or LangGraph's saver named by
// CHECKPOINTKIT_LGPY_SAVER.
func target(t *testing.T) (factory, name string) {
	if f := os.Getenv("CHECKPOINTKIT_LGPY_FACTORY"); f != "" {
		return f, "lgpy " + f
	}
	kind := os.Getenv("CHECKPOINTKIT_LGPY_SAVER")
	if kind == "" {
		kind = "memory"
	}
	env, ok := kinds[kind]
	if !ok {
		t.Fatalf("CHECKPOINTKIT_LGPY_SAVER=%q: want memory, sqlite, postgres or mongo", kind)
	}
	if env != "" && os.Getenv(env) == "" {
		missing(t, "LangGraph Python %s saver: set %s to a server to test it (ci/backends starts one)", kind, env)
	}
	return "checkpointkit_bridge.factories:" + kind, "lgpy-" + kind
}

// python gives the interpreter: CHECKPOINTKIT_PYTHON, or the virtualenv in
// bridge/python.
func python(t *testing.T) string {
	if p := os.Getenv("CHECKPOINTKIT_PYTHON"); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", "python", ".venv", "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		missing(t, "LangGraph Python is not installed: run `source ci/lib/backends.bash; ck_install_lgpy`, or set CHECKPOINTKIT_PYTHON (%v)", err)
	}
	return p
}

// TestConformance runs the conformance suite against the Python saver
// factory named by the environment, through one Python process for the
// whole run.
func TestConformance(t *testing.T) {
	factory, name := target(t)
	py := python(t)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(py, "-m", "checkpointkit_bridge", "serve", factory)
	cmd.Env = os.Environ()
	proc, err := bridge.Start(ctx, cmd)
	if err != nil {
		t.Fatalf("starting the Python server for %s: %v", factory, err)
	}
	t.Cleanup(func() {
		if err := proc.Close(); err != nil {
			t.Errorf("closing the Python server for %s: %v", factory, err)
		}
	})
	t.Logf("server: %s, capabilities %v", proc.Name(), proc.Capabilities())

	conformance.Run(t, conformance.Harness{
		Name: name,
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
