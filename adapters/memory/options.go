package memory

import (
	"fmt"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Option configures a [Saver]; pass options to [New].
type Option func(*options)

// options is what the Options of [New] set.
type options struct {
	serde spec.Serde
}

// WithSerde sets the serde that encodes channel values and pending-write
// values (default [spec.DefaultSerde]). With any serde but the default
// [spec.MsgpackSerde], the saver keeps what the serde encodes and decodes
// it on every read, so no caller shares a mutable value with the saver;
// with the default, it keeps the normalised values themselves, which the
// serde would give back, and copies their lists, maps and byte strings on
// every read instead. Metadata is
// kept normalised ([spec.NormalizeMetadata]), not encoded, as every
// adapter keeps it in its backend's own form. A nil serde is invalid.
func WithSerde(serde spec.Serde) Option {
	return func(o *options) { o.serde = serde }
}

// newOptions applies opts over the defaults and validates the result.
func newOptions(opts []Option) (options, error) {
	o := options{serde: spec.DefaultSerde()}
	for _, opt := range opts {
		if opt == nil {
			return o, fmt.Errorf("memory: nil Option: %w", spec.ErrInvalidArgument)
		}
		opt(&o)
	}
	if o.serde == nil {
		return o, fmt.Errorf("memory: WithSerde(nil): %w", spec.ErrInvalidArgument)
	}
	return o, nil
}
