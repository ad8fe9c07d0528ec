package lgjs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/checkpointkit/checkpointkit/bridge/internal/peertest"
)

// TestConformance runs the conformance suite against the LangGraph.js saver
// named by CHECKPOINTKIT_LGJS_SAVER, through one node process for the whole
// run.
func TestConformance(t *testing.T) {
	kind := peertest.Kind(t, "CHECKPOINTKIT_LGJS_SAVER", "LangGraph.js")
	js, err := filepath.Abs(filepath.Join("..", "js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "@langchain", "langgraph-checkpoint")); err != nil {
		peertest.Missing(t, "LangGraph.js is not installed: run `npm ci` in %s (%v)", js, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		peertest.Missing(t, "node is not installed: %v", err)
	}
	cmd := exec.Command(node, filepath.Join(js, "server.js"), "--saver", kind)
	peertest.Run(t, cmd, "the LangGraph.js "+kind+" server", "lgjs-"+kind)
}
