package mongo

import "context"

// detach returns the context for the rest of a write call, once its
// context has been checked: cancelling ctx no longer stops the call, so
// that it finishes whole instead of leaving part of its writes stored and
// returning context.Canceled (SPEC.md CTX-5). A MongoDB server carries out
// a command it has received even when the client stops waiting, so a call
// cut by cancellation could not tell what it had done. ctx's deadline, if
// any, still bounds the call, so that it never outlives it (FAULT-2); a
// call whose deadline passes midway is cut like a lost connection, and the
// fences of the maintenance calls keep it all or nothing for readers.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(d, dl)
	}
	return context.WithCancel(d)
}
