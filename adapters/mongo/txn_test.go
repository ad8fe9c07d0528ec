package mongo_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/adapters/internal/savertest"
	"github.com/checkpointkit/checkpointkit/adapters/mongo"
	"github.com/checkpointkit/checkpointkit/spec"
)

// txnProxy sits between the driver and FerretDB, which has no
// transactions, and pretends it has: it strips the transaction fields
// (startTransaction, autocommit, txnNumber) from every command before
// passing it on, and answers commitTransaction and abortTransaction itself.
// The first failCommits commits are answered with a WriteConflict labelled
// TransientTransactionError, which makes the driver run the transaction
// again. Writes land at once, so the proxy proves nothing about atomicity:
// it lets the saver's transactional code path run to success, so that the
// command stream the driver sends can be checked.
type txnProxy struct {
	ln          net.Listener
	upstream    string
	failCommits atomic.Int32
	commits     atomic.Int32
	aborts      atomic.Int32
	wg          sync.WaitGroup
}

func startTxnProxy(t *testing.T, upstream string) *txnProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &txnProxy{ln: ln, upstream: upstream}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

const opMsg = 2013

func (p *txnProxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		_, _ = io.Copy(client, server)
		client.Close()
	}()
	// The driver sends one command at a time on a connection, so a reply
	// of ours never interleaves with one of the server's.
	for {
		msg, err := readMessage(client)
		if err != nil {
			return
		}
		if reply, fwd, ok := p.rewrite(msg); ok {
			if reply != nil {
				_, err = client.Write(reply)
			} else {
				_, err = server.Write(fwd)
			}
			if err != nil {
				return
			}
			continue
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

func readMessage(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if n < 16 || n > 64<<20 {
		return nil, errors.New("bad message length")
	}
	msg := make([]byte, n)
	copy(msg, hdr[:])
	_, err := io.ReadFull(r, msg[4:])
	return msg, err
}

// rewrite handles an OP_MSG whose body is one kind-0 section (and any
// kind-1 document sequences): it returns a reply to send back, or the
// message to forward with the transaction fields stripped. ok is false for
// messages it leaves alone.
func (p *txnProxy) rewrite(msg []byte) (reply, fwd []byte, ok bool) {
	if binary.LittleEndian.Uint32(msg[12:16]) != opMsg || binary.LittleEndian.Uint32(msg[16:20])&1 != 0 {
		return nil, nil, false // not OP_MSG, or checksummed
	}
	requestID := binary.LittleEndian.Uint32(msg[4:8])
	var body bson.Raw
	var rest []byte // the other sections, verbatim
	for pos := 20; pos < len(msg); {
		switch msg[pos] {
		case 0:
			n := int(binary.LittleEndian.Uint32(msg[pos+1:]))
			body = bson.Raw(msg[pos+1 : pos+1+n])
			pos += 1 + n
		case 1:
			n := int(binary.LittleEndian.Uint32(msg[pos+1:]))
			rest = append(rest, msg[pos:pos+1+n]...)
			pos += 1 + n
		default:
			return nil, nil, false
		}
	}
	elems, err := body.Elements()
	if err != nil || len(elems) == 0 {
		return nil, nil, false
	}
	switch elems[0].Key() {
	case "commitTransaction":
		if p.failCommits.Add(-1) >= 0 {
			return opMsgReply(requestID, bson.D{
				{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "injected by the test proxy"},
				{Key: "code", Value: int32(112)}, {Key: "codeName", Value: "WriteConflict"},
				{Key: "errorLabels", Value: bson.A{"TransientTransactionError"}},
			}), nil, true
		}
		p.commits.Add(1)
		return opMsgReply(requestID, bson.D{{Key: "ok", Value: 1.0}}), nil, true
	case "abortTransaction":
		p.aborts.Add(1)
		return opMsgReply(requestID, bson.D{{Key: "ok", Value: 1.0}}), nil, true
	}
	var doc bson.D
	if err := bson.Unmarshal(body, &doc); err != nil {
		return nil, nil, false
	}
	stripped := slices.DeleteFunc(slices.Clone(doc), func(e bson.E) bool {
		return e.Key == "startTransaction" || e.Key == "autocommit" || e.Key == "txnNumber"
	})
	if len(stripped) == len(doc) {
		return nil, nil, false
	}
	raw, err := bson.Marshal(stripped)
	if err != nil {
		return nil, nil, false
	}
	out := binary.LittleEndian.AppendUint32(nil, 0)
	out = append(out, msg[4:16]...)
	out = binary.LittleEndian.AppendUint32(out, 0) // flags
	out = append(out, 0)
	out = append(out, raw...)
	out = append(out, rest...)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return nil, out, true
}

func opMsgReply(responseTo uint32, doc bson.D) []byte {
	raw, _ := bson.Marshal(doc)
	out := make([]byte, 16, 21+len(raw))
	binary.LittleEndian.PutUint32(out[8:], responseTo)
	binary.LittleEndian.PutUint32(out[12:], opMsg)
	out = binary.LittleEndian.AppendUint32(out, 0)
	out = append(out, 0)
	out = append(out, raw...)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out
}

// txnCommand is one command the driver sent, as the monitor saw it.
type txnCommand struct {
	name, coll      string
	lsid            string
	txnNumber       int64
	start, noCommit bool
}

// TestTransactionsSuccessPath runs Put and PutWrites with
// WithTransactions to success, through txnProxy, and checks the command
// stream the driver sends: every read and write of one call (but the
// fence read that runs alongside it) carries one session and one
// transaction number, the first starts the transaction,
// none autocommits, and a commitTransaction of that transaction ends the
// call. With the first commit failing as a transient error, the driver
// runs the saver's callback again and the second attempt commits, and what
// is stored is exactly one copy of everything.
//
// What this proves: the saver's transactional code path (upserts instead
// of insert-then-replace, the batch numbering read and insert, the chunk
// upserts) issues all its commands inside the transaction, commits it,
// and is idempotent under the driver's retry. What it cannot prove: that a
// real replica set applies them atomically and in isolation (the proxy
// applies every write at once), WriteConflict under real concurrency,
// transaction size and time limits.
func TestTransactionsSuccessPath(t *testing.T) {
	p := startTxnProxy(t, hostOf(t, testURI(t)))
	var mu sync.Mutex
	var cmds []txnCommand
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		c := txnCommand{name: e.CommandName}
		if v, err := e.Command.LookupErr(e.CommandName); err == nil {
			c.coll, _ = v.StringValueOK()
		}
		if v, err := e.Command.LookupErr("lsid", "id"); err == nil {
			_, data, _ := v.BinaryOK()
			c.lsid = string(data)
		}
		if v, err := e.Command.LookupErr("txnNumber"); err == nil {
			c.txnNumber, _ = v.AsInt64OK()
		}
		if v, err := e.Command.LookupErr("startTransaction"); err == nil {
			c.start, _ = v.BooleanOK()
		}
		if v, err := e.Command.LookupErr("autocommit"); err == nil {
			b, _ := v.BooleanOK()
			c.noCommit = !b
		}
		mu.Lock()
		cmds = append(cmds, c)
		mu.Unlock()
	}}
	c, err := mongodrv.Connect(options.Client().ApplyURI("mongodb://" + p.ln.Addr().String() + "/").
		SetDirect(true).SetMaxPoolSize(1).SetMonitor(mon))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	ctx := context.Background()
	s, cleanup, err := newSaver(ctx, c, mongo.WithTransactions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	defer mongo.SetChunking(64, 32)() // large values take the chunk path too

	call := func(name string, failCommits int32, fn func() error) []txnCommand {
		t.Helper()
		mu.Lock()
		cmds = nil
		mu.Unlock()
		p.failCommits.Store(failCommits)
		commits := p.commits.Load()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := p.commits.Load() - commits; got != 1 {
			t.Errorf("%s: %d commits, want 1", name, got)
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(cmds)
	}
	check := func(name string, got []txnCommand, attempts int) {
		t.Helper()
		var txns []int64
		var lsid string
		got = slices.DeleteFunc(got, func(c txnCommand) bool {
			// The fence read runs alongside the call, outside it (see
			// ops.go); it writes nothing.
			return c.name == "endSessions" || c.name == "find" && c.coll == mongo.OpsCollection
		})
		for i, c := range got {
			if c.lsid == "" || c.txnNumber == 0 || !c.noCommit {
				t.Errorf("%s: command %d (%s %s) outside a transaction: %+v", name, i, c.name, c.coll, c)
				continue
			}
			if lsid == "" {
				lsid = c.lsid
			} else if c.lsid != lsid {
				t.Errorf("%s: command %d in another session", name, i)
			}
			if len(txns) == 0 || txns[len(txns)-1] != c.txnNumber {
				txns = append(txns, c.txnNumber)
				if !c.start && c.name != "commitTransaction" {
					t.Errorf("%s: transaction %d's first command %s does not start it", name, c.txnNumber, c.name)
				}
			} else if c.start {
				t.Errorf("%s: command %d starts transaction %d again", name, i, c.txnNumber)
			}
		}
		if len(txns) != attempts {
			t.Errorf("%s: %d transactions, want %d (%+v)", name, len(txns), attempts, got)
		}
		if len(got) == 0 || got[len(got)-1].name != "commitTransaction" {
			t.Errorf("%s: the last command is not commitTransaction: %+v", name, got)
		}
		writes := 0
		for _, c := range got {
			if c.name == "insert" || c.name == "update" {
				writes++
			}
		}
		if writes < attempts {
			t.Errorf("%s: %d writes in %d transactions", name, writes, attempts)
		}
	}

	cp, md, nv, writes := savertest.Fixture("1", "r")
	cp.ChannelValues["big"] = string(make([]byte, 500)) // chunked
	cp.ChannelVersions["big"], nv["big"] = "1.big", "1.big"
	writes = append(writes, spec.Write{Channel: "bigw", Value: string(make([]byte, 300))})
	cfg := spec.Config{ThreadID: "t", CheckpointID: "1"}
	for _, attempts := range []int{1, 2} {
		got := call("put", int32(attempts-1), func() error {
			_, err := s.Put(ctx, spec.Config{ThreadID: "t"}, cp, md, nv)
			return err
		})
		check("put", got, attempts)
		got = call("put writes", int32(attempts-1), func() error { return s.PutWrites(ctx, cfg, writes, "task-1", "p") })
		check("put writes", got, attempts)
	}
	if p.aborts.Load() != 0 {
		t.Errorf("%d transactions aborted", p.aborts.Load())
	}
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tup.Checkpoint.ChannelValues) != 4 || len(tup.PendingWrites) != len(writes) {
		t.Fatalf("after transactional Puts and PutWrites: %d values, %d writes", len(tup.Checkpoint.ChannelValues), len(tup.PendingWrites))
	}
	if n := countDocs(t, s, mongo.CheckpointsCollection, bson.D{}); n != 1 {
		t.Errorf("%d checkpoint documents, want 1", n)
	}
}

// hostOf returns the host:port of a mongodb:// URI with one host.
func hostOf(t *testing.T, uri string) string {
	t.Helper()
	o := options.Client().ApplyURI(uri)
	if len(o.Hosts) != 1 {
		t.Skipf("the proxy needs a single-host URI, have %q", uri)
	}
	return o.Hosts[0]
}
