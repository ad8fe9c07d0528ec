package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// rowQuerier runs a query and hands each row to fn as the driver's values:
// int64, float64, string, []byte or nil. A []byte belongs to the caller
// (go-sqlite3 copies every blob out of SQLite), so it may be kept and
// aliased; cols itself is reused from row to row.
//
// fn may return errStop to end the query early, without an error and
// without stepping the statement to its end (a query known to return one
// row saves that step).
type rowQuerier interface {
	queryRows(ctx context.Context, query string, args []any, ncol int, fn func(cols []driver.Value) error) error
	// queryFirst runs query and returns its first row (nil when there is
	// none) with the statement left active until release is called
	// (release may be called more than once). A statement that is active
	// keeps SQLite's implicit read transaction open, so queries run before
	// release read the same snapshot as the row. The row's slice is the
	// caller's; other queries do not overwrite it.
	queryFirst(ctx context.Context, query string, args []any, ncol int) (row []driver.Value, release func() error, err error)
}

// errStop ends a query early; see rowQuerier.
var errStop = errors.New("stop")

// rawConn runs statements on a go-sqlite3 connection directly, below
// database/sql: no Rows and no conversion of each column into a Scan
// destination. go-sqlite3 keeps the prepared statements per connection
// (_stmt_cache_size), so each query is a cache hit plus one call into C to
// bind and take the first step.
type rawConn struct {
	c    *sqlite3.SQLiteConn
	args []driver.NamedValue
	dest []driver.Value
}

func (r *rawConn) queryRows(ctx context.Context, query string, args []any, ncol int, fn func(cols []driver.Value) error) error {
	rows, err := r.c.QueryContext(ctx, query, r.bind(args))
	if err != nil {
		return err
	}
	if cap(r.dest) < ncol {
		r.dest = make([]driver.Value, ncol)
	}
	dest := r.dest[:ncol]
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			return rows.Close()
		}
		if err == nil {
			err = fn(dest)
		}
		if err == errStop {
			return rows.Close()
		}
		if err != nil {
			rows.Close()
			return err
		}
	}
}

func (r *rawConn) queryFirst(ctx context.Context, query string, args []any, ncol int) ([]driver.Value, func() error, error) {
	rows, err := r.c.QueryContext(ctx, query, r.bind(args))
	if err != nil {
		return nil, nil, err
	}
	row := make([]driver.Value, ncol)
	if err := rows.Next(row); err != nil {
		rows.Close()
		if err == io.EOF {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	closed := false
	return row, func() error {
		if closed {
			return nil
		}
		closed = true
		return rows.Close()
	}, nil
}

// bind converts args as database/sql would, into r's reused slice.
func (r *rawConn) bind(args []any) []driver.NamedValue {
	r.args = r.args[:0]
	for i, a := range args {
		switch a.(type) {
		case string, int64, []byte, nil, float64, bool:
		default:
			// What database/sql would do (an int becomes an int64).
			if v, err := driver.DefaultParameterConverter.ConvertValue(a); err == nil {
				a = v
			} // else go-sqlite3 rejects the argument itself
		}
		r.args = append(r.args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return r.args
}

// rawConns recycles rawConns, with their argument and row buffers.
var rawConns = sync.Pool{New: func() any { return new(rawConn) }}

// release drops what r references (rows hold values the caller now owns)
// and returns it to rawConns.
func (r *rawConn) release() {
	r.c = nil
	clear(r.args[:cap(r.args)])
	r.args = r.args[:0]
	clear(r.dest[:cap(r.dest)])
	rawConns.Put(r)
}

// exec runs a statement without arguments or rows (BEGIN, COMMIT) through
// go-sqlite3's statement cache.
func (r *rawConn) exec(ctx context.Context, query string) error {
	rows, err := r.c.QueryContext(ctx, query, nil)
	if err != nil {
		return err
	}
	return rows.Close()
}

// sqlRows is the rowQuerier of a database/sql handle, for a driver
// connection that is not go-sqlite3's own (a wrapped driver given to New)
// and for tests.
type sqlRows struct{ q querier }

func (s sqlRows) queryRows(ctx context.Context, query string, args []any, ncol int, fn func(cols []driver.Value) error) error {
	rows, err := s.q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols := make([]driver.Value, ncol)
	vals := make([]any, ncol)
	ptrs := make([]any, ncol)
	for i := range ptrs {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		// Scan into *any copies bytes: they are ours to keep.
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			cols[i] = v
		}
		if err := fn(cols); err == errStop {
			return nil
		} else if err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryFirst of database/sql: the caller's transaction holds the snapshot,
// so the rows are read whole.
func (s sqlRows) queryFirst(ctx context.Context, query string, args []any, ncol int) ([]driver.Value, func() error, error) {
	var row []driver.Value
	err := s.queryRows(ctx, query, args, ncol, func(cols []driver.Value) error {
		row = append([]driver.Value(nil), cols...)
		return errStop
	})
	if err != nil || row == nil {
		return nil, nil, err
	}
	return row, func() error { return nil }, nil
}

// errNotSQLite3 reports a driver connection that is not go-sqlite3's.
var errNotSQLite3 = errors.New("not a go-sqlite3 connection")

// read runs fn on one connection inside a read transaction, so that
// everything fn reads comes from one snapshot of the database. The
// statements go straight to go-sqlite3 (see rawConn); a handle whose driver
// connection is something else is read through database/sql.
//
// With held set, fn holds its snapshot itself (see rowQuerier.queryFirst)
// and on go-sqlite3 no BEGIN and COMMIT are sent.
func (s *Saver) read(ctx context.Context, op, thread string, held bool, fn func(q rowQuerier) error) error {
	return s.withConn(ctx, op, thread, false, func(conn *sql.Conn) error {
		begin := "BEGIN"
		if held {
			begin = ""
		}
		err := rawTx(ctx, conn, begin, func(r *rawConn) error {
			err := fn(r)
			if err == nil {
				err = ctx.Err()
			}
			return err
		})
		if errors.Is(err, errNotSQLite3) {
			err = inTx(ctx, conn, "BEGIN", func() error { return fn(sqlRows{conn}) })
		}
		return err
	})
}

// rawTx runs fn on conn's go-sqlite3 connection directly (see rawConn),
// between begin and COMMIT, or on its own when begin is empty. It returns
// errNotSQLite3, having run nothing, when the driver connection is not
// go-sqlite3's. The commit is not interrupted by ctx: once every statement
// has run, the transaction lands whole.
func rawTx(ctx context.Context, conn *sql.Conn, begin string, fn func(r *rawConn) error) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return errNotSQLite3
		}
		r := rawConns.Get().(*rawConn)
		r.c = c
		defer r.release()
		if begin == "" {
			return fn(r)
		}
		// BEGIN may have run even when it reports the context's error
		// (go-sqlite3 checks the context after its step), so what to undo
		// is decided by the connection's state, not by which step failed.
		err := r.exec(ctx, begin)
		if err == nil {
			err = fn(r)
		}
		if err == nil {
			err = ctx.Err()
		}
		if err == nil {
			if err = r.exec(context.WithoutCancel(ctx), "COMMIT"); err == nil {
				return nil
			}
		}
		if !c.AutoCommit() {
			rbErr := r.exec(context.WithoutCancel(ctx), "ROLLBACK")
			if !c.AutoCommit() {
				// Still inside the transaction: database/sql drops the
				// connection instead of pooling it.
				return fmt.Errorf("%w (rollback: %w; %w)", err, rbErr, driver.ErrBadConn)
			}
		}
		return err
	})
}

var _ querier = (*sql.Conn)(nil)
