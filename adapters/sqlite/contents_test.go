package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mattn/go-sqlite3"

	"github.com/checkpointkit/checkpointkit/spec"
)

// TestContentsPlan checks the contents statement: driven by its VALUES
// lists, a key search of blobs per value key and of the writes key per
// checkpoint; no scan of either table, no temporary B-tree.
func TestContentsPlan(t *testing.T) {
	s := openMemory(t)
	for _, n := range []int{0, 1, 10, maxContentKeys} {
		for _, tuples := range []int{1, 10, maxContentTuples} {
			args := []any{"t", ""}
			for i := range n {
				args = append(args, "c", fmt.Sprint(i))
			}
			for i := range tuples {
				args = append(args, fmt.Sprint(i))
			}
			plan := queryPlan(t, s, contentsQuery(n, tuples), args...)
			if n > 0 && !strings.Contains(plan, "SEARCH b USING INDEX sqlite_autoindex_blobs_1 (thread_id=? AND checkpoint_ns=? AND channel=? AND version=?)") {
				t.Errorf("contents of %d keys, %d tuples: values are not a key search each:\n%s", n, tuples, plan)
			}
			if !strings.Contains(plan, "SEARCH w USING INDEX sqlite_autoindex_writes_1 (thread_id=? AND checkpoint_ns=? AND checkpoint_id=?)") ||
				strings.Contains(plan, "SCAN b") || strings.Contains(plan, "SCAN w") || strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("contents of %d keys, %d tuples: not key searches:\n%s", n, tuples, plan)
			}
		}
	}
}

// TestContentsRoundTrip reads, through the contents statement, values and
// writes whose bytes hold the record syntax itself (',', 'v', 'w', digits,
// NUL), empty and nil values, special writes (negative idx), tasks put out
// of key order, and a page that a filter thins out; each tuple must read
// exactly as the statements the contents statement replaces read it.
func TestContentsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openMemory(t)
	tricky := []any{"", "w1,2,3,", "\x00v,", []byte("7,7,"), int64(-5), nil, []any{"a,b", int64(1)}, map[string]any{"w": "1,"}}
	for i := range 6 {
		id := fmt.Sprintf("%02d", i)
		versions := spec.Versions{"v": spec.Version(fmt.Sprint(i + 1)), "same": "1"}
		values := map[string]any{"v": tricky[i%len(tricky)], "same": "1,2;"}
		cp := spec.Checkpoint{ID: id, ChannelValues: values, ChannelVersions: versions}
		mustPut(t, s, spec.Config{ThreadID: "t"}, cp, spec.Metadata{"keep": i%2 == 0}, versions)
		// Tasks put in descending order: the key order is ascending.
		for task := 3; task > 0; task-- {
			writes := []spec.Write{{Channel: "w,1", Value: tricky[(i+task)%len(tricky)]}, {Channel: "b", Value: int64(task)}}
			if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: id}, writes, fmt.Sprintf("task%d,", task), ""); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: id}, []spec.Write{{Channel: spec.ErrorChannel, Value: "boom"}}, "task0", ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, opts := range []spec.ListOptions{
		{ThreadID: "t"},
		{ThreadID: "t", Filter: spec.Metadata{"keep": true}},
	} {
		n := 0
		for tup, err := range s.List(ctx, opts) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			id := tup.Config.CheckpointID
			want, err := s.getUncached(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got, w := fmt.Sprintf("%#v", tup.Checkpoint.ChannelValues), fmt.Sprintf("%#v", want.Checkpoint.ChannelValues); got != w {
				t.Errorf("%s: values %s, want %s", id, got, w)
			}
			if got, w := fmt.Sprintf("%#v", tup.PendingWrites), fmt.Sprintf("%#v", want.PendingWrites); got != w {
				t.Errorf("%s: writes %s, want %s", id, got, w)
			}
			if len(tup.PendingWrites) != 7 || tup.PendingWrites[0].TaskID != "task0" || tup.PendingWrites[1].TaskID != "task1," ||
				tup.PendingWrites[1].Channel != "w,1" || tup.PendingWrites[2].Channel != "b" {
				t.Errorf("%s: writes out of order: %#v", id, tup.PendingWrites)
			}
		}
		if want := map[bool]int{false: 6, true: 3}[opts.Filter != nil]; n != want {
			t.Errorf("%v: listed %d tuples, want %d", opts.Filter, n, want)
		}
	}
}

// getUncached reads checkpoint id of thread "t" with the statements the
// contents statement replaces (a values join, the writes range).
func (s *Saver) getUncached(ctx context.Context, id string) (*spec.Tuple, error) {
	var tup *spec.Tuple
	err := s.read(ctx, "test", "t", false, func(q rowQuerier) error {
		row, release, err := q.queryFirst(ctx, getByIDSQL, []any{"t", "", id}, 5)
		if err != nil || row == nil {
			return fmt.Errorf("checkpoint %s: %v", id, err)
		}
		defer release()
		scope := &rowKey{thread: "t"}
		t, _, err := tupleFromRow(row[:4], scope, nil)
		if err != nil {
			return err
		}
		l := pageLoads.Get().(*pageLoad)
		defer l.release()
		page := []*spec.Tuple{t}
		vs := l.values(page)
		if err := s.loadValueJoins(ctx, q, vs, l); err != nil {
			return err
		}
		if err := vs.assign(s.serde, page); err != nil {
			return err
		}
		ws := l.writes(page)
		ws.all = make([]spec.PendingWrite, 0, 2)
		if err := s.loadWrites(ctx, q, ws, scope, l); err != nil {
			return err
		}
		ws.finish()
		tup = t
		return nil
	})
	return tup, err
}

// TestContentsWritesOutOfOrder checks that writes coming out of the
// statement in any order reach each tuple in task ID and idx order, and
// that a malformed column is an error.
func TestContentsWritesOutOfOrder(t *testing.T) {
	page := []*spec.Tuple{
		{Config: spec.Config{ThreadID: "t", CheckpointID: "b"}, PendingWrites: []spec.PendingWrite{}},
		{Config: spec.Config{ThreadID: "t", CheckpointID: "a"}, PendingWrites: []spec.PendingWrite{}},
	}
	// \xc0 is MessagePack nil.
	text := "w1,1,1,1,1,xy\xc0" + "w1,-1,1,1,1,xz\xc0" + "w0,0,1,1,1,yc\xc0" + "w0,0,1,1,1,xc\xc0"
	l := new(pageLoad)
	c := contentsReader{text: text, data: []byte(text)}
	if err := c.read(spec.DefaultSerde(), &l.vs, page, l); err != nil {
		t.Fatal(err)
	}
	c.handOut(page, l)
	got := fmt.Sprint(page[0].PendingWrites, page[1].PendingWrites)
	if want := "[{x c <nil>} {y c <nil>}] [{x z <nil>} {x y <nil>}]"; got != want {
		t.Errorf("writes %s, want %s", got, want)
	}
	for _, bad := range []string{"x", "v0,5,x", "v1,1,x", "w2,0,1,1,1,xy\xc0", "w0,0,1,1,9,xy\xc0", "w0,0,1,1,x", "v0,", "v-,1,x", "v0,1234567890123456789,x"} {
		c := contentsReader{text: bad, data: []byte(bad)}
		l := new(pageLoad)
		l.vs.keys = []blobKey{{}}
		l.vs.vals = make([]storedValue, 1)
		if err := c.read(spec.DefaultSerde(), &l.vs, page, l); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestContentsTooLongForOneString checks that a page whose values and
// writes together are longer than SQLite lets one string be is read
// apart, as the contents statement would have read it. SQLite's length
// limit is lowered to a few values' worth on the saver's one connection.
func TestContentsTooLongForOneString(t *testing.T) {
	ctx := context.Background()
	s := openMemory(t)
	s.db.SetMaxOpenConns(1)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Raw(func(dc any) error {
		dc.(*sqlite3.SQLiteConn).SetLimit(sqlite3.SQLITE_LIMIT_LENGTH, 10_000)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	big := strings.Repeat("x", 3_000)
	for i := range 4 {
		id := fmt.Sprintf("%02d", i)
		versions := spec.Versions{"v": spec.Version(fmt.Sprint(i + 1))}
		cp := spec.Checkpoint{ID: id, ChannelValues: map[string]any{"v": big + id}, ChannelVersions: versions}
		mustPut(t, s, spec.Config{ThreadID: "t"}, cp, nil, versions)
		if err := s.PutWrites(ctx, spec.Config{ThreadID: "t", CheckpointID: id}, []spec.Write{{Channel: "w", Value: id + big}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for tp, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		id := tp.Config.CheckpointID
		if got := tp.Checkpoint.ChannelValues["v"]; got != big+id {
			t.Errorf("checkpoint %s: value of %d bytes, want the %d put", id, len(fmt.Sprint(got)), len(big+id))
		}
		if len(tp.PendingWrites) != 1 || tp.PendingWrites[0].Value != id+big {
			t.Errorf("checkpoint %s: writes %d, want the one put", id, len(tp.PendingWrites))
		}
		n++
	}
	if n != 4 {
		t.Fatalf("List read %d checkpoints, want 4", n)
	}
}
