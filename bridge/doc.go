// Package bridge carries a checkpoint saver across a process boundary,
// speaking the protocol of PROTOCOL.md next to this file: newline-delimited
// JSON over a child process's standard input and output, multiplexed
// requests, typed values, credit-controlled list streams, cancellation and
// deadlines, and error codes that map to spec's sentinel errors.
//
// # Why
//
// The contract, the conformance suite and the reference engine are Go; the
// savers people run are not all Go. The bridge lets each side reach the
// other without re-implementing either: the suite judges a saver written in
// another language (LangGraph.js's, say) by starting it as a child process,
// and an engine in another language uses a checkpointkit adapter served by
// cmd/checkpointkit-saver. Since both directions meet in one protocol, the
// Go server and the Go client also test each other.
//
// # Server
//
// Serve exposes savers on a reader and a writer, usually os.Stdin and
// os.Stdout. Its Opener makes a fresh saver over empty, isolated storage
// for every open request; Serve closes it (when it is an io.Closer) on
// close or at the end of the session. Requests run concurrently, with no
// lock of the server's own, each with a context carrying its timeout_ms and
// ended by cancel. A read is answered as soon as that context ends, even if
// the saver call does not return; a write (put, put_writes, delete_thread,
// copy_thread, delete_for_runs, prune, close) is answered with what the
// saver call returns, since only that says whether it landed. Errors become
// codes by errors.Is against spec's sentinels, the context errors,
// ErrNotCarried (as unsupported_value), errors.ErrUnsupported and
// ErrBadRequest.
//
// # Client
//
// Start runs a server as a child process and Attach connects to one over
// given pipes; both say hello and return a Process, whose Open returns a
// spec.Saver implementing exactly the optional interfaces the server
// advertised, plus io.Closer. Its methods take their context first, send a
// deadline as timeout_ms, and on cancellation send cancel and return an
// error for which errors.Is(err, ctx.Err()) holds, in the middle of a List
// too. Error answers come back as *Error, which unwraps to the sentinel of
// its code. Everything the protocol can carry is sent for the saver to
// judge; what it cannot (a string that is not valid UTF-8 outside a
// checkpoint's ts, a value containing itself, a Go type outside the value
// model) fails before sending with an error wrapping ErrNotCarried, which
// is not any of spec's sentinels.
//
// A Process's Close closes the server's standard input, waits a grace
// period and kills it (its whole process group, on Linux, where the server
// is also signalled if the parent dies). A server that dies fails every
// pending and later call with an *ExitError naming its command line and
// quoting the tail of its standard error.
package bridge
