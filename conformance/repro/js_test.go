package repro

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// toyJSSavers is LangGraph.js's MemorySaver and a broken subclass whose
// list ignores limit.
const toyJSSavers = `import { MemorySaver } from "@langchain/langgraph-checkpoint";

export class NoLimitSaver extends MemorySaver {
  async *list(config, options = {}) {
    yield* super.list(config, { ...options, limit: undefined });
  }
}
`

func TestJSSnippetShowsTheDifference(t *testing.T) {
	node, dir := jsDir(t)
	r, err := Minimize(context.Background(), openNoLimit, Reference, busySequence(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Rule = "LIST-LIMIT-1"
	if err := os.WriteFile(filepath.Join(dir, "toysavers.mjs"), []byte(toyJSSavers), 0o644); err != nil {
		t.Fatal(err)
	}
	jsSavers["toy-nolimit"] = jsSaver{imports: `import { NoLimitSaver } from "./toysavers.mjs";`, open: "const saver = new NoLimitSaver();"}
	defer delete(jsSavers, "toy-nolimit")
	want := `expected: [ '` + cpID(5) + `' ]` + "\n"
	for _, tc := range []struct {
		kind   string
		status int
		says   string
	}{
		{"toy-nolimit", 1, want + "got:      [\n"},
		{"memory", 0, want + "got:      [ '" + cpID(5) + "' ]\n"},
	} {
		src, out, status := runJSSnippet(t, node, dir, r, tc.kind)
		if status != tc.status || !strings.Contains(out, tc.says) {
			t.Errorf("%s: status %d, output:\n%s\nwant status %d and %q\nsnippet:\n%s", tc.kind, status, out, tc.status, tc.says, src)
		}
	}
}

// runJSSnippet writes r's JS snippet for the saver kind into dir, checks
// that it is short, runs it with node and returns it with its output and
// exit status.
func runJSSnippet(t *testing.T, node, dir string, r *Repro, kind string) (src, out string, status int) {
	t.Helper()
	src, err := r.JS(kind, kind)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(src, "\n"); lines > 30 {
		t.Errorf("%s: the snippet has %d lines, want at most 30:\n%s", kind, lines, src)
	}
	file := filepath.Join(dir, "repro.mjs")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, file)
	cmd.Dir = dir
	out, status = run(t, cmd)
	return src, out, status
}

// jsDir returns node and a temporary folder whose node_modules is
// bridge/js's, where LangGraph.js is installed.
func jsDir(t *testing.T) (node, dir string) {
	t.Helper()
	modules, err := filepath.Abs(filepath.Join("..", "..", "bridge", "js", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@langchain", "langgraph-checkpoint")); err != nil {
		t.Fatalf("LangGraph.js is not installed (npm ci in bridge/js): %v", err)
	}
	if node, err = exec.LookPath("node"); err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return node, dir
}
