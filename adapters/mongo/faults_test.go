package mongo_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/spec"
)

// faultHarness routes savers through the suite's fault proxy. On FerretDB,
// when CHECKPOINTKIT_FERRETDB_BIN names the launcher, the faults group
// gets a FerretDB of its own, which FaultHarness.Restart stops and starts
// again on the same port and data directory: a real server restart.
// Otherwise it uses the server of CHECKPOINTKIT_MONGO_URI, and the real
// restart spec reports "not supported" (restarting a server the tests do
// not own is not theirs to do).
func faultHarness(t *testing.T, ferret bool) *conformance.FaultHarness {
	t.Helper()
	uri := testURI(t)
	var fs *ownServer
	if bin := os.Getenv(binEnv); bin != "" && ferret {
		var err error
		fs, err = startOwnServer(bin, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := fs.stop(); err != nil {
				t.Errorf("stop the faults group's FerretDB: %v", err)
			}
		})
		uri = fs.uri
	}
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatalf("parse %s: %v", uriEnv, err)
	}
	fh := &conformance.FaultHarness{
		Addr: u.Host,
		New: func(ctx context.Context, via string) (spec.Saver, func(), error) {
			// One connection, as in TestConformance on FerretDB; direct,
			// so the driver never looks past the proxy for other members.
			// A server that cannot be reached fails a call after
			// faultSelection rather than the driver's default 30s, and the
			// driver checks the server every half second (its minimum),
			// so it sees the server back soon after the proxy is up.
			opts := options.Client().ApplyURI(uri).SetHosts([]string{via}).SetDirect(true).SetMaxPoolSize(1).
				SetServerSelectionTimeout(faultSelection).SetHeartbeatInterval(500 * time.Millisecond)
			c, err := mongodrv.Connect(opts)
			if err != nil {
				return nil, nil, err
			}
			s, cleanup, err := newSaver(ctx, c)
			if err != nil {
				_ = c.Disconnect(context.Background())
				return nil, nil, err
			}
			return s, func() {
				cleanup()
				_ = c.Disconnect(context.Background())
			}, nil
		},
	}
	if fs != nil {
		fh.Restart = fs.restart
	}
	return fh
}

// faultSelection bounds the driver's wait for a server it cannot reach,
// in the savers of the faults group.
const faultSelection = time.Second

// ownServer is a FerretDB launcher process the faults group owns.
type ownServer struct {
	bin, dir, addr, uri string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// startOwnServer starts the launcher on a free port with data in dir.
func startOwnServer(bin, dir string) (*ownServer, error) {
	s := &ownServer{bin: bin, dir: dir}
	if err := s.start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	u, err := url.Parse(s.uri)
	if err != nil {
		_ = s.stop()
		return nil, err
	}
	s.addr = u.Host
	return s, nil
}

// start runs the launcher on addr and waits for the URI line it prints
// once it listens.
func (s *ownServer) start(addr string) error {
	cmd := exec.Command(s.bin, "-listen-addr", addr, "-data-dir", s.dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case uri := <-line:
		if !strings.HasPrefix(uri, "mongodb://") {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("launcher printed %q, want a mongodb:// URI", uri)
		}
		s.mu.Lock()
		s.cmd, s.uri = cmd, uri
		s.mu.Unlock()
		return nil
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return errors.New("launcher did not print its URI within 60s")
	}
}

// stop sends SIGTERM and waits for the process to end.
func (s *ownServer) stop() error {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return errors.New("launcher did not stop within 30s of SIGTERM")
	}
}

// restart stops the server and starts it again on the same port and data
// directory: FaultHarness.Restart.
func (s *ownServer) restart(ctx context.Context) error {
	if err := s.stop(); err != nil {
		return err
	}
	return s.start(s.addr)
}
