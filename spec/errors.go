package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// ErrUnavailable reports that the backend could not be reached or the
	// connection to it was lost during the call (SPEC.md FAULT-2). The call
	// either took effect as a whole or not at all; read to find out which.
	// Retrying is safe once the backend is back: every saver method is
	// idempotent. Adapters wrap the driver's own error too, so errors.As
	// still finds a *net.OpError or a driver type.
	ErrUnavailable = errors.New("backend unavailable")
)

// ValidateIdentifier checks one identifier — a thread ID, namespace,
// checkpoint ID, task ID, task path, channel or node name, or a version: it
// must be valid UTF-8 and hold no NUL byte, so that every backend can store
// it byte for byte (PostgreSQL's text type holds neither). what names the
// identifier in the error, which wraps [ErrInvalidConfig]. The empty string
// passes; callers check emptiness where it matters.
func ValidateIdentifier(what, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s %q contains a NUL byte: %w", what, s, ErrInvalidConfig)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8: %w", what, s, ErrInvalidConfig)
	}
	return nil
}

func validateConfig(op string, cfg Config) error {
	for _, f := range [...]struct{ what, s string }{
		{"thread ID", cfg.ThreadID}, {"namespace", cfg.Namespace}, {"checkpoint ID", cfg.CheckpointID},
	} {
		if err := ValidateIdentifier(f.what, f.s); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	return nil
}

// ValidatePut checks every argument of [Saver.Put] but the values and the
// metadata: the thread ID and the checkpoint ID must not be empty, and every
// identifier — thread, namespace, parent and checkpoint IDs, every channel
// name, node name and version in cp and newVersions, and every channel of
// cp.UpdatedChannels — must pass [ValidateIdentifier]. cp.TS is free.
// Errors wrap [ErrInvalidConfig].
func ValidatePut(cfg Config, cp Checkpoint, newVersions Versions) error {
	if cfg.ThreadID == "" {
		return fmt.Errorf("put: empty thread ID: %w", ErrInvalidConfig)
	}
	if cp.ID == "" {
		return fmt.Errorf("put: checkpoint has an empty ID: %w", ErrInvalidConfig)
	}
	if err := validateConfig("put", cfg); err != nil {
		return err
	}
	if err := ValidateIdentifier("checkpoint ID", cp.ID); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	if err := validateVersions("put", "", cp.ChannelVersions); err != nil {
		return err
	}
	if err := validateVersions("put", "new ", newVersions); err != nil {
		return err
	}
	for ch := range cp.ChannelValues {
		if err := ValidateIdentifier("channel", ch); err != nil {
			return fmt.Errorf("put: %w", err)
		}
	}
	for node, vs := range cp.VersionsSeen {
		if err := ValidateIdentifier("node", node); err != nil {
			return fmt.Errorf("put: versions seen: %w", err)
		}
		if err := validateVersions("put", "seen ", vs); err != nil {
			return err
		}
	}
	for _, ch := range cp.UpdatedChannels {
		if err := ValidateIdentifier("updated channel", ch); err != nil {
			return fmt.Errorf("put: %w", err)
		}
	}
	return nil
}

// validateVersions checks the channel names and versions of vs.
func validateVersions(op, what string, vs Versions) error {
	for ch, v := range vs {
		if err := ValidateIdentifier(what+"channel", ch); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if err := ValidateIdentifier(what+"version of channel "+strconv.Quote(ch), string(v)); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	return nil
}

// ValidatePutWrites checks every argument of [Saver.PutWrites] but the
// values: the thread ID and the checkpoint ID must not be empty, and the
// config's identifiers, the task ID, the task path and every channel name
// must pass [ValidateIdentifier]. Errors wrap [ErrInvalidConfig].
func ValidatePutWrites(cfg Config, writes []Write, taskID, taskPath string) error {
	if cfg.ThreadID == "" {
		return fmt.Errorf("put writes: empty thread ID: %w", ErrInvalidConfig)
	}
	if cfg.CheckpointID == "" {
		return fmt.Errorf("put writes: empty checkpoint ID: %w", ErrInvalidConfig)
	}
	if err := validateConfig("put writes", cfg); err != nil {
		return err
	}
	if err := ValidateIdentifier("task ID", taskID); err != nil {
		return fmt.Errorf("put writes: %w", err)
	}
	if err := ValidateIdentifier("task path", taskPath); err != nil {
		return fmt.Errorf("put writes: %w", err)
	}
	for _, w := range writes {
		if err := ValidateIdentifier("channel", w.Channel); err != nil {
			return fmt.Errorf("put writes: %w", err)
		}
	}
	return nil
}

// ValidateGetTuple checks the argument of [Saver.GetTuple]: the thread ID must not
// be empty and every identifier must pass [ValidateIdentifier]. Errors wrap
// [ErrInvalidConfig].
func ValidateGetTuple(cfg Config) error {
	if cfg.ThreadID == "" {
		return fmt.Errorf("get tuple: empty thread ID: %w", ErrInvalidConfig)
	}
	return validateConfig("get tuple", cfg)
}

// ValidateList checks [ListOptions]: the limit must not be negative, the
// filter must hold plain values, and the thread ID, namespace, checkpoint ID
// and Before must pass [ValidateIdentifier]. Errors wrap
// [ErrInvalidArgument], [ErrUnsupportedValue] or [ErrInvalidConfig].
func ValidateList(opts ListOptions) error {
	if opts.Limit < 0 {
		return fmt.Errorf("list: negative limit %d: %w", opts.Limit, ErrInvalidArgument)
	}
	if _, err := NormalizeFilter(opts.Filter); err != nil {
		return fmt.Errorf("list: filter: %w", err)
	}
	if err := validateConfig("list", Config{ThreadID: opts.ThreadID, Namespace: opts.Namespace, CheckpointID: opts.CheckpointID}); err != nil {
		return err
	}
	if err := ValidateIdentifier("before", opts.Before); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	return nil
}

// ValidateThreadID checks a thread ID passed to DeleteThread, CopyThread or
// Prune: it must not be empty and must pass [ValidateIdentifier]. Errors wrap
// [ErrInvalidConfig].
func ValidateThreadID(op, threadID string) error {
	if threadID == "" {
		return fmt.Errorf("%s: empty thread ID: %w", op, ErrInvalidConfig)
	}
	if err := ValidateIdentifier("thread ID", threadID); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// Validate reports an unknown strategy with an error wrapping
// [ErrInvalidArgument].
func (s PruneStrategy) Validate() error {
	if s != KeepLatest && s != DeleteAll {
		return fmt.Errorf("prune: unknown strategy %d: %w", int(s), ErrInvalidArgument)
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }
