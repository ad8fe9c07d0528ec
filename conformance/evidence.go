package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	g "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Evidence. Every spec's saver is wrapped in a recorder that keeps the last
// calls made to it; when the spec fails, the last call before the failure
// becomes its evidence, with what it returned and, when the failure message
// gives them, the expected and actual values. Two failures share a cause
// only when they fail on the same operation with the same observation (see
// attribute).

// callLogSize is how many calls the recorder keeps per spec.
const callLogSize = 8

// call is one recorded saver call.
type call struct {
	op, args string
	err      error
	n        int // tuples a List yielded
	notFound bool
	done     bool
}

// observation classifies what a call returned.
func (c call) observation() string {
	switch {
	case !c.done:
		return "unfinished"
	case c.notFound:
		return "not found"
	case c.err != nil:
		return "error"
	case c.op == "List" && c.n == 0:
		return "empty"
	case c.op == "List":
		return "some"
	}
	return "ok"
}

// result summarises what a call returned.
func (c call) result() string {
	switch {
	case !c.done:
		return "did not return"
	case c.notFound:
		return "not found"
	case c.err != nil:
		return "error: " + clipString(c.err.Error(), 200)
	case c.op == "List":
		return fmt.Sprintf("%d tuples", c.n)
	}
	return "ok"
}

// callLog is the recorder's ring of calls.
type callLog struct {
	mu    sync.Mutex
	calls []*call // the latest calls
	errs  []*call // the latest calls that failed
	// running counts the calls in progress; concurrent is set once a call
	// started while another was running.
	running    int
	concurrent bool
	// notCarried is the first error of a call that the transport between
	// the suite and the saver could not carry (see NotCarried).
	notCarried error
}

// start records the start of a call.
func (l *callLog) start(op, args string) *call {
	c := &call{op: op, args: args}
	l.mu.Lock()
	if l.running > 0 {
		l.concurrent = true
	}
	l.running++
	if len(l.calls) == callLogSize {
		l.calls = slices.Delete(l.calls, 0, 1)
	}
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	return c
}

// end records a call's outcome.
func (l *callLog) end(c *call, err error) {
	l.mu.Lock()
	c.err, c.notFound, c.done = err, errors.Is(err, spec.ErrNotFound), true
	l.running--
	if l.notCarried == nil && isNotCarried(err) {
		l.notCarried = err
	}
	if err != nil {
		if len(l.errs) == callLogSize {
			l.errs = slices.Delete(l.errs, 0, 1)
		}
		l.errs = append(l.errs, c)
	}
	l.mu.Unlock()
}

// failing returns a copy of the call a failure message is about: the
// latest call whose error the message quotes, else, unless calls ran
// concurrently (then the latest call is any goroutine's), the latest call.
func (l *callLog) failing(msg string) (call, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.errs) - 1; i >= 0; i-- {
		if c := l.errs[i]; strings.Contains(msg, c.err.Error()) {
			return *c, true
		}
	}
	if len(l.calls) == 0 || l.concurrent {
		return call{}, false
	}
	return *l.calls[len(l.calls)-1], true
}

// NotCarried is what an error says when the transport between the suite
// and the saver (such as package bridge's client) could not carry a call's
// input to the saver: the saver never judged it. A spec in which a call
// fails with such an error is reported as not judged over this transport,
// neither passed nor failed. The suite finds it with errors.As, so that
// package conformance need not import the transport:
//
//	var nc conformance.NotCarried
//	errors.As(err, &nc) && nc.NotCarried()
type NotCarried interface {
	error
	NotCarried() bool
}

// isNotCarried reports whether err says the transport did not carry a call.
func isNotCarried(err error) bool {
	var nc NotCarried
	return err != nil && errors.As(err, &nc) && nc.NotCarried()
}

// notCarriedEntryName names the report entry of a spec in which a call
// was not carried to the saver.
const notCarriedEntryName = "checkpointkit not carried"

// recordNotCarried adds the first not-carried error of the spec as a
// report entry. It runs in an AfterEach.
func recordNotCarried(log *callLog) {
	if log == nil {
		return
	}
	log.mu.Lock()
	err := log.notCarried
	log.mu.Unlock()
	if err != nil {
		g.AddReportEntry(notCarriedEntryName, err.Error())
	}
}

// notCarriedOf returns the not-carried error a spec recorded, or "".
func notCarriedOf(s types.SpecReport) string {
	for _, e := range s.ReportEntries {
		if e.Name == notCarriedEntryName {
			return e.Value.String()
		}
	}
	return ""
}

// carriedNot reports whether a call of the spec was not carried to the
// saver.
func (l *callLog) carriedNot() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.notCarried != nil
}

// isConcurrent reports whether calls of the spec overlapped.
func (l *callLog) isConcurrent() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.concurrent
}

// showConfig renders a config in a call.
func showConfig(c spec.Config) string {
	return fmt.Sprintf("thread=%q ns=%q id=%q", c.ThreadID, c.Namespace, c.CheckpointID)
}

// showListOptions renders List options in a call; filter values may
// contain themselves, so only their keys are shown.
func showListOptions(o spec.ListOptions) string {
	parts := []string{fmt.Sprintf("thread=%q", o.ThreadID)}
	if o.AllNamespaces {
		parts = append(parts, "all namespaces")
	} else {
		parts = append(parts, fmt.Sprintf("ns=%q", o.Namespace))
	}
	if o.CheckpointID != "" {
		parts = append(parts, fmt.Sprintf("id=%q", o.CheckpointID))
	}
	if o.Before != "" {
		parts = append(parts, fmt.Sprintf("before=%q", o.Before))
	}
	if len(o.Filter) > 0 {
		parts = append(parts, fmt.Sprintf("filter keys %q", slices.Sorted(maps.Keys(o.Filter))))
	}
	parts = append(parts, fmt.Sprintf("limit=%d", o.Limit))
	return strings.Join(parts, " ")
}

