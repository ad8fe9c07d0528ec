package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/checkpointkit/checkpointkit/conformance/repro"
)

// raceTimeout bounds one run of a race program.
const raceTimeout = 3 * time.Minute

// race writes the race program of e's rule (a concurrency rule no call
// sequence reproduced), runs it once with the server's interpreter, and
// returns e with the program and what the run showed. The program stays
// even when the race did not show this time: a race need not show in
// every run.
func race(ctx context.Context, e Entry, o options) Entry {
	title := fmt.Sprintf("%s and checkpointkit's contract", o.name)
	var (
		src, file string
		err       error
	)
	switch {
	case o.js != "":
		src, err = repro.JSRace(e.Rule, o.js, title)
		file = e.Rule + ".race.mjs"
	case o.factory != "":
		src, err = repro.PythonRace(e.Rule, repro.PythonOptions{Factory: o.factory, Async: o.async, Title: title})
		file = e.Rule + ".race.py"
	default:
		return e
	}
	if err != nil {
		return e
	}
	path := filepath.Join(o.out, file)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		return e
	}
	e.Snippet, e.Kind = file, "race"
	got, status, err := runRace(ctx, o, path, src)
	switch {
	case err != nil:
		e.Note = "the race program did not run here: " + err.Error()
	case status == 1:
		e.Detail = got
		e.Note = "the race program showed the race in this run"
	default:
		e.Detail = got
		e.Note = "the race program did not show the race in this run (a race need not show in every run)"
	}
	fmt.Fprintf(os.Stderr, "repro: %s: race program %s: %s (%s)\n", e.Rule, file, e.Note, got)
	return e
}

// runRace runs the program at path (its text src) as the server runs its
// saver: Python with the server's interpreter, JavaScript with node from
// the server's folder, where LangGraph.js is installed. It returns the
// program's "got:" line and its exit status.
func runRace(ctx context.Context, o options, path, src string) (got string, status int, err error) {
	ctx, cancel := context.WithTimeout(ctx, raceTimeout)
	defer cancel()
	var cmd *exec.Cmd
	if o.js != "" {
		if len(o.server) < 2 {
			return "", 0, errors.New("no server script to find LangGraph.js from")
		}
		// An ES module resolves packages from its own folder upwards: run
		// a copy next to the server.
		f, err := os.CreateTemp(filepath.Dir(o.server[1]), ".race-*.mjs")
		if err != nil {
			return "", 0, err
		}
		defer os.Remove(f.Name())
		if _, err := f.WriteString(src); err != nil {
			f.Close()
			return "", 0, err
		}
		f.Close()
		cmd = exec.CommandContext(ctx, o.server[0], f.Name())
	} else {
		cmd = exec.CommandContext(ctx, o.server[0], path)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		status = 1
	case err != nil:
		return "", 0, fmt.Errorf("%w: %s", err, lastLine(string(out)))
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "got:"); ok {
			got = strings.TrimSpace(rest)
		}
	}
	if got == "" {
		return "", 0, fmt.Errorf("no result printed: %s", lastLine(string(out)))
	}
	return got, status, nil
}

// lastLine returns the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
