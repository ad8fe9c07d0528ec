package repro

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// toySavers are LangGraph's InMemorySaver and a broken subclass whose list
// ignores limit, with sync and async factories.
const toySavers = `from langgraph.checkpoint.memory import InMemorySaver


class NoLimitSaver(InMemorySaver):
    def list(self, config, *, filter=None, before=None, limit=None):
        return super().list(config, filter=filter, before=before, limit=None)

    async def alist(self, config, *, filter=None, before=None, limit=None):
        for t in self.list(config, filter=filter, before=before):
            yield t


def broken():
    return NoLimitSaver()


async def broken_async():
    return NoLimitSaver()


def correct():
    return InMemorySaver()
`

func TestPythonSnippetShowsTheDifference(t *testing.T) {
	py := pythonBin(t)
	r, err := Minimize(context.Background(), openNoLimit, Reference, busySequence(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Rule = "LIST-LIMIT-1"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toysavers.py"), []byte(toySavers), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		factory string
		async   bool
		status  int
		says    string
	}{
		{"toysavers:broken", false, 1, "expected: ['" + cpID(5) + "']\ngot:      ['" + cpID(5) + "', '" + cpID(4) + "'"},
		{"toysavers:broken_async", true, 1, "expected: ['" + cpID(5) + "']\ngot:      ['" + cpID(5) + "', '" + cpID(4) + "'"},
		{"toysavers:correct", false, 0, "expected: ['" + cpID(5) + "']\ngot:      ['" + cpID(5) + "']\n"},
		{"toysavers:correct", true, 0, "expected: ['" + cpID(5) + "']\ngot:      ['" + cpID(5) + "']\n"},
	} {
		src := r.Python(PythonOptions{Factory: tc.factory, Async: tc.async, Title: tc.factory})
		out, status := runPython(t, py, dir, src)
		if lines := strings.Count(src, "\n"); lines > 30 {
			t.Errorf("%s (async %v): the snippet has %d lines, want at most 30:\n%s", tc.factory, tc.async, lines, src)
		}
		if status != tc.status || !strings.Contains(out, tc.says) {
			t.Errorf("%s (async %v): status %d, output:\n%s\nwant status %d and %q\nsnippet:\n%s", tc.factory, tc.async, status, out, tc.status, tc.says, src)
		}
	}
}

// pythonBin returns the venv's python, where LangGraph Python is installed.
func pythonBin(t *testing.T) string {
	t.Helper()
	py, err := filepath.Abs(filepath.Join("..", "..", "bridge", "python", ".venv", "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("LangGraph Python is not installed (source ci/lib/backends.bash; ck_install_lgpy): %v", err)
	}
	return py
}

// runPython writes src into dir as a program and runs it with py, with dir
// on the module path (where the test's toy savers are), and returns its
// output and exit status.
func runPython(t *testing.T, py, dir, src string) (string, int) {
	t.Helper()
	file := filepath.Join(dir, "program.py")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, file)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	return run(t, cmd)
}
