package spec

import (
	"context"
	"iter"
)

// Saver stores checkpoints and pending writes. Implementations must be safe
// for concurrent use and must honour context cancellation.
type Saver interface {
	// Put stores cp under (cfg.ThreadID, cfg.Namespace, cp.ID) with its
	// metadata, storing the value of every channel named in newVersions.
	// A non-empty cfg.CheckpointID is the parent's ID. Put returns the
	// normalised config of the stored checkpoint.
	Put(ctx context.Context, cfg Config, cp Checkpoint, md Metadata, newVersions Versions) (Config, error)
	// PutWrites stores the writes of task taskID against the checkpoint
	// named by cfg. Regular writes are first-wins, special writes
	// (see [WriteIndex]) last-wins.
	PutWrites(ctx context.Context, cfg Config, writes []Write, taskID, taskPath string) error
	// GetTuple returns the checkpoint named by cfg, or the latest of its
	// thread and namespace when cfg.CheckpointID is empty. It returns
	// [ErrNotFound] when there is none.
	GetTuple(ctx context.Context, cfg Config) (*Tuple, error)
	// List streams the checkpoints selected by opts, newest (greatest ID)
	// first. Stopping the iteration early releases every resource.
	List(ctx context.Context, opts ListOptions) iter.Seq2[*Tuple, error]
	// DeleteThread removes every checkpoint, write and value of a thread in
	// every namespace. A missing thread is not an error.
	DeleteThread(ctx context.Context, threadID string) error
}

// ThreadCopier is implemented by savers that can copy a whole thread.
type ThreadCopier interface {
	// CopyThread copies every checkpoint, write and value of src, in every
	// namespace, to dst under the same IDs. The contract covers a dst with
	// nothing stored; what happens to state dst already holds is up to the
	// saver (COPY-1).
	CopyThread(ctx context.Context, src, dst string) error
}

// RunDeleter is implemented by savers that can delete the checkpoints of
// runs.
type RunDeleter interface {
	// DeleteForRuns removes every checkpoint, with its writes, whose metadata
	// "run_id" is one of runIDs.
	DeleteForRuns(ctx context.Context, runIDs []string) error
}

// Pruner is implemented by savers that can prune thread history.
type Pruner interface {
	// Prune applies strategy to each listed thread.
	Prune(ctx context.Context, threadIDs []string, strategy PruneStrategy) error
}

// VersionGenerator is implemented by savers that mint their own channel
// versions. Engines call NextVersion instead of the package-level
// [NextVersion] when the saver implements it.
type VersionGenerator interface {
	// NextVersion returns a version strictly greater than current.
	NextVersion(current Version) Version
}

// PruneStrategy selects what [Pruner.Prune] keeps.
type PruneStrategy int

const (
	// KeepLatest keeps the latest checkpoint of every namespace of a thread,
	// with its pending writes and the values it references.
	KeepLatest PruneStrategy = iota
	// DeleteAll removes the thread entirely.
	DeleteAll
)

// String returns the strategy's name.
func (s PruneStrategy) String() string {
	switch s {
	case KeepLatest:
		return "KeepLatest"
	case DeleteAll:
		return "DeleteAll"
	}
	return "PruneStrategy(" + itoa(int(s)) + ")"
}
