// Command checkpointkit-saver serves one of checkpointkit's Go adapters over
// the saver bridge (bridge/PROTOCOL.md) on its standard input and output,
// so that an engine or a test written in another language can use it, and
// so that the Go conformance suite can judge the bridge itself.
//
// Usage:
//
//	checkpointkit-saver -adapter memory|sqlite|postgres|mongo [flags]
//
// Every open request gets a saver over fresh, isolated storage, released on
// close and, for whatever is left, when the session ends (standard input
// closed, SIGINT or SIGTERM):
//
//   - memory: a new in-memory saver;
//   - sqlite: a new database file in a temporary directory (-sqlite-dir to
//     choose the parent), removed with the directory at exit;
//   - postgres: a new randomly named schema in the database of
//     -postgres-dsn (default $CHECKPOINTKIT_POSTGRES_DSN), dropped on close;
//   - mongo: a new randomly named database on the server of -mongo-uri
//     (default $CHECKPOINTKIT_MONGO_URI), dropped on close.
//
// Diagnostics go to standard error; standard output carries only the
// protocol. Unless GOMAXPROCS is set, the server uses half of the CPUs the
// Go runtime would (at least one): it shares the machine with its client,
// and on a small machine a second busy scheduler thread costs the client
// more than it gains the server (on two cores a call's round trip drops by
// about a fifth). The exit status is 0 when the session ended by standard input
// closing, 1 when a signal ended it and 2 for bad flags or an unreachable
// backend.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/checkpointkit/checkpointkit/bridge"
)

// cleanupTimeout bounds the release of leftover storage at exit.
const cleanupTimeout = 30 * time.Second

func main() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)/2))
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("checkpointkit-saver", flag.ContinueOnError)
	var cfg config
	fs.StringVar(&cfg.adapter, "adapter", "", "the adapter to serve: memory, sqlite, postgres or mongo")
	fs.StringVar(&cfg.postgresDSN, "postgres-dsn", os.Getenv("CHECKPOINTKIT_POSTGRES_DSN"), "PostgreSQL connection string (default $CHECKPOINTKIT_POSTGRES_DSN)")
	fs.StringVar(&cfg.mongoURI, "mongo-uri", os.Getenv("CHECKPOINTKIT_MONGO_URI"), "MongoDB connection string (default $CHECKPOINTKIT_MONGO_URI)")
	fs.StringVar(&cfg.sqliteDir, "sqlite-dir", "", "parent of the temporary directory for SQLite files (default the system's temporary directory)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := newBackend(ctx, cfg)
	if err != nil {
		log.Error("checkpointkit-saver: " + err.Error())
		return 2
	}
	err = bridge.Serve(ctx, os.Stdin, os.Stdout, b.open,
		bridge.WithName("checkpointkit-saver/"+cfg.adapter), bridge.WithLogger(log))

	cctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if cerr := b.close(cctx); cerr != nil {
		log.Error("checkpointkit-saver: releasing storage at exit", "err", cerr)
	}
	switch {
	case errors.Is(err, context.Canceled):
		log.Info("checkpointkit-saver: stopped by a signal")
		return 1
	case err != nil:
		log.Error("checkpointkit-saver: " + err.Error())
		return 1
	}
	return 0
}

// config is what the flags say.
type config struct {
	adapter     string
	postgresDSN string
	mongoURI    string
	sqliteDir   string
}

func newBackend(ctx context.Context, cfg config) (*backend, error) {
	switch cfg.adapter {
	case "memory":
		return newMemory(), nil
	case "sqlite":
		return newSQLite(cfg.sqliteDir)
	case "postgres":
		if cfg.postgresDSN == "" {
			return nil, errors.New("-adapter postgres needs -postgres-dsn or CHECKPOINTKIT_POSTGRES_DSN")
		}
		return newPostgres(ctx, cfg.postgresDSN)
	case "mongo":
		if cfg.mongoURI == "" {
			return nil, errors.New("-adapter mongo needs -mongo-uri or CHECKPOINTKIT_MONGO_URI")
		}
		return newMongo(ctx, cfg.mongoURI)
	case "":
		return nil, errors.New("-adapter is required: memory, sqlite, postgres or mongo")
	}
	return nil, fmt.Errorf("unknown adapter %q: want memory, sqlite, postgres or mongo", cfg.adapter)
}
