package bridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/spec"
)

// attachFake attaches the client to a scripted server in this process:
// answer gets each request (its id, method and raw line) and returns the
// lines to write back. hello and open are answered unless answer handles
// them (returns non-nil).
func attachFake(t *testing.T, capabilities []string, answer func(id int64, method, line string) []string) (*bridge.Process, error) {
	t.Helper()
	reqR, reqW := io.Pipe()
	ansR, ansW := io.Pipe()
	go func() {
		defer ansW.Close()
		sc := bufio.NewScanner(reqR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m struct {
				ID     int64  `json:"id"`
				Method string `json:"method"`
			}
			_ = json.Unmarshal(sc.Bytes(), &m)
			out := answer(m.ID, m.Method, sc.Text())
			if out == nil {
				switch m.Method {
				case "hello":
					caps, _ := json.Marshal(capabilities)
					out = []string{fmt.Sprintf(`{"id":%d,"result":{"protocol":"checkpointkit-bridge","version":1,"name":"fake","capabilities":%s}}`, m.ID, caps)}
				case "open":
					out = []string{fmt.Sprintf(`{"id":%d,"result":{"saver":"f1"}}`, m.ID)}
				case "close":
					out = []string{fmt.Sprintf(`{"id":%d,"result":null}`, m.ID)}
				}
			}
			for _, l := range out {
				if _, err := io.WriteString(ansW, l+"\n"); err != nil {
					return
				}
			}
		}
	}()
	p, err := bridge.Attach(testContext(t), ansR, reqW)
	if p != nil {
		t.Cleanup(func() { _ = p.Close() })
	}
	return p, err
}

func noAnswer(int64, string, string) []string { return nil }

// TestCapabilityMask opens a saver from servers advertising every subset
// of the optional capabilities: each must implement exactly its subset.
func TestCapabilityMask(t *testing.T) {
	names := []string{"copy_thread", "delete_for_runs", "prune", "next_version"}
	for mask := range 16 {
		caps := []string{"open"}
		for bit, n := range names {
			if mask&(1<<bit) != 0 {
				caps = append(caps, n)
			}
		}
		p, err := attachFake(t, caps, noAnswer)
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Open(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		_, c := s.(spec.ThreadCopier)
		_, d := s.(spec.RunDeleter)
		_, x := s.(spec.Pruner)
		_, v := s.(spec.VersionGenerator)
		_, cl := s.(io.Closer)
		got := []bool{c, d, x, v}
		for bit := range names {
			if got[bit] != (mask&(1<<bit) != 0) {
				t.Errorf("capabilities %v: the saver implements ThreadCopier %v RunDeleter %v Pruner %v VersionGenerator %v", caps, c, d, x, v)
				break
			}
		}
		if !cl {
			t.Errorf("capabilities %v: the saver is no io.Closer", caps)
		}
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestClientHandlesServerErrors(t *testing.T) {
	p, err := attachFake(t, []string{"open"}, func(id int64, method, line string) []string {
		if method != "get_tuple" {
			return nil
		}
		switch {
		case strings.Contains(line, `"thread_id":"notfound"`):
			return []string{fmt.Sprintf(`{"id":%d,"error":{"code":"not_found","message":"no such checkpoint in thread notfound"}}`, id)}
		case strings.Contains(line, `"thread_id":"weird"`):
			return []string{fmt.Sprintf(`{"id":%d,"error":{"code":"teapot","message":"I am a teapot"}}`, id)}
		case strings.Contains(line, `"thread_id":"badvalue"`):
			return []string{fmt.Sprintf(`{"id":%d,"result":{"config":{"thread_id":"t"},"checkpoint":{"channel_values":{"c":{"$what":1}}},"metadata":{},"parent_config":null,"pending_writes":[]}}`, id)}
		case strings.Contains(line, `"thread_id":"late"`):
			return []string{fmt.Sprintf(`{"id":%d,"result":null}`, id+1000), fmt.Sprintf(`{"id":%d,"item":{}}`, id)}
		}
		return []string{"this is not a message"}
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Open(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	_, err = s.GetTuple(ctx, spec.Config{ThreadID: "notfound"})
	if !errors.Is(err, spec.ErrNotFound) || !strings.Contains(err.Error(), "no such checkpoint") {
		t.Errorf("not_found: got %v, want ErrNotFound with the server's message", err)
	}
	_, err = s.GetTuple(ctx, spec.Config{ThreadID: "weird"})
	var be *bridge.Error
	if !errors.As(err, &be) || be.Code != "teapot" || errors.Unwrap(be) != nil || err.Error() != "I am a teapot" {
		t.Errorf("unknown code: got %#v", err)
	}
	_, err = s.GetTuple(ctx, spec.Config{ThreadID: "badvalue"})
	if !errors.Is(err, bridge.ErrBadRequest) || !strings.Contains(err.Error(), "$what") {
		t.Errorf("a result with an unknown tag: got %v, want ErrBadRequest naming it", err)
	}
	_, err = s.GetTuple(ctx, spec.Config{ThreadID: "late"})
	if !errors.Is(err, bridge.ErrBadRequest) {
		t.Errorf("an item for a call: got %v, want ErrBadRequest", err)
	}
	// A line that is no message breaks the connection for every call.
	_, err = s.GetTuple(ctx, spec.Config{ThreadID: "garbage"})
	if !errors.Is(err, bridge.ErrBadRequest) || !strings.Contains(err.Error(), "this is not a message") {
		t.Errorf("garbage: got %v, want ErrBadRequest quoting the line", err)
	}
	if _, err2 := s.GetTuple(ctx, spec.Config{ThreadID: "notfound"}); !errors.Is(err2, bridge.ErrBadRequest) {
		t.Errorf("a call after garbage: got %v, want the connection's error", err2)
	}
}

func TestGarbageFromProcess(t *testing.T) {
	p := startHelper(t, "garbage")
	s := openSaverErr(t, p)
	if !errors.Is(s, bridge.ErrBadRequest) || !strings.Contains(s.Error(), "this is not a message") {
		t.Errorf("open against a server writing garbage: got %v", s)
	}
}

func openSaverErr(t *testing.T, p *bridge.Process) error {
	_, err := p.Open(testContext(t))
	return err
}

func TestHelloChecksProtocol(t *testing.T) {
	_, err := attachFake(t, nil, func(id int64, method, _ string) []string {
		return []string{fmt.Sprintf(`{"id":%d,"result":{"protocol":"something-else","version":7,"name":"x","capabilities":[]}}`, id)}
	})
	if err == nil || !strings.Contains(err.Error(), "something-else") {
		t.Errorf("Attach to a server of another protocol: got %v", err)
	}
}

// TestSingleSaverServer: a server without open hosts one saver, which the
// first Open returns and addresses without a saver field.
func TestSingleSaverServer(t *testing.T) {
	sawSaver := make(chan bool, 1)
	p, err := attachFake(t, []string{}, func(id int64, method, line string) []string {
		if method == "delete_thread" {
			sawSaver <- strings.Contains(line, `"saver"`)
			return []string{fmt.Sprintf(`{"id":%d,"result":null}`, id)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Open(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(testContext(t), "t"); err != nil {
		t.Fatal(err)
	}
	if <-sawSaver {
		t.Error("a request to the one saver carried a saver field")
	}
	if _, err := p.Open(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("a second Open: got %v, want errors.ErrUnsupported", err)
	}
}
