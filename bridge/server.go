package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Opener returns a fresh saver over empty, isolated storage; a Serve calls
// it once per open request. If the saver implements io.Closer, Serve closes
// it when the client sends close or the session ends; that is where an
// Opener's saver releases its storage.
type Opener func(ctx context.Context) (spec.Saver, error)

// ServeOption configures Serve.
type ServeOption func(*serveOptions)

type serveOptions struct {
	name     string
	logger   *slog.Logger
	shutdown time.Duration
}

// WithName sets the server name reported in the hello answer (default
// "checkpointkit").
func WithName(name string) ServeOption {
	return func(o *serveOptions) { o.name = name }
}

// WithLogger sets where Serve reports what it cannot answer: malformed
// lines, panics in a saver, errors closing savers (default: slog's default
// logger, which writes to standard error; never log to the protocol's
// output).
func WithLogger(l *slog.Logger) ServeOption {
	return func(o *serveOptions) { o.logger = l }
}

// WithShutdownTimeout bounds how long Serve lets requests still running at
// EOF finish before it cancels them, and then how long it waits for saver
// calls that do not honour their cancelled context before it closes the
// savers anyway (default 2 s each, within the client's 5 s grace).
func WithShutdownTimeout(d time.Duration) ServeOption {
	return func(o *serveOptions) { o.shutdown = d }
}

