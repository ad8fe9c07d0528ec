package spec

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Adapters wrap them (fmt.Errorf("...: %w", ErrX)) so that
// callers can test with errors.Is.
var (
	// ErrNotFound reports that the requested checkpoint does not exist.
	ErrNotFound = errors.New("checkpoint not found")
	// ErrInvalidConfig reports a Config that cannot address a checkpoint,
	// such as an empty thread ID or checkpoint ID where one is required.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrInvalidArgument reports an invalid argument other than a Config,
	// such as a negative list limit or an unknown prune strategy.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrUnsupportedValue reports a value outside the plain-value model of
	// Normalize.
	ErrUnsupportedValue = errors.New("unsupported value")
)

// ValidatePut checks the arguments of [Saver.Put]: the thread ID and the
// checkpoint ID must not be empty. Errors wrap [ErrInvalidConfig].
func ValidatePut(cfg Config, cp Checkpoint) error {
	if cfg.ThreadID == "" {
		return fmt.Errorf("put: empty thread ID: %w", ErrInvalidConfig)
	}
	if cp.ID == "" {
		return fmt.Errorf("put: checkpoint has an empty ID: %w", ErrInvalidConfig)
	}
	return nil
}

// ValidatePutWrites checks the arguments of [Saver.PutWrites]: the thread ID
// and the checkpoint ID must not be empty. Errors wrap [ErrInvalidConfig].
func ValidatePutWrites(cfg Config) error {
	if cfg.ThreadID == "" {
		return fmt.Errorf("put writes: empty thread ID: %w", ErrInvalidConfig)
	}
	if cfg.CheckpointID == "" {
		return fmt.Errorf("put writes: empty checkpoint ID: %w", ErrInvalidConfig)
	}
	return nil
}

// ValidateGet checks the argument of [Saver.GetTuple]: the thread ID must not
// be empty. Errors wrap [ErrInvalidConfig].
func ValidateGet(cfg Config) error {
	if cfg.ThreadID == "" {
		return fmt.Errorf("get tuple: empty thread ID: %w", ErrInvalidConfig)
	}
	return nil
}

// ValidateList checks [ListOptions]: the limit must not be negative and the
// filter must hold plain values. Errors wrap [ErrInvalidArgument] or
// [ErrUnsupportedValue].
func ValidateList(opts ListOptions) error {
	if opts.Limit < 0 {
		return fmt.Errorf("list: negative limit %d: %w", opts.Limit, ErrInvalidArgument)
	}
	if _, err := NormalizeMetadata(opts.Filter); err != nil {
		return fmt.Errorf("list: filter: %w", err)
	}
	return nil
}

// ValidateThreadID checks a thread ID passed to DeleteThread, CopyThread or
// Prune. Errors wrap [ErrInvalidConfig].
func ValidateThreadID(op, threadID string) error {
	if threadID == "" {
		return fmt.Errorf("%s: empty thread ID: %w", op, ErrInvalidConfig)
	}
	return nil
}

// ValidatePruneStrategy checks a [PruneStrategy]. Errors wrap
// [ErrInvalidArgument].
func ValidatePruneStrategy(s PruneStrategy) error {
	if s != KeepLatest && s != DeleteAll {
		return fmt.Errorf("prune: unknown strategy %d: %w", int(s), ErrInvalidArgument)
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }
