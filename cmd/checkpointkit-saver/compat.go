package main

import (
	"context"
	"errors"
)

// closeAdapter closes an adapter's saver whichever Close it has.
// TODO(bridge): drop once every adapter has Close() error.
func closeAdapter(ctx context.Context, s any) error {
	switch c := s.(type) {
	case interface{ Close() error }:
		return c.Close()
	case interface{ Close() }:
		c.Close()
		return nil
	case interface{ Close(context.Context) error }:
		return c.Close(ctx)
	}
	return nil
}

var errorsJoin = errors.Join
