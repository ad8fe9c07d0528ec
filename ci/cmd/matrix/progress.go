package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/checkpointkit/checkpointkit/conformance/report"
)

// ginkgoSeparator is the line Ginkgo's verbose reporter prints between
// specs; the line after it names the spec, with its labels at the end.
const ginkgoSeparator = "------------------------------"

var (
	// willRun is Ginkgo's "Will run 168 of 170 specs" line.
	willRun = regexp.MustCompile(`^Will run (\d+) of (\d+) specs`)
	// specEnd is the line Ginkgo's verbose reporter prints when a spec
	// ends: "• [0.012 seconds]", "• [FAILED] [0.1 seconds]",
	// "S [SKIPPED] [0.000 seconds]", "P [PENDING]", ...
	specEnd = regexp.MustCompile(`^([•SP])(?: \[([A-Z]+)\])?(?: \[[0-9.]+ seconds\])?$`)
	// trailingLabels is the "[label, label]" at the end of a spec header.
	trailingLabels = regexp.MustCompile(`\[([^\[\]]*)\]$`)
)

// progress follows one backend's Ginkgo verbose output and prints a line
// when the suite moves to another capability group, when a spec fails, and
// every heartbeat interval, so that a long run visibly moves.
type progress struct {
	mu        sync.Mutex
	w         io.Writer
	backend   string
	start     time.Time
	heartbeat time.Duration
	now       func() time.Time

	partial   string // output not yet ended by a newline
	afterSep  bool   // the previous line was the separator
	header    string // the header of the running spec
	group     string // capability group of the running spec
	lastGroup string // group last printed
	lastPrint time.Time

	total, done             int
	passed, failed, skipped int
	suiteStarted            bool
}

func newProgress(w io.Writer, backend string, heartbeat time.Duration) *progress {
	p := &progress{w: w, backend: backend, heartbeat: heartbeat, now: time.Now}
	p.start = p.now()
	p.lastPrint = p.start
	return p
}

// write feeds a chunk of the test's output.
func (p *progress) write(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s = p.partial + s
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok {
			p.partial = s
			return
		}
		p.line(line)
		s = rest
	}
}

// line handles one line of output; p.mu is held.
func (p *progress) line(line string) {
	line = strings.TrimRight(line, "\r")
	if p.afterSep {
		p.afterSep = false
		if line != "" {
			p.header = line
			if g := groupOf(line); g != "" {
				p.group = g
			}
			// A new group is worth a line, but not more than one a
			// second: specs of different groups may interleave.
			if p.group != p.lastGroup && p.now().Sub(p.lastPrint) >= time.Second {
				p.printLocked("")
			}
		}
		return
	}
	if line == ginkgoSeparator {
		p.afterSep = true
		return
	}
	if m := willRun.FindStringSubmatch(line); m != nil {
		p.total, _ = strconv.Atoi(m[1])
		p.suiteStarted = true
		p.printLocked("suite started")
		return
	}
	m := specEnd.FindStringSubmatch(line)
	if m == nil {
		return
	}
	switch {
	case m[1] == "•" && m[2] == "":
		p.passed++
	case m[1] == "S" || m[1] == "P":
		p.skipped++
	default: // FAILED, PANICKED, TIMEDOUT, INTERRUPTED, ABORTED
		p.failed++
		fmt.Fprintf(p.w, "  %-10s %s: %s\n", p.backend, m[2], p.header)
	}
	p.done++
	if p.now().Sub(p.lastPrint) >= p.heartbeat {
		p.printLocked("")
	}
}

// tick prints a heartbeat line if nothing was printed for a while.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.now().Sub(p.lastPrint) < p.heartbeat {
		return
	}
	if !p.suiteStarted {
		p.printLocked("building and starting the test binary")
		return
	}
	p.printLocked("")
}

// printLocked prints one progress line; p.mu is held.
func (p *progress) printLocked(note string) {
	now := p.now()
	p.lastPrint = now
	p.lastGroup = p.group
	elapsed := fmt.Sprintf("%6.1fs", now.Sub(p.start).Seconds())
	if note != "" && p.done == 0 {
		fmt.Fprintf(p.w, "  %-10s %s  %s\n", p.backend, elapsed, note)
		return
	}
	total := "?"
	if p.total > 0 {
		total = strconv.Itoa(p.total)
	}
	fmt.Fprintf(p.w, "  %-10s %s  %-16s %4d/%s specs  (%d passed, %d failed, %d skipped)\n",
		p.backend, elapsed, p.group, p.done, total, p.passed, p.failed, p.skipped)
}

// groupOf returns the capability group named by a spec header's trailing
// labels: the first label that is a known capability (or "engine"), else
// the first label; "" when the header has no labels.
func groupOf(header string) string {
	m := trailingLabels.FindStringSubmatch(header)
	if m == nil {
		return ""
	}
	labels := strings.Split(m[1], ", ")
	for _, l := range labels {
		if slices.Contains(report.BaseCapabilities, l) || slices.Contains(report.OptionalCapabilities, l) || l == "engine" {
			return l
		}
	}
	return labels[0]
}
