// Package memory is checkpointkit's in-memory checkpoint saver.
//
// It is the reference adapter: the conformance suite's control subject, the
// base of the mutant savers that prove the suite, and the saver downstream
// tests use when they want the contract without a database. It is built like
// a production adapter rather than a toy:
//
//   - safe for concurrent use from many goroutines (one RWMutex; readers never
//     block each other);
//   - no caller can change stored state through a value it passed in or
//     received, and what comes back is exactly the normalised value: with
//     the default serde, channel values and pending writes are normalised
//     once when stored and kept as a private tree that is never modified,
//     and a read copies only its lists, maps, delta snapshots and byte
//     strings, sharing the strings and numbers in them (a list of 1,000
//     strings of 500 bytes reads in about 10 µs and 18 KB, not 300 µs and
//     580 KB decoding MessagePack); with any other [spec.Serde] (see
//     [WithSerde]) values are encoded when stored and decoded on every read;
//   - values are stored once per (thread, namespace, channel, version), as
//     the contract requires, so a checkpoint that does not list a channel in
//     its new versions reads the value stored by an earlier Put;
//   - [Saver.List] is lazy: it walks per-namespace sorted ID indexes, holds
//     the lock only while producing one tuple, and stops as soon as the
//     consumer breaks;
//   - [Saver.DeleteThread] costs the size of that thread, not of all data.
//
// It implements [spec.Saver] and every optional capability:
// [spec.ThreadCopier], [spec.RunDeleter], [spec.Pruner],
// [spec.VersionGenerator] and [spec.DeltaHistoryReader].
//
// It has the shape of every checkpointkit adapter, minus what needs a
// backend: there is no target to Open and no handle to wrap, so [New]
// (which returns a ready saver) is the only constructor; [Saver.Setup] and
// [Saver.Close] are no-ops that exist so that code written against one
// adapter works against another, and a Saver is an [io.Closer]. Close
// keeps the data readable. [WithSerde] encodes channel values and
// pending-write values, as in every adapter; metadata is kept as
// normalised values, as every adapter keeps it in its backend's own form.
// New has no error to return, so an invalid option makes it panic with an
// error wrapping [spec.ErrInvalidArgument].
package memory
