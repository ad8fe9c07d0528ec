package bridge

import (
	"context"
	"fmt"
	"iter"
	"strconv"

	"github.com/checkpointkit/checkpointkit/spec"
)

// List implements spec.Saver. Items stream under credit: the server may
// send the Process's list credit ahead, and the iterator grants more as the
// loop takes them, so a slow consumer never buffers the whole list. Breaking
// out of the loop, or ctx ending, sends cancel; no goroutine is involved,
// so nothing is left behind.
func (r *remote) List(ctx context.Context, opts spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	return func(yield func(*spec.Tuple, error) bool) {
		if err := r.list(ctx, opts, yield); err != nil {
			yield(nil, err)
		}
	}
}

// list runs one list request; it returns the error to yield last, or nil
// when the stream ended or the consumer stopped.
func (r *remote) list(ctx context.Context, opts spec.ListOptions, yield func(*spec.Tuple, error) bool) error {
	const op = "list"
	if r.closed.Load() {
		return fmt.Errorf("bridge: %s: saver %q is closed: %w", op, r.id, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bridge: %s: %w", op, err)
	}
	if err := carryable(op, "identifier", opts.ThreadID, opts.Namespace, opts.CheckpointID, opts.Before); err != nil {
		return err
	}
	c := r.p.c
	if err := c.failure(); err != nil {
		return err
	}
	credit := r.p.opts.credit
	raw, err := appendListParams(make([]byte, 0, 256), opts, credit)
	if err != nil {
		return fmt.Errorf("bridge: %s: %w", op, err)
	}
	id, p := c.register()
	defer c.unregister(id)
	if err := c.request(ctx, id, r.id, op, raw); err != nil {
		return fmt.Errorf("bridge: %s: %w", op, err)
	}
	answered := false
	defer func() {
		if !answered { // the consumer stopped, ctx ended, or an item was bad
			c.cancel(id)
		}
	}()
	refill := max(credit/2, 1)
	taken := 0
	for {
		m, err := c.next(ctx, p)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return fmt.Errorf("bridge: %s: %w", op, ctxErr)
			}
			answered = true // the connection is gone
			return err
		}
		switch {
		case m.err != nil:
			answered = true
			return &Error{Code: m.err.code, Message: m.err.message}
		case !m.hasItem:
			answered = true
			return nil
		}
		t, err := tupleOf(m.item)
		if err == nil && t == nil {
			err = badRequest("a list item is null")
		}
		if err != nil {
			return fmt.Errorf("bridge: %s: an item: %w", op, err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bridge: %s: %w", op, err)
		}
		if !yield(t, nil) {
			return nil
		}
		if taken++; taken == refill {
			taken = 0
			c.out.send(func(b []byte) []byte { return appendCredit(b, id, int64(refill)) })
		}
	}
}

// appendListParams appends the params of a list request, members in key
// order.
func appendListParams(b []byte, opts spec.ListOptions, credit int) ([]byte, error) {
	b = append(b, `{"all_namespaces":`...)
	b = strconv.AppendBool(b, opts.AllNamespaces)
	b = append(b, `,"before":`...)
	b = appendString(b, opts.Before)
	b = append(b, `,"checkpoint_id":`...)
	b = appendString(b, opts.CheckpointID)
	b = append(b, `,"checkpoint_ns":`...)
	b = appendString(b, opts.Namespace)
	b = append(b, `,"credit":`...)
	b = strconv.AppendInt(b, int64(credit), 10)
	b = append(b, `,"filter":`...)
	b, err := appendObject(b, opts.Filter)
	if err != nil {
		return b, err
	}
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(opts.Limit), 10)
	b = append(b, `,"thread_id":`...)
	b = appendString(b, opts.ThreadID)
	return append(b, '}'), nil
}
