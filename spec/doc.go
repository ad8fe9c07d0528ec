// Package spec is the checkpoint-saver contract of checkpointkit, written as
// Go types and interfaces.
//
// LangGraph-style runtimes persist graph state through a checkpoint saver:
// Put after every superstep, PutWrites for the pending writes of each task,
// GetTuple for the latest or a given checkpoint, List for history and
// DeleteThread. Every storage backend re-implements that contract, and the
// subtle parts (list order, the Before cut, metadata filters, duplicate
// writes, subgraph namespaces) are where they drift apart. This package pins
// each of those details down once:
//
//   - the data model ([Config], [Checkpoint], [Metadata], [Tuple], ...) and
//     the [Saver] interface with its optional capabilities ([ThreadCopier],
//     [RunDeleter], [Pruner], [VersionGenerator]);
//   - the sentinel errors every adapter returns ([ErrNotFound],
//     [ErrInvalidConfig], [ErrInvalidArgument], [ErrUnsupportedValue]);
//   - the shared mechanics adapters should call rather than re-derive:
//     [WriteIndex] for write keys, [NewCheckpointID], [NextVersion] and
//     [CompareVersions], namespace helpers, the plain-value model
//     ([Normalize], which also rejects values that contain themselves or
//     nest deeper than [MaxValueDepth]) with its default [Serde], the
//     metadata filter semantics ([MatchFilter]) and the validation helpers
//     ([ValidatePut], ...), which give every adapter the same answer for
//     the bytes an identifier, task path or version may hold.
//
// The rules themselves are numbered in SPEC.md next to this file; the
// conformance suite in package conformance cites those rule IDs.
package spec
