package sqlite

import (
	"context"
	"database/sql"
	"errors"
)

// execer runs one write statement of Put or PutWrites.
type execer interface {
	execArgs(ctx context.Context, query string, args []any) error
}

// execArgs runs a write statement on the go-sqlite3 connection directly,
// through its statement cache, with r's reused argument slice.
func (r *rawConn) execArgs(ctx context.Context, query string, args []any) error {
	_, err := r.c.ExecContext(ctx, query, r.bind(args))
	return err
}

// sqlExec is the execer of a database/sql connection whose driver
// connection is not go-sqlite3's own.
type sqlExec struct{ q querier }

func (e sqlExec) execArgs(ctx context.Context, query string, args []any) error {
	_, err := e.q.ExecContext(ctx, query, args...)
	return err
}

// writeRaw runs fn on one connection, below database/sql as the read path
// does (rawConn), after waiting for this saver's other writers. With tx, fn
// runs between BEGIN IMMEDIATE and COMMIT; without, fn must run exactly one
// statement, which SQLite runs in its own implicit transaction. A handle
// whose driver connection is not go-sqlite3's goes through database/sql
// with the same transactions.
func (s *Saver) writeRaw(ctx context.Context, op, thread string, tx bool, fn func(e execer) error) error {
	return s.withConn(ctx, op, thread, true, func(conn *sql.Conn) error {
		begin := ""
		if tx {
			begin = "BEGIN IMMEDIATE"
		}
		err := rawTx(ctx, conn, begin, func(r *rawConn) error { return fn(r) })
		if !errors.Is(err, errNotSQLite3) {
			return err
		}
		if tx {
			return inTx(ctx, conn, begin, func() error { return fn(sqlExec{conn}) })
		}
		return fn(sqlExec{conn})
	})
}
