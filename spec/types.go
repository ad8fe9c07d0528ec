package spec

// Config addresses a checkpoint: a thread, a namespace within it ("" is the
// root graph) and a checkpoint ID ("" means "latest" for reads and "no
// parent" for Put). All three are opaque strings compared byte-wise.
type Config struct {
	ThreadID     string
	Namespace    string
	CheckpointID string
}

// Version is a channel version. Versions are ordered by the integer before
// their first '.'; see [CompareVersions] and [NextVersion].
type Version string

// Versions maps channel names to versions.
type Versions map[string]Version

// Metadata is the metadata stored with a checkpoint: the engine writes
// "source", "step", "parents" and optionally "run_id"; callers may add any
// key. Values follow the plain-value model of [Normalize].
type Metadata map[string]any

// Checkpoint is a snapshot of a graph's channels after a superstep.
type Checkpoint struct {
	// V is the checkpoint format version (4 for what current engines write).
	V int
	// ID identifies the checkpoint within its thread and namespace. IDs are
	// ordered byte-wise; the greatest ID is the latest checkpoint.
	ID string
	// TS is the RFC 3339 UTC time the checkpoint was created.
	TS string
	// ChannelValues holds the value of every channel that has one. A channel
	// with a version but no entry here has no value (it was cleared).
	ChannelValues map[string]any
	// ChannelVersions is the current version of every versioned channel.
	ChannelVersions Versions
	// VersionsSeen maps a node name to the versions of the channels it last
	// consumed.
	VersionsSeen map[string]Versions
	// UpdatedChannels lists the channels updated in the step that produced
	// this checkpoint; nil means unknown.
	UpdatedChannels []string
}

// Write is one channel write of a task, as passed to [Saver.PutWrites].
type Write struct {
	Channel string
	Value   any
}

// PendingWrite is a write stored against a checkpoint and not yet applied to
// a later one.
type PendingWrite struct {
	TaskID  string
	Channel string
	Value   any
}

// Tuple is a stored checkpoint with everything a reader needs to resume from
// it.
type Tuple struct {
	// Config is always normalised: thread, namespace and checkpoint ID.
	Config     Config
	Checkpoint Checkpoint
	Metadata   Metadata
	// Parent is the parent checkpoint's config (same thread and namespace),
	// or nil when the checkpoint was stored without a parent.
	Parent *Config
	// PendingWrites is never nil; it is ordered by task ID, then write index.
	PendingWrites []PendingWrite
}

// ListOptions selects and orders the checkpoints returned by [Saver.List].
type ListOptions struct {
	// ThreadID restricts to one thread; "" means every thread.
	ThreadID string
	// Namespace is the exact namespace to list; "" is the root graph.
	Namespace string
	// AllNamespaces ignores Namespace and lists every namespace.
	AllNamespaces bool
	// CheckpointID, when not empty, restricts to that checkpoint ID.
	CheckpointID string
	// Filter keeps only checkpoints whose metadata matches every key; see
	// [MatchFilter].
	Filter Metadata
	// Before, when not empty, keeps only IDs strictly less than it
	// (byte-wise), whatever thread or namespace they belong to.
	Before string
	// Limit caps the number of results; 0 means no limit and a negative
	// value is [ErrInvalidArgument].
	Limit int
}
