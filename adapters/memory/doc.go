// Package memory is checkpointkit's in-memory checkpoint saver.
//
// It is the reference adapter: the conformance suite's control subject, the
// base of the mutant savers that prove the suite, and the saver downstream
// tests use when they want the contract without a database. It is built like
// a production adapter rather than a toy:
//
//   - safe for concurrent use from many goroutines (one RWMutex; readers never
//     block each other);
//   - channel values are encoded with a [spec.Serde] when stored and decoded
//     when read, so no caller can change stored state through a map it passed
//     in or received, and what comes back is exactly the normalised value;
//   - values are stored once per (thread, namespace, channel, version), as
//     the contract requires, so a checkpoint that does not list a channel in
//     its new versions reads the value stored by an earlier Put;
//   - [Saver.List] is lazy: it walks per-namespace sorted ID indexes, holds
//     the lock only while producing one tuple, and stops as soon as the
//     consumer breaks;
//   - [Saver.DeleteThread] costs the size of that thread, not of all data.
//
// It implements [spec.Saver] and every optional capability:
// [spec.ThreadCopier], [spec.RunDeleter], [spec.Pruner] and
// [spec.VersionGenerator].
package memory
