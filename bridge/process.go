package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Option configures Start and Attach.
type Option func(*clientOptions)

type clientOptions struct {
	grace  time.Duration
	credit int
	tail   int
}

// WithGracePeriod sets how long Close waits for the server to exit after
// its standard input is closed before it kills it (default 5 s, as the
// protocol says).
func WithGracePeriod(d time.Duration) Option {
	return func(o *clientOptions) { o.grace = d }
}

// WithListCredit sets how many list items the server may send ahead of the
// consumer (default 64); the client grants more as the consumer takes them.
func WithListCredit(n int) Option {
	return func(o *clientOptions) {
		if n > 0 {
			o.credit = n
		}
	}
}

// WithStderrTail sets how many bytes of the server's standard error are
// kept for error messages (default 4 KiB).
func WithStderrTail(n int) Option {
	return func(o *clientOptions) {
		if n > 0 {
			o.tail = n
		}
	}
}

// Process is a connection to a bridge server: a child process started by
// Start, or a pair of pipes given to Attach. Its Open method hands out
// savers; it is safe for concurrent use.
type Process struct {
	opts    clientOptions
	command string    // the command line, for errors ("" when attached)
	cmd     *exec.Cmd // nil when attached
	stdout  io.Closer // the read end, closed by Close if the reader is stuck
	stderr  *tail
	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // cmd.Wait's result, readable once exited is closed
	c       *client
	name    string   // from the hello answer
	caps    []string // from the hello answer
	lacks   []string // features of the contract the far side predates (hello's "unsupported")

	single    atomic.Bool // the one saver of a server without "open" is out
	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

func newOptions(opts []Option) clientOptions {
	o := clientOptions{grace: 5 * time.Second, credit: 64, tail: 4 << 10}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Start starts cmd as a bridge server, with its standard input and output
// as the protocol's pipes, and says hello. cmd.Stdin and cmd.Stdout must be
// nil; cmd.Stderr may be set and also receives the server's diagnostics,
// the last few kilobytes of which the client keeps for its errors. On Linux
// the server runs in a process group of its own, is sent SIGTERM if the
// calling process dies (Pdeathsig), and a cmd made by exec.CommandContext
// has its whole group killed when that context ends. ctx bounds the start
// and the hello only; Close ends the process.
func Start(ctx context.Context, cmd *exec.Cmd, opts ...Option) (*Process, error) {
	o := newOptions(opts)
	command := strings.Join(cmd.Args, " ")
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, fmt.Errorf("bridge: start %q: cmd.Stdin and cmd.Stdout must be nil: they carry the protocol", command)
	}
	stdin, childStdin, err := pipe(false)
	if err != nil {
		return nil, fmt.Errorf("bridge: start %q: %w", command, err)
	}
	// The client's end of stdout is ours, not cmd's, so that waiting for
	// the process never races with reading its last answers.
	pr, pw, err := pipe(true)
	if err != nil {
		_ = stdin.Close()
		_ = childStdin.Close()
		return nil, fmt.Errorf("bridge: start %q: %w", command, err)
	}
	cmd.Stdin, cmd.Stdout = childStdin, pw
	stderr := newTail(o.tail)
	if cmd.Stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, cmd.Stderr)
	} else {
		cmd.Stderr = stderr
	}
	setProcAttrs(cmd)
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = o.grace
	}
	err = cmd.Start()
	_ = childStdin.Close()
	_ = pw.Close()
	if err != nil {
		_ = stdin.Close()
		_ = pr.Close()
		return nil, fmt.Errorf("bridge: start %q: %w", command, err)
	}
	p := &Process{opts: o, command: command, cmd: cmd, stdout: pr, stderr: stderr, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	p.c = newClient(pr, stdin, func(error) { p.kill() }, p.ended)
	if err := p.handshake(ctx); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// Attach connects to a server already running at the other end of r and
// w (w carries requests, r answers) and says hello. Close closes w and
// waits for r to end; a server that is not a child process is not killed.
func Attach(ctx context.Context, r io.Reader, w io.WriteCloser, opts ...Option) (*Process, error) {
	p := &Process{opts: newOptions(opts)}
	if c, ok := r.(io.Closer); ok {
		p.stdout = c
	}
	p.c = newClient(r, w, func(err error) {
		p.c.fail(&ExitError{Err: fmt.Errorf("writing requests: %w", err)})
	}, p.ended)
	if err := p.handshake(ctx); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Process) handshake(ctx context.Context) error {
	res, err := p.c.call(ctx, "", "hello", func(b []byte) ([]byte, error) {
		return append(b, `{"version":`+strconv.Itoa(protocolVersion)+`}`...), nil
	})
	if err == nil {
		err = p.readHello(res)
	}
	if err != nil {
		return fmt.Errorf("bridge: hello to %s: %w", p.describe(), err)
	}
	return nil
}

func (p *Process) readHello(res any) error {
	m, err := objectOf(res, "hello result")
	if err != nil {
		return err
	}
	protocol, _ := stringOf(m["protocol"], "protocol")
	version, _ := intOf(m["version"], "version")
	if protocol != protocolName || version != protocolVersion {
		return fmt.Errorf("the server speaks %q version %d, want %q version %d", protocol, version, protocolName, protocolVersion)
	}
	if p.name, err = stringOf(m["name"], "name"); err != nil {
		return err
	}
	if p.caps, err = stringsOf(m["capabilities"], "capabilities"); err != nil {
		return err
	}
	p.lacks, err = stringsOf(m["unsupported"], "unsupported")
	return err
}

func (p *Process) describe() string {
	if p.command != "" {
		return fmt.Sprintf("server process %q", p.command)
	}
	return "attached server"
}

// ended is called by the reader goroutine when the server's output ends,
// and returns the error every call fails with from then on.
func (p *Process) ended(readErr error) error {
	if p.closing.Load() {
		return fmt.Errorf("bridge: %s: %w", p.describe(), ErrClosed)
	}
	if p.cmd == nil {
		if readErr == nil {
			readErr = io.EOF
		}
		return &ExitError{Err: readErr}
	}
	// The server closed its output: it has exited or is about to.
	if !waitFor(p.exited, p.opts.grace) {
		p.kill()
		<-p.exited
	}
	err := p.waitErr
	if err == nil && readErr != nil {
		err = readErr
	}
	return &ExitError{Command: p.command, Err: err, Stderr: p.stderr.String()}
}

// kill kills the server's process group (Linux) or process.
func (p *Process) kill() {
	if p.cmd != nil {
		_ = killGroup(p.cmd)
	}
}

// Open returns a fresh saver over empty, isolated storage (the open
// request). The saver implements exactly the optional spec interfaces the
// server advertised, and io.Closer: Close releases it and its storage on
// the server. A server without the open capability hosts one saver, which
// the first Open returns; later ones fail with errors.ErrUnsupported.
func (p *Process) Open(ctx context.Context) (spec.Saver, error) {
	id := ""
	if p.has(capOpen) {
		res, err := p.c.call(ctx, "", "open", noParams)
		if err != nil {
			return nil, err
		}
		m, _ := res.(map[string]any)
		if id, _ = m["saver"].(string); id == "" {
			return nil, badRequest("open: %s answered without a saver id", p.describe())
		}
	} else if !p.single.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("bridge: open: %s hosts one saver and it is already open: %w", p.describe(), errors.ErrUnsupported)
	}
	return newRemoteSaver(p, id), nil
}

