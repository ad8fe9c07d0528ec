package main

import (
	"io"
	"log/slog"
	"net/url"
	"testing"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.listenAddr != "127.0.0.1:0" || o.dataDir != "" || o.logLevel != slog.LevelError || o.sync != "normal" {
		t.Errorf("defaults: %+v", o)
	}
	o, err = parseFlags([]string{"-listen-addr", "127.0.0.1:27031", "-data-dir", "d", "-log-level", "warn", "-synchronous", "full"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.listenAddr != "127.0.0.1:27031" || o.dataDir != "d" || o.logLevel != slog.LevelWarn || o.sync != "full" {
		t.Errorf("parsed: %+v", o)
	}
	for _, bad := range [][]string{
		{"-log-level", "loud"}, {"-synchronous", "sometimes"}, {"-listen-addr", ""}, {"extra"}, {"-nope"},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSQLiteURL(t *testing.T) {
	got, err := sqliteURL("/tmp/a dir/with?odd#chars", "normal")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "file" || u.Path != "/tmp/a dir/with?odd#chars/" || u.Query().Get("_pragma") != "synchronous(normal)" {
		t.Errorf("sqliteURL = %q (path %q, query %q)", got, u.Path, u.RawQuery)
	}
}
