package lgpy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/checkpointkit/checkpointkit/bridge/internal/peertest"
)

// target gives the factory to serve and the harness name: the one named by
// CHECKPOINTKIT_LGPY_FACTORY, or LangGraph's saver named by
// CHECKPOINTKIT_LGPY_SAVER.
func target(t *testing.T) (factory, name string) {
	if f := os.Getenv("CHECKPOINTKIT_LGPY_FACTORY"); f != "" {
		return f, "lgpy " + f
	}
	kind := peertest.Kind(t, "CHECKPOINTKIT_LGPY_SAVER", "LangGraph Python")
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
		peertest.Missing(t, "LangGraph Python is not installed: run `source ci/lib/backends.bash; ck_install_lgpy`, or set CHECKPOINTKIT_PYTHON (%v)", err)
	}
	return p
}

// TestConformance runs the conformance suite against the Python saver
// factory named by the environment, through one Python process for the
// whole run.
func TestConformance(t *testing.T) {
	factory, name := target(t)
	cmd := exec.Command(python(t), "-m", "checkpointkit_bridge", "serve", factory)
	peertest.Run(t, cmd, "the Python server for "+factory, name)
}
