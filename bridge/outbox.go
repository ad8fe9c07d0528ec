package bridge

import (
	"io"
	"sync"
)

// outbox serialises the messages of many goroutines onto one writer
// without a writer goroutine: the sender that finds no write in progress
// writes itself, also whatever others queue meanwhile, and the others
// return at once. That keeps a call's latency free of a goroutine handoff
// and batches messages under load. sendAsync never blocks, for messages
// that must get out even when the peer stops reading (cancel).
type outbox struct {
	w       io.Writer
	onError func(error) // called once, outside the lock, on a write error

	mu      sync.Mutex
	buf     []byte // queued messages
	spare   []byte // the previous buffer, for reuse
	writing bool   // a sender is writing; it takes whatever is queued
	failed  bool
	closing bool
	idle    *sync.Cond // signalled when writing ends
}

// newOutbox returns an outbox writing to w. When closed, it closes w if w
// is an io.Closer.
func newOutbox(w io.Writer, onError func(error)) *outbox {
	o := &outbox{w: w, onError: onError}
	o.idle = sync.NewCond(&o.mu)
	return o
}

// send queues a message built by fill (which appends to the buffer it is
// given) and writes the queue unless another sender is writing. It returns
// false when the outbox is closed.
func (o *outbox) send(fill func([]byte) []byte) bool {
	o.mu.Lock()
	if o.closing {
		o.mu.Unlock()
		return false
	}
	o.buf = fill(o.buf)
	if o.writing {
		o.mu.Unlock()
		return true
	}
	o.writing = true
	o.flushLocked()
	return true
}

// sendAsync is send without the write: a goroutine writes the queue if no
// sender is writing.
func (o *outbox) sendAsync(fill func([]byte) []byte) {
	o.mu.Lock()
	if o.closing {
		o.mu.Unlock()
		return
	}
	o.buf = fill(o.buf)
	if o.writing {
		o.mu.Unlock()
		return
	}
	o.writing = true
	o.mu.Unlock()
	go func() {
		o.mu.Lock()
		o.flushLocked()
	}()
}

// flushLocked writes the queue until it is empty, then ends the writing
// role. It is called with mu held and writing set, and returns with mu
// released.
func (o *outbox) flushLocked() {
	var werr error
	for len(o.buf) > 0 && !o.failed {
		b := o.buf
		o.buf, o.spare = o.spare[:0], nil
		o.mu.Unlock()
		_, err := o.w.Write(b)
		o.mu.Lock()
		if cap(b) <= 1<<20 { // keep a modest buffer, let a huge one go
			o.spare = b[:0]
		}
		if err != nil {
			o.failed, werr = true, err
		}
	}
	if o.failed {
		o.buf = nil
	}
	o.writing = false
	o.idle.Broadcast()
	o.mu.Unlock()
	if werr != nil && o.onError != nil {
		o.onError(werr)
	}
}

// close ends the outbox; later sends are dropped. Queued messages are
// written first, unless a write is in progress and the writer is an
// io.Closer: then it is closed at once, which also ends a write blocked on
// a peer that stopped reading. Otherwise close waits for the write in
// progress. It is safe to call more than once.
func (o *outbox) close() {
	c, closer := o.w.(io.Closer)
	o.mu.Lock()
	if o.closing {
		o.mu.Unlock()
		return
	}
	o.closing = true
	switch {
	case o.writing && closer:
		_ = c.Close()
	case !o.writing && len(o.buf) > 0:
		o.writing = true
		o.flushLocked()
		o.mu.Lock()
	}
	for o.writing {
		o.idle.Wait()
	}
	o.mu.Unlock()
	if closer {
		_ = c.Close()
	}
}
