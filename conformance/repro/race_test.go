package repro

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// toyRaceSavers are LangGraph's InMemorySaver and two subclasses that
// break a concurrency rule only when calls overlap: TornSaver stores a
// checkpoint before its large value (CONC-3), LossySaver writes a thread's
// checkpoints back from a stale copy (CONC-2).
const toyRaceSavers = `import time

from langgraph.checkpoint.memory import InMemorySaver


class TornSaver(InMemorySaver):
    def put(self, config, checkpoint, metadata, new_versions):
        first = {k: v for k, v in new_versions.items() if k != "big"}
        super().put(config, checkpoint, metadata, first)
        time.sleep(0.0005)  # a reader here sees the checkpoint without "big"
        return super().put(config, checkpoint, metadata, new_versions)

    async def aput(self, config, checkpoint, metadata, new_versions):
        return self.put(config, checkpoint, metadata, new_versions)


class LossySaver(InMemorySaver):
    def put(self, config, checkpoint, metadata, new_versions):
        thread = config["configurable"]["thread_id"]
        stale = dict(self.storage[thread][""])
        out = super().put(config, checkpoint, metadata, new_versions)
        stale[checkpoint["id"]] = self.storage[thread][""][checkpoint["id"]]
        time.sleep(0.0002)  # puts of other writers in between are lost
        self.storage[thread][""] = stale
        return out


def torn():
    return TornSaver()


def lossy():
    return LossySaver()


def correct():
    return InMemorySaver()


async def correct_async():
    return InMemorySaver()
`

func TestPythonRacesShowTheirRule(t *testing.T) {
	py := pythonBin(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toyraces.py"), []byte(toyRaceSavers), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule, factory string
		async         bool
		status        int
		says          string
	}{
		{"CONC-3", "toyraces:torn", false, 1, "channel values ['id']"},
		{"CONC-3", "toyraces:correct", false, 0, "got:      it held"},
		{"CONC-3", "toyraces:correct_async", true, 0, "got:      it held"},
		{"CONC-2", "toyraces:lossy", false, 1, "got:      "},
		{"CONC-2", "toyraces:correct", false, 0, "got:      it held"},
		{"CONC-1", "toyraces:correct", false, 0, "got:      it held"},
		{"CONC-1", "toyraces:correct_async", true, 0, "got:      it held"},
	} {
		src, err := PythonRace(tc.rule, PythonOptions{Factory: tc.factory, Async: tc.async, Title: tc.factory})
		if err != nil {
			t.Fatal(err)
		}
		out, status := runPython(t, py, dir, src)
		if status != tc.status || !strings.Contains(out, tc.says) {
			t.Errorf("%s on %s (async %v): status %d, output:\n%s\nwant status %d and %q\nprogram:\n%s", tc.rule, tc.factory, tc.async, status, out, tc.status, tc.says, src)
		}
	}
	if _, err := PythonRace("LIST-LIMIT-1", PythonOptions{Factory: "m:f"}); !errors.Is(err, ErrNoRace) {
		t.Errorf("PythonRace(LIST-LIMIT-1) = %v, want ErrNoRace", err)
	}
}

// LangGraph.js's MemorySaver shows its own CONC-3 bug (a getTuple racing
// the first put of a thread throws) and keeps CONC-1.
func TestJSRacesShowTheirRule(t *testing.T) {
	node, dir := jsDir(t)
	for _, tc := range []struct {
		rule   string
		status int
		says   string
	}{
		{"CONC-3", 1, "got:      getTuple threw"},
		{"CONC-1", 0, "got:      it held"},
	} {
		src, err := JSRace(tc.rule, "memory", "memory")
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "race.mjs")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(node, file)
		cmd.Dir = dir
		out, status := run(t, cmd)
		if status != tc.status || !strings.Contains(out, tc.says) {
			t.Errorf("%s: status %d, output:\n%s\nwant status %d and %q\nprogram:\n%s", tc.rule, status, out, tc.status, tc.says, src)
		}
	}
	if _, err := JSRace("CONC-4", "memory", "memory"); !errors.Is(err, ErrNoRace) {
		t.Errorf("JSRace(CONC-4) = %v, want ErrNoRace", err)
	}
}
