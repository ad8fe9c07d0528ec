// Command ferretdb runs FerretDB v1 with its SQLite backend as a stand-in
// MongoDB server for checkpointkit's tests and benchmarks.
//
// There is no MongoDB server package for the machines checkpointkit is
// developed and tested on, and nothing may be downloaded outside the package
// registries. FerretDB v1 speaks the MongoDB wire protocol, is written in Go
// and is on the Go module proxy, so it can be built like any other Go
// program. Building FerretDB's own cmd/ferretdb from the module cache panics
// on a missing build/version/version.txt; embedding the
// github.com/FerretDB/FerretDB/ferretdb package from this main package skips
// that check.
//
// This launcher lives in its own Go module so that FerretDB's large
// dependency tree never enters checkpointkit's go.mod.
//
// Usage:
//
//	ferretdb [-listen-addr 127.0.0.1:0] [-data-dir DIR] [-log-level error]
//
// Once the server listens, the launcher prints its MongoDB URI (for example
// mongodb://127.0.0.1:41234/) as a single line on stdout; logs go to
// stderr. SIGINT or SIGTERM stops it cleanly (exit status 0). See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

// options are the parsed command-line flags.
type options struct {
	listenAddr string
	dataDir    string
	logLevel   slog.Level
	sync       string
	pgURL      string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("ferretdb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var level string
	fs.StringVar(&o.listenAddr, "listen-addr", "127.0.0.1:0",
		"TCP address to listen on; port 0 picks a free port")
	fs.StringVar(&o.dataDir, "data-dir", "",
		"directory for the SQLite databases (created if missing); empty means a new temporary directory removed on exit")
	fs.StringVar(&level, "log-level", "error", "log level: debug, info, warn or error")
	fs.StringVar(&o.pgURL, "postgresql-url", "",
		"serve from this PostgreSQL database (FerretDB's PostgreSQL backend) instead of SQLite files; the database must exist")
	fs.StringVar(&o.sync, "synchronous", "normal",
		"SQLite synchronous pragma: off, normal or full (FerretDB's own default is full, one fsync per commit)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if err := o.logLevel.UnmarshalText([]byte(level)); err != nil {
		return o, fmt.Errorf("invalid -log-level %q: %w", level, err)
	}
	switch o.sync {
	case "off", "normal", "full":
	default:
		return o, fmt.Errorf("invalid -synchronous %q: want off, normal or full", o.sync)
	}
	if o.listenAddr == "" {
		return o, errors.New("-listen-addr must not be empty")
	}
	return o, nil
}

// sqliteURL turns a directory into the file: URI FerretDB's SQLite backend
// expects: an absolute path that ends with a slash.
func sqliteURL(dir, sync string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	p := filepath.ToSlash(abs)
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	q := url.Values{"_pragma": {"synchronous(" + sync + ")"}}
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode(), nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}

	dir := o.dataDir
	if dir == "" {
		dir, err = os.MkdirTemp("", "checkpointkit-ferretdb-")
		if err != nil {
			return fmt.Errorf("create data dir: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	su, err := sqliteURL(dir, o.sync)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}

	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	cfg := &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: o.listenAddr},
		Handler:   "sqlite",
		SQLiteURL: su,
		Logger:    logger,
	}
	if o.pgURL != "" {
		cfg.Handler, cfg.SQLiteURL, cfg.PostgreSQLURL = "postgresql", "", o.pgURL
	}
	f, err := ferretdb.New(cfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	// MongoDBURI blocks until the listener is bound, so the URI printed here
	// names the real port even when -listen-addr asked for port 0. If the
	// listener fails to bind, FerretDB exits the process from Run.
	uriCh := make(chan string, 1)
	go func() { uriCh <- f.MongoDBURI() }()
	select {
	case uri := <-uriCh:
		if _, err := fmt.Fprintln(stdout, uri); err != nil {
			stop()
			<-done
			return fmt.Errorf("print URI: %w", err)
		}
	case err := <-done:
		if err == nil {
			err = errors.New("server stopped before listening")
		}
		return err
	}

	return <-done
}
