package conformance

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	g "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/conformance/report"
	"github.com/checkpointkit/checkpointkit/spec"
)

// listRecorder records, per spec text, the rule-specific behaviours of the
// List calls the suite's specs make on the memory adapter.
type listRecorder struct {
	mu   sync.Mutex
	used map[string]map[string]string // spec text -> behaviour -> first call using it
}

// recordingSaver is the memory adapter with its List calls recorded for
// one spec.
type recordingSaver struct {
	*memory.Saver
	rec  *listRecorder
	spec string
}

func (r recordingSaver) List(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	known := false
	if o.Before != "" {
		for t, err := range r.Saver.List(ctx, spec.ListOptions{ThreadID: o.ThreadID, AllNamespaces: true, CheckpointID: o.Before, Limit: 1}) {
			known = err == nil && t != nil
		}
	}
	if bs := listBehaviours(o, known); len(bs) > 0 {
		r.rec.mu.Lock()
		m := r.rec.used[r.spec]
		if m == nil {
			m = map[string]string{}
			r.rec.used[r.spec] = m
		}
		for _, b := range bs {
			if _, ok := m[b]; !ok {
				// Filter values may contain themselves: keys only.
				m[b] = fmt.Sprintf("thread=%q ns=%q all=%v before=%q limit=%d filter keys %v",
					o.ThreadID, o.Namespace, o.AllNamespaces, o.Before, o.Limit, slices.Sorted(maps.Keys(o.Filter)))
			}
		}
		r.rec.mu.Unlock()
	}
	return r.Saver.List(ctx, o)
}

// new is a Harness.New that records the List calls of the running spec.
func (l *listRecorder) new(context.Context) (spec.Saver, func(), error) {
	return recordingSaver{Saver: memory.New(), rec: l, spec: g.CurrentSpecReport().LeafNodeText}, nil, nil
}

// violations lists the focused specs that used the behaviour of a rule
// outside their own and their prerequisites.
func (l *listRecorder) violations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for text, used := range l.used {
		if broadGroup(text) != "" {
			continue
		}
		for b, call := range used {
			if !behaviourAllowed(text, b) {
				out = append(out, fmt.Sprintf("%q uses %s (List %s) but neither cites nor declares any of %v", text, b, call, behaviourRules[b]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkPrerequisitesDeclared fails t when a focused spec used, on the memory
// adapter, the behaviour of a rule outside its own and its prerequisites,
// or when the recording saw no use of a behaviour at all (the recorder
// would be broken).
func checkPrerequisitesDeclared(t *testing.T, l *listRecorder) {
	t.Helper()
	if v := l.violations(); len(v) > 0 {
		t.Errorf("focused specs that rely on rules they do not declare as prerequisites:\n%s", strings.Join(v, "\n"))
	}
	seen := map[string]bool{}
	l.mu.Lock()
	for _, used := range l.used {
		for b := range used {
			seen[b] = true
		}
	}
	l.mu.Unlock()
	for b := range behaviourRules {
		if !seen[b] {
			t.Errorf("no spec used %s: the List recorder sees nothing", b)
		}
	}
}

// TestJudgePrerequisites checks that a failed prerequisite turns a spec's
// failure into "not judged", and that a cycle of prerequisites judges both.
func TestJudgePrerequisites(t *testing.T) {
	specs := []report.SpecResult{
		{Text: "[LIST-LIMIT-1] x", Rules: []string{"LIST-LIMIT-1"}, Status: report.StatusFailed, Message: "m"},
		{Text: "[LIST-FILTER-1] y", Rules: []string{"LIST-FILTER-1"}, Status: report.StatusFailed},
		{Text: "[LIST-LIMIT-2] z", Rules: []string{"LIST-LIMIT-2"}, Status: report.StatusFailed},
		{Text: "[LIST-BEFORE-1] w", Rules: []string{"LIST-BEFORE-1"}, Status: report.StatusFailed},
	}
	judgePrerequisites(specs, nil)
	if specs[0].Status != report.StatusNotJudged || !slices.Equal(specs[0].Needs, []string{"LIST-BEFORE-1", "LIST-FILTER-1"}) || !strings.HasPrefix(specs[0].Message, "not judged: needs LIST-BEFORE-1, LIST-FILTER-1") {
		t.Errorf("LIST-LIMIT-1 with LIST-FILTER-1 failed: %+v", specs[0])
	}
	if specs[1].Status != report.StatusFailed {
		t.Errorf("LIST-FILTER-1 needs nothing: %+v", specs[1])
	}
	// LIST-LIMIT-2 and LIST-BEFORE-1 need each other: both stay judged.
	if specs[2].Status != report.StatusFailed || specs[3].Status != report.StatusFailed {
		t.Errorf("a cycle must judge both: %v %v", specs[2].Status, specs[3].Status)
	}
	if !slices.Equal(specs[2].Prerequisites, []string{"LIST-BEFORE-1"}) {
		t.Errorf("LIST-LIMIT-2 prerequisites %v", specs[2].Prerequisites)
	}
}

func TestMessageShape(t *testing.T) {
	for msg, want := range map[string]string{
		"Expected success, but got an error:\n    <*errors.joinError | 0x1>: \n    reader 0: checkpoint w1-008: torn, channel values (-want +got):\n  map": "torn, channel values (-want +got)",
		"Expected success, but got an error:\n    <*errors.errorString | 0x2>: \n    checkpoint w00-000: channel ch2 holds w00-011/ch2\n":                  "channel # holds #",
		"List order: got [a], want [b]": "got [a], want [b]",
	} {
		if got := messageShape(msg); got != want {
			t.Errorf("messageShape(%q) = %q, want %q", msg, got, want)
		}
	}
}

// carriedNot is an error like bridge.ErrNotCarried, without importing
// bridge.
type carriedNot struct{}

func (carriedNot) Error() string    { return "not carried" }
func (carriedNot) NotCarried() bool { return true }

// TestNotCarried checks that a spec whose call the transport could not
// carry is reported as not judged over this transport, whether it failed
// or passed.
func TestNotCarried(t *testing.T) {
	wrapped := fmt.Errorf("bridge: put: value contains itself: %w", carriedNot{})
	if !isNotCarried(wrapped) || isNotCarried(errors.New("x")) || isNotCarried(nil) {
		t.Fatal("isNotCarried")
	}
	entry := types.ReportEntry{Name: notCarriedEntryName, Value: types.WrapEntryValue(wrapped.Error())}
	h := buildHarnessReport("x", []types.SpecReport{
		{LeafNodeText: "[VALUE-9] rejects self-containing values", State: types.SpecStateFailed, ReportEntries: types.ReportEntries{entry}},
		{LeafNodeText: "[VALUE-10] rejects deep values", State: types.SpecStatePassed, ReportEntries: types.ReportEntries{entry}},
		{LeafNodeText: "[VALUE-1] reads values back", State: types.SpecStatePassed},
	})
	for _, s := range h.Specs[:2] {
		if s.Status != report.StatusNotJudged || !strings.HasPrefix(s.Message, notJudgedTransport) {
			t.Errorf("%s: %s %q", s.Text, s.Status, s.Message)
		}
	}
	if r := h.Rule("VALUE-9"); r.Status != report.StatusNotJudged || len(h.PrimaryFailedRules) != 0 {
		t.Errorf("VALUE-9 row %+v, roots %v", r, h.PrimaryFailedRules)
	}
}