func (p *Process) has(capability string) bool {
	return slices.Contains(p.caps, capability)
}

// Name returns the server's name from its hello answer.
func (p *Process) Name() string { return p.name }

// Capabilities returns the capabilities the server advertised.
func (p *Process) Capabilities() []string { return slices.Clone(p.caps) }

// Unsupported returns the features of LangGraph's contract that the server
// said its side predates (hello's "unsupported", e.g. "delta_channels" for a
// saver pinned to a LangGraph without delta channels). A harness skips the
// rules of those features rather than judge the saver on them.
func (p *Process) Unsupported() []string { return slices.Clone(p.lacks) }

// Pid returns the server's process ID, or 0 for an attached server.
func (p *Process) Pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// StderrTail returns the last bytes the server wrote to standard error.
func (p *Process) StderrTail() string {
	if p.stderr == nil {
		return ""
	}
	return p.stderr.String()
}

// Close ends the session: calls still pending fail with ErrClosed, the
// server's standard input is closed, and Close waits the grace period for
// it to exit before killing it (its whole process group, on Linux). It
// returns an error when the server had to be killed or exited with a
// non-zero status (unless its end was already reported to the calls, as an
// *ExitError). Close is idempotent.
func (p *Process) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.close() })
	return p.closeErr
}

func (p *Process) close() error {
	p.closing.Store(true)
	crashed := p.c.failure() != nil
	p.c.fail(fmt.Errorf("bridge: %s: %w", p.describe(), ErrClosed))
	p.c.out.close() // flushes, then closes the server's standard input

	var err error
	if p.cmd != nil {
		if !waitFor(p.exited, p.opts.grace) {
			p.kill()
			<-p.exited
			err = fmt.Errorf("bridge: %s did not exit within %v of its standard input closing; killed it", p.describe(), p.opts.grace)
		}
		p.kill() // anything left in its process group
		if err == nil && p.waitErr != nil && !crashed {
			err = &ExitError{Command: p.command, Err: p.waitErr, Stderr: p.stderr.String()}
		}
	}
	// The reader ends at EOF once every writer of the pipe is gone; a
	// straggler outside the process group may hold it, so close our end if
	// that takes too long.
	if !waitFor(p.c.readDone, p.opts.grace) {
		if p.stdout == nil {
			if err == nil {
				err = errors.New("bridge: the attached server did not close its output")
			}
			return err
		}
		_ = p.stdout.Close()
		<-p.c.readDone
	}
	if p.stdout != nil {
		_ = p.stdout.Close()
	}
	return err
}

// waitFor waits for ch to be closed, at most d; it reports whether it was.
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// tail keeps the last bytes written to it.
type tail struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped bool
}

func newTail(max int) *tail { return &tail{max: max} }

// Write implements io.Writer; it never fails.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		p = p[len(p)-t.max:]
		t.buf = t.buf[:0]
		t.dropped = true
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = t.buf[:copy(t.buf, t.buf[over:])]
		t.dropped = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept bytes, starting at a line boundary when older
// output was dropped.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if t.dropped {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
		s = "…\n" + s
	}
	return s
}
