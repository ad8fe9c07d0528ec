// Package testjson reads the event stream of `go test -json` (see
// `go doc test2json`). It is used by checkpointkit's CI tools.
package testjson

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// Event is one line of `go test -json` output.
type Event struct {
	Time    time.Time `json:"Time"`
	Action  string    `json:"Action"`
	Package string    `json:"Package"`
	Test    string    `json:"Test"`
	Elapsed float64   `json:"Elapsed"`
	Output  string    `json:"Output"`
	// ImportPath is set on build-output and build-fail events.
	ImportPath string `json:"ImportPath"`
	// FailedBuild names the package that failed to build, on the fail
	// event of a package whose test binary did not build.
	FailedBuild string `json:"FailedBuild"`
}

// Actions of Event.
const (
	ActionStart       = "start"
	ActionRun         = "run"
	ActionPause       = "pause"
	ActionCont        = "cont"
	ActionPass        = "pass"
	ActionBench       = "bench"
	ActionFail        = "fail"
	ActionOutput      = "output"
	ActionSkip        = "skip"
	ActionBuildOutput = "build-output"
	ActionBuildFail   = "build-fail"
)

// Read calls event for each JSON event in r and raw for each line that is
// not a JSON event (the go command prints some messages, such as download
// notices and errors, as plain text). raw gets the line without its
// newline. Read returns the first read error other than io.EOF.
func Read(r io.Reader, event func(Event), raw func(string)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			trimmed := strings.TrimRight(line, "\r\n")
			var e Event
			if strings.HasPrefix(trimmed, "{") && json.Unmarshal([]byte(trimmed), &e) == nil && e.Action != "" {
				event(e)
			} else {
				raw(trimmed)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Counts tallies finished tests (subtests included) by outcome.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// Add counts e if it is the end of a test.
func (c *Counts) Add(e Event) {
	if e.Test == "" {
		return
	}
	switch e.Action {
	case ActionPass:
		c.Passed++
	case ActionFail:
		c.Failed++
	case ActionSkip:
		c.Skipped++
	}
}
