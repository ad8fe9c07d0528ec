package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
	"github.com/checkpointkit/checkpointkit/spec"
)

// testTimeout bounds every wait of these tests, so that a broken bridge
// fails a test instead of hanging it.
const testTimeout = 30 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func openSaver(t *testing.T, p *bridge.Process) spec.Saver {
	t.Helper()
	s, err := p.Open(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.(io.Closer).Close() })
	return s
}

// reportOf calls GetTuple on a gate thread and returns its report.
func reportOf(t *testing.T, ctx context.Context, s spec.Saver, thread string) any {
	t.Helper()
	tu, err := s.GetTuple(ctx, spec.Config{ThreadID: thread})
	if err != nil {
		t.Fatalf("GetTuple %s: %v", thread, err)
	}
	return tu.Metadata["report"]
}

func putN(t *testing.T, s spec.Saver, thread string, n int) {
	t.Helper()
	ctx := testContext(t)
	for i := range n {
		cp := spec.Checkpoint{V: 4, ID: fmt.Sprintf("%05d", i), TS: "2026-01-01T00:00:00Z", ChannelValues: map[string]any{"n": i}, ChannelVersions: spec.Versions{"n": "1"}}
		if _, err := s.Put(ctx, spec.Config{ThreadID: thread}, cp, spec.Metadata{"i": i}, spec.Versions{"n": "1"}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCancelMidCall(t *testing.T) {
	s := openSaver(t, startHelper(t, "gate"))
	ctx := testContext(t)
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := s.GetTuple(cctx, spec.Config{ThreadID: "block:a"})
		errc <- err
	}()
	reportOf(t, ctx, s, "started:a") // the saver call is running in the server
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || !errors.Is(err, cctx.Err()) {
		t.Fatalf("got %v, want an error wrapping context.Canceled", err)
	}
	if why := reportOf(t, ctx, s, "ended:a"); why != context.Canceled.Error() {
		t.Errorf("the server's saver call ended with %q, want %q: cancel did not reach its context", why, context.Canceled)
	}
}

// TestCancelledWriteOutcome checks that a write cancelled after it reached
// the saver reports the saver's own outcome: here its error.
func TestCancelledWriteOutcome(t *testing.T) {
	s := openSaver(t, startHelper(t, "gate"))
	ctx := testContext(t)
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- s.DeleteThread(cctx, "refuse:w") }()
	reportOf(t, ctx, s, "started:w") // the write is running in the server
	cancel()
	reportOf(t, ctx, s, "release:w")
	if err := <-errc; !errors.Is(err, spec.ErrInvalidConfig) {
		t.Fatalf("got %v, want the saver's ErrInvalidConfig", err)
	}
}

func TestDeadlineTravels(t *testing.T) {
	s := openSaver(t, startHelper(t, "gate"))
	ctx := testContext(t)
	if got := reportOf(t, context.Background(), s, "deadline:none"); got != int64(-1) {
		t.Errorf("without a deadline the server saw %v ms left, want none (-1)", got)
	}
	dctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	got, _ := reportOf(t, dctx, s, "deadline:hour").(int64)
	if got > time.Hour.Milliseconds() || got < (time.Hour-time.Minute).Milliseconds() {
		t.Errorf("with an hour left the server saw %d ms, want timeout_ms close to 3600000", got)
	}
	// An expiring deadline fails the call with DeadlineExceeded.
	dctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := s.GetTuple(dctx, spec.Config{ThreadID: "block:d"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	if why := reportOf(t, ctx, s, "ended:d"); why == nil {
		t.Error("the server's saver call did not end")
	}
}

func TestCancelMidList(t *testing.T) {
	p := bridgetest.Start(t, "-adapter", "memory")
	s := openSaver(t, p)
	putN(t, s, "t", 300)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	n := 0
	var last error
	for tu, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			last = err
			continue
		}
		if tu == nil {
			t.Fatal("nil tuple without an error")
		}
		if n++; n == 10 {
			cancel()
		}
	}
	if n != 10 || !errors.Is(last, context.Canceled) {
		t.Fatalf("got %d tuples then %v, want 10 then context.Canceled", n, last)
	}

	// The server side: a list blocked in the saver is cancelled there.
	g := openSaver(t, startHelper(t, "gate"))
	ctx, cancel2 := context.WithCancel(testContext(t))
	defer cancel2()
	n, last = 0, nil
	for _, err := range g.List(ctx, spec.ListOptions{ThreadID: "block:l"}) {
		if err != nil {
			last = err
			continue
		}
		n++
		reportOf(t, testContext(t), g, "started:l")
		cancel2()
	}
	if n != 1 || !errors.Is(last, context.Canceled) {
		t.Fatalf("got %d tuples then %v, want 1 then context.Canceled", n, last)
	}
	if why := reportOf(t, testContext(t), g, "ended:l"); why != context.Canceled.Error() {
		t.Errorf("the server's iterator ended with %q, want %q", why, context.Canceled)
	}
}

func TestListEarlyBreak(t *testing.T) {
	p := startHelper(t, "gate", bridge.WithListCredit(8))
	s := openSaver(t, p)
	ctx := testContext(t)
	ignore := goleak.IgnoreCurrent()
	for tu, err := range s.List(ctx, spec.ListOptions{ThreadID: "produce:b"}) {
		if err != nil || tu == nil {
			t.Fatal(tu, err)
		}
		break
	}
	if why := reportOf(t, ctx, s, "ended:b"); why != "stopped by the consumer" {
		t.Errorf("the server's iterator ended with %q, want it stopped by the break", why)
	}
	goleak.VerifyNone(t, ignore)
	// The saver keeps working.
	putN(t, s, "after", 3)
	if _, err := s.GetTuple(ctx, spec.Config{ThreadID: "after"}); err != nil {
		t.Fatal(err)
	}
}

// TestListCredit checks flow control: with a credit of 8, a consumer that
// took one item has let the server produce at most 8 + 1 tuples (the ninth
// waits for credit), however long it waits.
func TestListCredit(t *testing.T) {
	s := openSaver(t, startHelper(t, "gate", bridge.WithListCredit(8)))
	ctx := testContext(t)
	next, stop := iter.Pull2(s.List(ctx, spec.ListOptions{ThreadID: "produce:c"}))
	defer stop()
	if _, err, ok := next(); !ok || err != nil {
		t.Fatal(err)
	}
	if got := reportOf(t, ctx, s, "produced:c=9"); got != int64(9) {
		t.Fatalf("the server produced %v tuples for a consumer that took 1 with a credit of 8, want 9", got)
	}
	// Taking more grants more credit, and the whole list arrives.
	n := 1
	for {
		_, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1000 {
		t.Errorf("got %d tuples, want 1000", n)
	}
}

func TestErrorMapping(t *testing.T) {
	s := openSaver(t, bridgetest.Start(t, "-adapter", "memory"))
	ctx := testContext(t)
	putN(t, s, "t", 1)
	pr := s.(spec.Pruner)
	for _, tc := range []struct {
		name    string
		err     error
		want    error
		message string // part of the server's message, kept
	}{
		{"missing checkpoint", get(ctx, s, spec.Config{ThreadID: "t", CheckpointID: "nope"}), spec.ErrNotFound, "nope"},
		{"empty thread", get(ctx, s, spec.Config{}), spec.ErrInvalidConfig, "empty thread ID"},
		{"NUL in thread", s.DeleteThread(ctx, "a\x00b"), spec.ErrInvalidConfig, "NUL"},
		{"negative limit", listErr(ctx, s, spec.ListOptions{Limit: -1}), spec.ErrInvalidArgument, "-1"},
		{"unknown strategy", pr.Prune(ctx, []string{"t"}, spec.PruneStrategy(7)), spec.ErrInvalidArgument, "strategy"},
		{"bytes in metadata", put(ctx, s, spec.Metadata{"b": []byte("x")}, nil), spec.ErrUnsupportedValue, "metadata"},
		{"NaN in a filter", listErr(ctx, s, spec.ListOptions{Filter: spec.Metadata{"f": math.NaN()}}), spec.ErrUnsupportedValue, "NaN"},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
			continue
		}
		var be *bridge.Error
		if tc.want != spec.ErrNotFound && (!errors.As(tc.err, &be) || !strings.Contains(be.Message, tc.message)) {
			t.Errorf("%s: %v is not the server's *bridge.Error mentioning %q", tc.name, tc.err, tc.message)
		}
	}

	// What JSON cannot carry the client rejects itself, as not carried:
	// never as the saver's refusal, which it is not.
	self := []any{nil}
	self[0] = self
	for name, err := range map[string]error{
		"bad UTF-8 thread": get(ctx, s, spec.Config{ThreadID: "\xff"}),
		"bad UTF-8 list":   listErr(ctx, s, spec.ListOptions{Before: "\xfe"}),
		"bad UTF-8 value":  put(ctx, s, nil, map[string]any{"c": "\xff"}),
		"struct value":     put(ctx, s, nil, map[string]any{"c": struct{}{}}),
		"bad UTF-8 key":    put(ctx, s, spec.Metadata{"\xff": 1}, nil),
		"self-containing":  put(ctx, s, nil, map[string]any{"c": self}),
	} {
		if !errors.Is(err, bridge.ErrNotCarried) || errors.Is(err, spec.ErrInvalidConfig) || errors.Is(err, spec.ErrUnsupportedValue) {
			t.Errorf("%s: got %v, want only ErrNotCarried", name, err)
		}
	}

	// What the wire can carry reaches the saver, which judges it: a value
	// deeper than spec.MaxValueDepth is the memory adapter's to refuse.
	deep := any(int64(1))
	for range spec.MaxValueDepth + 1 {
		deep = []any{deep}
	}
	if err := put(ctx, s, nil, map[string]any{"c": deep}); !errors.As(err, new(*bridge.Error)) || !errors.Is(err, spec.ErrUnsupportedValue) {
		t.Errorf("too deep a value: got %v, want the server's unsupported_value", err)
	}
}

func get(ctx context.Context, s spec.Saver, cfg spec.Config) error {
	_, err := s.GetTuple(ctx, cfg)
	return err
}

func put(ctx context.Context, s spec.Saver, md spec.Metadata, values map[string]any) error {
	vs := spec.Versions{}
	for k := range values {
		vs[k] = "1"
	}
	_, err := s.Put(ctx, spec.Config{ThreadID: "t"}, spec.Checkpoint{V: 4, ID: "x", ChannelValues: values, ChannelVersions: vs}, md, vs)
	return err
}

func listErr(ctx context.Context, s spec.Saver, opts spec.ListOptions) error {
	for _, err := range s.List(ctx, opts) {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestCapabilities checks that an opened saver implements exactly the
// optional interfaces its server has: all four for the memory adapter,
// none for a saver without them (whose server answers unsupported).
func TestCapabilities(t *testing.T) {
	full := openSaver(t, bridgetest.Start(t, "-adapter", "memory"))
	limitedProc := startHelper(t, "limited")
	limited := openSaver(t, limitedProc)
	for name, c := range map[string]struct {
		s    spec.Saver
		want bool
	}{"memory": {full, true}, "limited": {limited, false}} {
		_, copier := c.s.(spec.ThreadCopier)
		_, deleter := c.s.(spec.RunDeleter)
		_, pruner := c.s.(spec.Pruner)
		_, versioner := c.s.(spec.VersionGenerator)
		if copier != c.want || deleter != c.want || pruner != c.want || versioner != c.want {
			t.Errorf("%s: ThreadCopier %v RunDeleter %v Pruner %v VersionGenerator %v, want all %v", name, copier, deleter, pruner, versioner, c.want)
		}
		if _, ok := c.s.(io.Closer); !ok {
			t.Errorf("%s: not an io.Closer", name)
		}
	}
	if got := limitedProc.Capabilities(); len(got) != 1 || got[0] != "open" {
		t.Errorf("limited server capabilities %v, want [open]", got)
	}
	v := full.(spec.VersionGenerator).NextVersion("")
	if spec.CompareVersions(v, "") <= 0 {
		t.Errorf("NextVersion(\"\") = %q, not greater", v)
	}
}