// clipString shortens s to at most n bytes.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// evidenceEntryName names the report entry holding a failed spec's
// evidence.
const evidenceEntryName = "checkpointkit evidence"

// recordEvidence adds the evidence of the current spec, when it failed, as
// a report entry. It runs in an AfterEach.
func recordEvidence(log *callLog) {
	r := g.CurrentSpecReport()
	differs := r.State == types.SpecStateSkipped && strings.HasPrefix(r.Failure.Message, differsPrefix)
	if !r.Failed() && !differs || log == nil {
		return
	}
	ev := report.Evidence{}
	if c, ok := log.failing(r.Failure.Message); ok {
		ev.Call = c.op + "(" + c.args + ")"
		ev.Operation, ev.Result, ev.Observation = c.op, c.result(), c.observation()
	} else if log.isConcurrent() {
		// Concurrent calls: which call came last, and what exactly a
		// reader saw first, change from run to run; only that the store
		// was seen in a wrong state does not. The message keeps the rest.
		ev.Operation, ev.Observation = "concurrent calls", "wrong state"
		ev.Result = messageShape(r.Failure.Message)
	}
	if r.Failure.ForwardedPanic != "" {
		ev.Observation = "panic"
	}
	ev.Expected, ev.Actual = expectedActual(r.Failure.Message)
	ev.Lengths = lengths(ev.Expected, ev.Actual)
	data, err := json.Marshal(ev)
	if err == nil {
		g.AddReportEntry(evidenceEntryName, string(data))
	}
}

// evidenceOf returns the evidence a failed spec recorded.
func evidenceOf(s types.SpecReport) *report.Evidence {
	for _, e := range s.ReportEntries {
		if e.Name == evidenceEntryName {
			var ev report.Evidence
			if json.Unmarshal([]byte(e.Value.String()), &ev) == nil {
				return &ev
			}
		}
	}
	return nil
}

// Gomega's failure messages: "Expected\n    <T>: actual\nto equal\n    <T>:
// expected".
var (
	gomegaMessage = regexp.MustCompile(`(?s)Expected\n\s*(.*?)\n(to [a-z ]+|not to [a-z ]+)\n\s*(.*)`)
	gotWant       = regexp.MustCompile(`(?s)got (.*?),? want (.*)`)
)

// expectedActual extracts the expected and actual values from a failure
// message, each on at most a few hundred bytes.
func expectedActual(msg string) (expected, actual string) {
	if m := gomegaMessage.FindStringSubmatch(msg); m != nil {
		return clipString(strings.TrimSpace(m[3]), 400), clipString(strings.TrimSpace(m[1]), 400)
	}
	if m := gotWant.FindStringSubmatch(msg); m != nil {
		return clipString(strings.TrimSpace(m[2]), 400), clipString(strings.TrimSpace(m[1]), 400)
	}
	return "", ""
}

// sameCause reports whether the failures of rule x can be caused by those
// of rule r: every failed focused spec citing x (and not r) failed on the
// same operation, with the same observation, as some failed or differing
// spec citing r. A failure without evidence shares no cause; a failed
// spec citing both rules is one failure.
func sameCause(specs []report.SpecResult, r, x string) bool {
	type key struct{ op, obs, lengths string }
	causes := map[key]bool{}
	for _, s := range specs {
		if s.Broad == "" && s.Evidence != nil && (s.Status == report.StatusFailed || s.Status == report.StatusDiffers) && slices.Contains(s.Rules, r) {
			causes[key{s.Evidence.Operation, s.Evidence.Observation, s.Evidence.Lengths}] = true
		}
	}
	for _, s := range specs {
		if s.Broad != "" || s.Status != report.StatusFailed || !slices.Contains(s.Rules, x) || slices.Contains(s.Rules, r) {
			continue
		}
		if s.Evidence == nil || !causes[key{s.Evidence.Operation, s.Evidence.Observation, s.Evidence.Lengths}] {
			return false
		}
	}
	// A failed spec citing both is r's own failure.
	return true
}

// lenOf matches the length Gomega prints for a list: "<[]string | len:3".
var lenOf = regexp.MustCompile(`len:([0-9]+)`)

// lengths compares the lengths of an expected and an actual list: "same",
// "other", or "" when either is not a list.
func lengths(expected, actual string) string {
	e, a := lenOf.FindStringSubmatch(expected), lenOf.FindStringSubmatch(actual)
	switch {
	case e == nil || a == nil:
		return ""
	case e[1] == a[1]:
		return "same"
	}
	return "other"
}

// digitToken matches a word holding a digit: IDs, counts, indexes.
var digitToken = regexp.MustCompile(`[^\s,;()]*[0-9][^\s,;()]*`)

// messageShape reduces a failure message to what it observed, without the
// IDs and counts that vary between runs: the last ": "-separated part of
// its first line of substance ("checkpoint w1-005: torn, channel values"
// gives "torn, channel values"), words holding digits replaced by "#".
func messageShape(msg string) string {
	lines := strings.Split(msg, "\n")
	line := ""
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, "but got an error:") {
			// Gomega: the error's type on the next line, then its text.
			for _, next := range lines[i+1:] {
				if t := strings.TrimSpace(next); t != "" && !strings.HasPrefix(t, "<") {
					line = t
					break
				}
			}
			break
		}
		if line == "" && l != "" {
			line = l
		}
	}
	line = strings.TrimSuffix(strings.TrimSpace(line), ":")
	if i := strings.LastIndex(line, ": "); i >= 0 {
		line = line[i+2:]
	}
	return clipString(digitToken.ReplaceAllString(strings.TrimSpace(line), "#"), 80)
}
