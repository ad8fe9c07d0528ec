package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/adapters/sqlite"
	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/spec"
)

// backend opens savers over fresh storage for bridge.Serve, and releases
// at exit whatever storage the session did not release itself.
type backend struct {
	open  bridge.Opener
	close func(ctx context.Context) error
}

// storages remembers the storage of every open saver by name, with the
// function that releases it.
type storages struct {
	mu   sync.Mutex
	live map[string]func(context.Context) error
}

func (s *storages) add(name string, release func(context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		s.live = map[string]func(context.Context) error{}
	}
	s.live[name] = release
}

// release releases the storage name once; later calls do nothing.
func (s *storages) release(ctx context.Context, name string) error {
	s.mu.Lock()
	f := s.live[name]
	delete(s.live, name)
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(ctx)
}

// releaseAll releases every storage still live.
func (s *storages) releaseAll(ctx context.Context) error {
	s.mu.Lock()
	var names []string
	for name := range s.live {
		names = append(names, name)
	}
	s.mu.Unlock()
	var errs []error
	for _, name := range names {
		errs = append(errs, s.release(ctx, name))
	}
	return errors.Join(errs...)
}

// randomName returns prefix followed by 16 random hex digits, a name no
// other session picks.
func randomName(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func newMemory() *backend {
	return &backend{
		open:  func(context.Context) (spec.Saver, error) { return memory.New(), nil },
		close: func(context.Context) error { return nil },
	}
}

// sqliteSaver is a SQLite saver whose Close also removes its database file.
type sqliteSaver struct {
	*sqlite.Saver
	release func() error
}

// Close closes the database and removes its files.
func (s *sqliteSaver) Close() error { return s.release() }

func newSQLite(parent string) (*backend, error) {
	dir, err := os.MkdirTemp(parent, "checkpointkit-saver-")
	if err != nil {
		return nil, err
	}
	var live storages
	var seq atomic.Int64
	open := func(ctx context.Context) (spec.Saver, error) {
		name := fmt.Sprintf("saver-%d.db", seq.Add(1))
		path := filepath.Join(dir, name)
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		live.add(name, func(context.Context) error {
			err := s.Close()
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				if rerr := os.Remove(path + suffix); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
					err = errors.Join(err, rerr)
				}
			}
			return err
		})
		return &sqliteSaver{Saver: s, release: func() error { return live.release(context.Background(), name) }}, nil
	}
	return &backend{
		open: open,
		close: func(ctx context.Context) error {
			return errors.Join(live.releaseAll(ctx), os.RemoveAll(dir))
		},
	}, nil
}