// Serve runs the server side of the bridge protocol: it reads requests from
// r and writes answers to w until r reaches EOF or ctx is done, exposing a
// fresh saver from open for every open request. It handles requests
// concurrently, honours timeout_ms and cancel through each call's context,
// streams list items under the client's credit, and advertises the optional
// capabilities (copy_thread, delete_for_runs, prune, next_version,
// delta_history) that the
// opened savers implement. When the session ends it lets the requests
// still running finish (at EOF, within the shutdown timeout: the client may
// still be reading) or cancels them (when ctx is done), closes every saver
// it opened and returns: nil at EOF, ctx.Err() when ctx is done, or the
// read error. Serve closes neither r nor w; when ctx ends the session, a
// Read of r in progress is left to return on its own.
func Serve(ctx context.Context, r io.Reader, w io.Writer, open Opener, opts ...ServeOption) error {
	o := serveOptions{name: "checkpointkit", logger: slog.Default(), shutdown: 2 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if open == nil {
		return errors.New("bridge: Serve needs an Opener")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{
		opts:     o,
		open:     open,
		base:     ctx,
		inflight: make(map[int64]*request),
		savers:   make(map[string]spec.Saver),
	}
	s.out = newOutbox(struct{ io.Writer }{w}, func(err error) {
		o.logger.Error("bridge: writing to the client failed; ending the session", "err", err)
		cancel()
	})

	s.readDone = make(chan error, 1)
	go s.readLoop(bufio.NewReaderSize(r, 64<<10))
	var err error
	select {
	case err = <-s.readDone:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.shutdown(err == nil)
	return err
}

// server is the state of one Serve session.
type server struct {
	opts serveOptions
	open Opener
	base context.Context
	out  *outbox

	mu       sync.Mutex
	closing  bool // no new requests
	final    bool // savers collected for closing: no new ones
	inflight map[int64]*request
	savers   map[string]spec.Saver
	spare    spec.Saver // opened to learn the capabilities; handed to the first open
	caps     []string   // nil until known
	nextID   int
	handlers sync.WaitGroup
	readDone chan error // the reader's nil at EOF, or its read error
}

// request is one request being worked on.
type request struct {
	id     int64
	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool // stops the AfterFunc that answers when ctx ends

	mu       sync.Mutex // orders items before the final answer
	answered bool

	credit     atomic.Int64  // list items the client can still take
	creditWake chan struct{} // capacity 1
}

// readLoop reads messages until EOF or a read error, which it reports on
// readDone. A request is run by the goroutine that read it, after it has
// handed the reader to a new goroutine: the request starts without waiting
// for another goroutine to be scheduled, which on a small machine is most
// of a call's latency. Cancels and credits are handled inline.
func (s *server) readLoop(br *bufio.Reader) {
	for {
		line, err := br.ReadBytes('\n')
		if !isBlank(line) {
			if run := s.dispatch(line); run != nil {
				if err == nil {
					go s.readLoop(br)
				} else {
					go s.endRead(err)
				}
				run()
				return
			}
		}
		if err != nil {
			s.endRead(err)
			return
		}
	}
}

func (s *server) endRead(err error) {
	if errors.Is(err, io.EOF) {
		err = nil
	} else {
		err = fmt.Errorf("bridge: reading requests: %w", err)
	}
	s.readDone <- err
}

// dispatch handles one line: a cancel or credit at once; for a request it
// returns the func that runs it.
func (s *server) dispatch(line []byte) (run func()) {
	m, err := parseMessage(line)
	if err == nil && m.id == 0 {
		err = badRequest("message without a positive integer id")
	}
	if err != nil {
		s.rejectLine(m.id, err.Error(), line)
		return nil
	}
	switch {
	case m.method != "":
		return s.start(m)
	case m.cancel:
		s.mu.Lock()
		req := s.inflight[m.id]
		s.mu.Unlock()
		if req != nil {
			req.cancel()
		}
	case m.credit != nil:
		s.mu.Lock()
		req := s.inflight[m.id]
		s.mu.Unlock()
		if req != nil && *m.credit > 0 {
			req.credit.Add(*m.credit)
			select {
			case req.creditWake <- struct{}{}:
			default:
			}
		}
	default:
		s.rejectLine(m.id, "message is neither a request, a cancel nor a credit", line)
	}
	return nil
}

// rejectLine answers a message that cannot be handled as a request with
// bad_request, under its id when it has a usable one and under id 0
// otherwise, and logs it.
func (s *server) rejectLine(id int64, why string, line []byte) {
	if id < 0 {
		id = 0
	}
	s.opts.logger.Warn("bridge: rejected a message", "why", why, "line", truncate(line, 200))
	s.mu.Lock()
	busy := s.inflight[id] != nil
	s.mu.Unlock()
	if busy { // do not answer an open request on its behalf
		id = 0
	}
	s.out.sendAsync(func(b []byte) []byte { return appendError(b, id, codeBadRequest, why) })
}

// writes are the methods that change what a saver stores. Once one has
// reached the saver, its answer is the saver's own outcome, also when the
// request is cancelled or passes its deadline meanwhile (PROTOCOL.md,
// "Deadlines and cancellation").
var writes = map[string]bool{
	"put": true, "put_writes": true, "delete_thread": true, "copy_thread": true,
	"delete_for_runs": true, "prune": true, "close": true,
}

// start registers a request and returns the func that runs it, or nil
// when it is rejected.
func (s *server) start(m *message) (run func()) {
	var (
		ctx    context.Context
		cancel context.CancelFunc
	)
	switch {
	case m.timeoutMS == nil:
		ctx, cancel = context.WithCancel(s.base)
	default:
		ctx, cancel = context.WithTimeout(s.base, time.Duration(*m.timeoutMS)*time.Millisecond)
	}
	req := &request{id: m.id, ctx: ctx, cancel: cancel, creditWake: make(chan struct{}, 1)}

	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		cancel()
		s.out.sendAsync(func(b []byte) []byte { return appendError(b, m.id, codeCanceled, "bridge: the session is ending") })
		return nil
	}
	if s.inflight[m.id] != nil {
		s.mu.Unlock()
		cancel()
		s.rejectLine(m.id, fmt.Sprintf("request id %d is already in use by an open request", m.id), nil)
		return nil
	}
	s.inflight[m.id] = req
	s.handlers.Add(1)
	s.mu.Unlock()

	// A read is answered once its context ends, even if the saver call
	// does not return: it changed nothing, so canceled or
	// deadline_exceeded is the truth. A write is not: the saver has its
	// context and stops if it can, but only the call's return says whether
	// the write landed, so that return is the answer, whenever it comes
	// (SPEC.md CTX-5).
	write := writes[m.method]
	req.stop = func() bool { return true }
	if !write {
		req.stop = context.AfterFunc(ctx, func() { s.finish(req, nil, ctx.Err()) })
	}
	return func() {
		defer s.handlers.Done()
		defer func() {
			if p := recover(); p != nil {
				s.opts.logger.Error("bridge: panic in a request", "method", m.method, "panic", p, "stack", string(debug.Stack()))
				s.finish(req, nil, fmt.Errorf("bridge: %s: panic: %v", m.method, p))
			}
		}()
		defer func() {
			req.stop()
			cancel()
		}()
		raw, err := s.handle(req, m)
		if err == nil && !write && ctx.Err() != nil {
			err = ctx.Err() // a read's answer may already be on its way
		}
		s.finish(req, raw, err)
	}
}

// finish sends the one final answer of req, unless it was already sent,
// and forgets the request. It is called by the request's goroutine and by
// the AfterFunc that answers when the request's context ends, whichever
// comes first.
func (s *server) finish(req *request, raw []byte, err error) {
	req.mu.Lock()
	if req.answered {
		req.mu.Unlock()
		return
	}
	req.answered = true
	s.mu.Lock()
	delete(s.inflight, req.id)
	s.mu.Unlock()
	if err != nil {
		code := codeOf(err)
		s.out.send(func(b []byte) []byte { return appendError(b, req.id, code, err.Error()) })
	} else {
		s.out.send(func(b []byte) []byte { return appendAnswer(b, req.id, "result", raw) })
	}
	req.mu.Unlock()
}

// sendItem sends one list item unless the request was already answered.
func (s *server) sendItem(req *request, raw []byte) bool {
	req.mu.Lock()
	defer req.mu.Unlock()
	if req.answered {
		return false
	}
	return s.out.send(func(b []byte) []byte { return appendAnswer(b, req.id, "item", raw) })
}

// shutdown ends the session. At EOF (finish) the requests still running
// may finish, credit no longer limits list streams (the client can grant
// no more), and only those still running after the shutdown timeout are
// cancelled; otherwise every request is cancelled at once. Then every saver
// is closed and the output flushed.
func (s *server) shutdown(finish bool) {
	s.mu.Lock()
	s.closing = true // from here on no request is added to handlers
	reqs := make([]*request, 0, len(s.inflight))
	for _, req := range s.inflight {
		reqs = append(reqs, req)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.handlers.Wait(); close(done) }()

	for _, req := range reqs {
		if finish {
			req.credit.Store(math.MaxInt64 / 2)
			select {
			case req.creditWake <- struct{}{}:
			default:
			}
		} else {
			req.cancel()
		}
	}
	t := time.NewTimer(s.opts.shutdown)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.mu.Lock()
		for _, req := range s.inflight {
			req.cancel()
		}
		s.mu.Unlock()
		if finish {
			t.Reset(s.opts.shutdown)
			select {
			case <-done:
			case <-t.C:
			}
		}
	}
	select {
	case <-done:
	default:
		s.opts.logger.Warn("bridge: saver calls still running at shutdown; closing the savers anyway")
	}

	s.mu.Lock()
	s.final = true
	savers := s.savers
	s.savers = map[string]spec.Saver{}
	if s.spare != nil {
		savers["spare"] = s.spare
		s.spare = nil
	}
	s.mu.Unlock()
	for id, sv := range savers {
		if err := closeSaver(sv); err != nil {
			s.opts.logger.Error("bridge: closing a saver at shutdown", "saver", id, "err", err)
		}
	}
	s.out.close()
}

// closeSaver closes sv if it is an io.Closer.
func closeSaver(sv spec.Saver) error {
	if c, ok := sv.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// capabilitiesOf lists the optional capabilities sv implements, open first.
func capabilitiesOf(sv spec.Saver) []string {
	caps := []string{capOpen}
	if _, ok := sv.(spec.ThreadCopier); ok {
		caps = append(caps, capCopyThread)
	}
	if _, ok := sv.(spec.RunDeleter); ok {
		caps = append(caps, capDeleteRuns)
	}
	if _, ok := sv.(spec.Pruner); ok {
		caps = append(caps, capPrune)
	}
	if _, ok := sv.(spec.VersionGenerator); ok {
		caps = append(caps, capNextVersion)
	}
	if _, ok := sv.(spec.DeltaHistoryReader); ok {
		caps = append(caps, capDeltaHistory)
	}
	return caps
}

// saverFor returns the saver a request addresses.
func (s *server) saverFor(id string) (spec.Saver, error) {
	s.mu.Lock()
	sv := s.savers[id]
	s.mu.Unlock()
	if sv == nil {
		return nil, fmt.Errorf("bridge: unknown saver %q (open one first): %w", id, ErrBadRequest)
	}
	return sv, nil
}

// newSaverID names a newly opened saver.
func (s *server) newSaverID() string {
	s.nextID++
	return "s" + strconv.Itoa(s.nextID)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
