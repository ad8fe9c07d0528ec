package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// client is the client side of one connection: it sends requests through
// an outbox and a reader goroutine routes every answer to the pending
// request of its id.
type client struct {
	out    *outbox
	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]*pending
	failed  chan struct{} // closed by fail
	err     error         // why the connection failed; set before failed is closed

	readDone chan struct{} // closed when the reader goroutine returns
}

// pending collects the answers of one request. The reader goroutine never
// blocks on it: a list stream's items queue here until the consumer takes
// them (credit keeps the queue short).
type pending struct {
	mu    sync.Mutex
	queue []*message
	ready chan struct{} // capacity 1
}

func (p *pending) push(m *message) {
	p.mu.Lock()
	p.queue = append(p.queue, m)
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// next returns the next answer, or the reason there will be none: ctx's
// error, or the connection's.
func (c *client) next(ctx context.Context, p *pending) (*message, error) {
	for {
		p.mu.Lock()
		if len(p.queue) > 0 {
			m := p.queue[0]
			p.queue[0] = nil
			p.queue = p.queue[1:]
			p.mu.Unlock()
			return m, nil
		}
		p.mu.Unlock()
		select {
		case <-p.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.failed:
			return nil, c.err
		}
	}
}

// newClient starts the reader goroutine of a connection; callers write
// their requests themselves through the outbox. onEOF is called by the
// reader when r ends; it returns the error every call fails with from then
// on.
func newClient(r io.Reader, w io.WriteCloser, onWriteError func(error), onEOF func(error) error) *client {
	c := &client{
		pending:  make(map[int64]*pending),
		failed:   make(chan struct{}),
		readDone: make(chan struct{}),
	}
	c.out = newOutbox(w, onWriteError)
	go func() {
		defer close(c.readDone)
		err := c.readLoop(r)
		c.fail(onEOF(err))
	}()
	return c
}

// fail marks the connection failed with err (the first call wins) and
// wakes every pending call.
func (c *client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.failed:
		return
	default:
	}
	c.err = err
	close(c.failed)
}

// failure returns the connection's error, or nil while it works.
func (c *client) failure() error {
	select {
	case <-c.failed:
		return c.err
	default:
		return nil
	}
}

// readLoop routes answers until r ends; it returns the read error (nil at
// EOF). A line that is not a message fails the connection: the server
// broke the protocol, and nothing it sends can be trusted.
func (c *client) readLoop(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if !isBlank(line) {
			if perr := c.route(line); perr != nil {
				c.fail(perr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (c *client) route(line []byte) error {
	m, err := parseMessage(line)
	if err != nil {
		return fmt.Errorf("bridge: the server wrote a line that is not a message (%v): %q: %w", err, truncate(line, 200), ErrBadRequest)
	}
	if m.id == 0 { // a complaint about a line of ours that named no request
		return badRequest("the server rejected a message of this client: %s", m.err.message)
	}
	if !m.hasResult && m.err == nil && !m.hasItem {
		return badRequest("the server wrote a message without result, error or item: %q", truncate(line, 200))
	}
	c.mu.Lock()
	p := c.pending[m.id]
	c.mu.Unlock()
	if p != nil { // otherwise a late answer to a request given up on
		p.push(m)
	}
	return nil
}

// register allocates a request id and its pending answers.
func (c *client) register() (int64, *pending) {
	id := c.nextID.Add(1)
	p := &pending{ready: make(chan struct{}, 1)}
	c.mu.Lock()
	c.pending[id] = p
	c.mu.Unlock()
	return id, p
}

func (c *client) unregister(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// request sends a request; params is the encoded params. A deadline on ctx
// becomes timeout_ms, rounded up so that it never reads as "expired" early.
func (c *client) request(ctx context.Context, id int64, saver, method string, params []byte) error {
	var timeoutMS int64
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return context.DeadlineExceeded
		}
		timeoutMS = int64((left + time.Millisecond - 1) / time.Millisecond)
	}
	if !c.out.send(func(b []byte) []byte { return appendRequest(b, id, saver, method, timeoutMS, params) }) {
		if err := c.failure(); err != nil {
			return err
		}
		return ErrClosed
	}
	return nil
}

// cancel tells the server that request id is given up on.
func (c *client) cancel(id int64) {
	c.out.sendAsync(func(b []byte) []byte { return appendCancel(b, id) })
}

// cancelGrace bounds the wait for the answer to a request cancelled by its
// caller's context.
const cancelGrace = 5 * time.Second

// call sends one request, its params appended by params, and waits for
// its answer: the result's JSON tree, or an error. When ctx ends first it
// sends cancel and waits up to cancelGrace for the answer: the result if
// the server finished anyway, else an error wrapping ctx.Err() (and the
// saver's *Error when the server answered with another code). An error
// answer is returned as *Error.
func (c *client) call(ctx context.Context, saver, method string, params func([]byte) ([]byte, error)) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bridge: %s: %w", method, err)
	}
	if err := c.failure(); err != nil {
		return nil, err
	}
	raw, err := params(make([]byte, 0, 256))
	if err != nil {
		return nil, fmt.Errorf("bridge: %s: %w", method, err)
	}
	id, p := c.register()
	defer c.unregister(id)
	if err := c.request(ctx, id, saver, method, raw); err != nil {
		return nil, fmt.Errorf("bridge: %s: %w", method, err)
	}
	m, err := c.next(ctx, p)
	if err != nil {
		ctxErr := ctx.Err()
		if ctxErr == nil {
			return nil, err
		}
		c.cancel(id)
		// The server answers a cancelled request too: canceled, or its
		// result when it was too late to stop. Waiting for that answer
		// keeps the call all or nothing (SPEC.md CTX-5): a call that fails
		// changed nothing, and one the server finished succeeds.
		// A saver's own error (its write failed on its own) is passed on
		// too, wrapped together with ctx's error.
		wait, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
		defer stop()
		m, err = c.next(wait, p)
		switch {
		case err != nil:
			return nil, fmt.Errorf("bridge: %s: the server did not answer within %v of the cancellation, so the call's outcome is unknown: %w", method, cancelGrace, ctxErr)
		case m.err != nil && m.err.code != codeCanceled && m.err.code != codeDeadlineExceeded:
			return nil, fmt.Errorf("bridge: %s: %w; the saver answered: %w", method, ctxErr, &Error{Code: m.err.code, Message: m.err.message})
		case m.err != nil:
			return nil, fmt.Errorf("bridge: %s: %w", method, ctxErr)
		}
	}
	switch {
	case m.err != nil:
		return nil, &Error{Code: m.err.code, Message: m.err.message}
	case !m.hasResult:
		return nil, badRequest("%s: the server sent a list item for a request that is not a list", method)
	}
	return m.result, nil
}

// noParams appends the params of a method that has none.
func noParams(b []byte) ([]byte, error) { return append(b, "{}"...), nil }
