package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestOpenMalformedDSN: a query string or parameter value that does not
// parse is an error wrapping spec.ErrInvalidArgument, never a silent drop of
// every parameter; a well-formed one reaches the connection.
func TestOpenMalformedDSN(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, q := range []string{
		"_busy_timeout=1234&bad=%zz",  // bad escape: url.ParseQuery fails
		"_busy_timeout=1234;_fk=1",    // ';' is not a separator
		"_busy_timeout=soon",          // go-sqlite3 rejects the value
		"_journal_mode=sideways",      // ... and this one
		"_foreign_keys=maybe&cache=x", //
	} {
		target := "file:" + filepath.Join(dir, "bad.db") + "?" + q
		s, err := Open(ctx, target)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", q)
			continue
		}
		if !errors.Is(err, spec.ErrInvalidArgument) {
			t.Errorf("Open(%q) error = %v, want ErrInvalidArgument", q, err)
		}
	}
	s, err := Open(ctx, "file:"+filepath.Join(dir, "good.db")+"?_busy_timeout=1234&_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for pragma, want := range map[string]int{"busy_timeout": 1234, "foreign_keys": 1} {
		var got int
		if err := s.db.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %d, want %d: the DSN parameter was dropped", pragma, got, want)
		}
	}
}

// execCounter counts the statements run through a querier.
type execCounter struct {
	querier
	n int
}

func (c *execCounter) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	c.n++
	return c.querier.ExecContext(ctx, query, args...)
}

func (c *execCounter) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.n++
	return c.querier.QueryContext(ctx, query, args...)
}

// TestKeepLatestIsSetBased: pruning a thread to its latest checkpoints runs
// a fixed number of statements inside the write lock, whatever the number
// of values it removes, and keeps exactly the values the survivors read
// (odd bytes in namespaces, channels and versions included).
func TestKeepLatestIsSetBased(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{3, 300} {
		s := openMemory(t)
		for _, ns := range []string{"", "ns|ü'%,"} {
			for i := range n {
				id := fmt.Sprintf("%04d", i)
				vs := spec.Versions{"a": spec.Version(id), "b,c": spec.Version("v," + id), "keep": "1"}
				cp := spec.Checkpoint{ID: id, ChannelVersions: vs,
					ChannelValues: map[string]any{"a": int64(i), "b,c": "x", "keep": "k"}}
				nv := spec.Versions{"a": vs["a"], "b,c": vs["b,c"]}
				if i == 0 {
					nv["keep"] = "1"
				}
				mustPut(t, s, spec.Config{ThreadID: "t", Namespace: ns}, cp, nil, nv)
			}
		}
		mustPut(t, s, spec.Config{ThreadID: "other"}, spec.Checkpoint{ID: "1", ChannelVersions: spec.Versions{"a": "1"},
			ChannelValues: map[string]any{"a": "o"}}, nil, spec.Versions{"a": "1"})

		c := &execCounter{}
		err := s.write(ctx, "prune", "t", func(q querier) error {
			c.querier = q
			return s.keepLatest(ctx, c, "t")
		})
		if err != nil {
			t.Fatal(err)
		}
		// Five: the latest checkpoints naming delta channels (none here),
		// checkpoints, writes, the survivors' value keys, values.
		if c.n > 5 {
			t.Errorf("n=%d: keepLatest ran %d statements, want at most 5 whatever the history", n, c.n)
		}
		var blobs int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM blobs WHERE thread_id = 't'`).Scan(&blobs); err != nil {
			t.Fatal(err)
		}
		if blobs != 6 {
			t.Errorf("n=%d: %d values left, want 6 (3 channels x 2 namespaces)", n, blobs)
		}
		for _, ns := range []string{"", "ns|ü'%,"} {
			tup := mustGet(t, s, spec.Config{ThreadID: "t", Namespace: ns})
			want := map[string]any{"a": int64(n - 1), "b,c": "x", "keep": "k"}
			if fmt.Sprint(tup.Checkpoint.ChannelValues) != fmt.Sprint(want) {
				t.Errorf("n=%d ns %q: values %v, want %v", n, ns, tup.Checkpoint.ChannelValues, want)
			}
		}
		if got := mustGet(t, s, spec.Config{ThreadID: "other"}).Checkpoint.ChannelValues["a"]; got != "o" {
			t.Errorf("other thread lost its value: %v", got)
		}
	}
}
