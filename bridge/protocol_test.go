package bridge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/bridge/internal/bridgetest"
)

// rawServer speaks the protocol to a server process line by line, so that
// tests can send what no client would.
type rawServer struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	held  map[int64]map[string]any // answers read while waiting for others
}

func startRaw(t *testing.T, cmd *exec.Cmd) *rawServer {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawServer{t: t, in: in, lines: make(chan string, 1024), held: map[int64]map[string]any{}}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = in.Close()
		for range r.lines { // drain, so that the server can finish
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("server exit: %v", err)
		}
	})
	return r
}

func (r *rawServer) send(lines ...string) {
	r.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(r.in, l+"\n"); err != nil {
			r.t.Fatal(err)
		}
	}
}

// next returns the next message the server writes.
func (r *rawServer) next() (map[string]any, string) {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.t.Fatal("the server closed its output")
		}
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			r.t.Fatalf("the server wrote %q, not a JSON object: %v", line, err)
		}
		return m, line
	case <-time.After(testTimeout):
		r.t.Fatal("no message from the server")
	}
	return nil, ""
}

// answer returns the answer to request id, holding others for later.
func (r *rawServer) answer(id int64) map[string]any {
	r.t.Helper()
	for {
		if m, ok := r.held[id]; ok {
			delete(r.held, id)
			return m
		}
		m, _ := r.next()
		n, _ := m["id"].(json.Number).Int64()
		r.held[n] = m
	}
}

// errorCode returns the code of an error answer, or "" for a result.
func errorCode(m map[string]any) string {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return ""
	}
	return e["code"].(string)
}

// open opens a saver with request id 1 and returns its id.
func (r *rawServer) open() string {
	r.send(`{"id":1,"method":"open","params":{}}`)
	m := r.answer(1)
	res, ok := m["result"].(map[string]any)
	if !ok {
		r.t.Fatalf("open: %v", m)
	}
	return res["saver"].(string)
}

const putS1 = `{"id":%d,"saver":"s1","method":"put","params":{"config":{"thread_id":"t","checkpoint_ns":"","checkpoint_id":""},` +
	`"checkpoint":{"v":4,"id":"%s","ts":"2026-01-01T00:00:00Z","channel_values":%s,"channel_versions":{"c":"1"},"versions_seen":{},"updated_channels":null},` +
	`"metadata":{"step":-1},"new_versions":{"c":"1"}}}`

func TestServerRejectsMalformed(t *testing.T) {
	r := startRaw(t, exec.Command(bridgetest.SaverBin(t), "-adapter", "memory"))
	if s := r.open(); s != "s1" {
		t.Fatalf("first saver %q, want s1", s)
	}
	for _, tc := range []struct {
		line string
		id   int64
		code string
	}{
		{`garbage`, 0, "bad_request"},
		{`[1,2]`, 0, "bad_request"},
		{`{"method":"hello","params":{"version":1}}`, 0, "bad_request"},
		{`{"id":-3,"method":"hello","params":{"version":1}}`, 0, "bad_request"},
		{`{"id":1.5,"method":"hello"}`, 0, "bad_request"},
		{`{"id":10,"method":5}`, 10, "bad_request"},
		{`{"id":11}`, 11, "bad_request"},
		{`{"id":12,"method":"frobnicate","params":{}}`, 12, "bad_request"},
		{`{"id":13,"saver":"s9","method":"get_tuple","params":{"config":{"thread_id":"t"}}}`, 13, "bad_request"},
		{`{"id":14,"saver":"s1","method":"get_tuple","params":"t"}`, 14, "bad_request"},
		{`{"id":15,"saver":"s1","method":"get_tuple","params":{}}`, 15, "bad_request"},
		{`{"id":16,"saver":"s1","method":"put","params":{"config":{"thread_id":"t"}}}`, 16, "bad_request"},
		{fmt.Sprintf(putS1, 17, "c1", `{"c":{"$foo":1}}`), 17, "bad_request"},
		{fmt.Sprintf(putS1, 18, "c1", `{"c":{"$bytes":"not base64"}}`), 18, "bad_request"},
		{fmt.Sprintf(putS1, 19, "c1", `{"c":{"$int":"99999999999999999999"}}`), 19, "bad_request"},
		{`{"id":20,"saver":"s1","method":"put_writes","params":{"config":{"thread_id":"t","checkpoint_id":"c"},"writes":[["a"]],"task_id":"x"}}`, 20, "bad_request"},
		{`{"id":21,"saver":"s1","method":"prune","params":{"thread_ids":["t"],"strategy":"keep_most"}}`, 21, "invalid_argument"},
		{`{"id":22,"saver":"s1","method":"get_tuple","params":{"config":{"thread_id":""}}}`, 22, "invalid_config"},
		{`{"id":23,"saver":"s1","method":"list","params":{"limit":-1}}`, 23, "invalid_argument"},
		{`{"id":24,"saver":"s1","method":"close","params":{}}`, 24, ""},
		{`{"id":25,"saver":"s1","method":"get_tuple","params":{"config":{"thread_id":"t"}}}`, 25, "bad_request"}, // closed
	} {
		r.send(tc.line)
		m := r.answer(tc.id)
		if got := errorCode(m); got != tc.code {
			t.Errorf("%s: answered %v, want code %q", tc.line, m, tc.code)
		}
	}
	// After all that, the server still works.
	r.send(`{"id":30,"method":"hello","params":{"version":1}}`)
	if res, ok := r.answer(30)["result"].(map[string]any); !ok || res["protocol"] != "checkpointkit-bridge" {
		t.Errorf("hello after malformed messages: %v", res)
	}
}

// TestServerWire checks exact encodings on the wire: typed values out as
// they came in, null for a missing tuple, list items under credit.
func TestServerWire(t *testing.T) {
	r := startRaw(t, exec.Command(bridgetest.SaverBin(t), "-adapter", "memory"))
	r.open()
	values := `{"c":{"$map":{"$k":[{"$float":"2"},{"$float":"-0"},{"$int":"9007199254740993"},{"$bytes":"AAE="},0.5,-1,null,[],{}]}}}`
	for i, id := range []string{"a", "b", "c"} {
		r.send(fmt.Sprintf(putS1, 2+i, id, values))
		if m := r.answer(int64(2 + i)); errorCode(m) != "" {
			t.Fatalf("put: %v", m)
		}
	}
	r.send(`{"id":5,"saver":"s1","method":"get_tuple","params":{"config":{"thread_id":"nope","checkpoint_ns":"","checkpoint_id":""}}}`)
	if m := r.answer(5); m["result"] != nil || errorCode(m) != "" {
		t.Errorf("get_tuple of a missing thread: %v, want result null", m)
	}

	r.send(`{"id":6,"saver":"s1","method":"list","params":{"thread_id":"t","checkpoint_ns":"","all_namespaces":false,"checkpoint_id":"","filter":{},"before":"","limit":0,"credit":1}}`)
	_, line := r.next()
	want := `"channel_values":` + values
	if !strings.Contains(line, `"item":`) || !strings.Contains(line, want) || !strings.Contains(line, `"checkpoint_id":"c"`) {
		t.Fatalf("first list item %s, want the newest tuple with %s", line, want)
	}
	// Nothing more until credit: an unrelated request is answered first.
	r.send(`{"id":7,"method":"hello","params":{"version":1}}`)
	if m, line := r.next(); m["id"].(json.Number).String() != "7" {
		t.Fatalf("got %s before any credit, want the answer to request 7", line)
	}
	r.send(`{"id":6,"credit":1}`)
	if _, line := r.next(); !strings.Contains(line, `"checkpoint_id":"b"`) {
		t.Fatalf("after one credit got %s, want item b", line)
	}
	r.send(`{"id":6,"credit":5}`)
	if _, line := r.next(); !strings.Contains(line, `"checkpoint_id":"a"`) {
		t.Fatalf("after more credit got %s, want item a", line)
	}
	if _, line := r.next(); line != `{"id":6,"result":null}` {
		t.Fatalf("end of the list: %s", line)
	}

	// Credit 0 waits for the first credit; no credit member means no limit.
	r.send(`{"id":8,"saver":"s1","method":"list","params":{"thread_id":"t","credit":0}}`)
	r.send(`{"id":9,"method":"hello","params":{"version":1}}`)
	if m, line := r.next(); m["id"].(json.Number).String() != "9" {
		t.Fatalf("got %s with credit 0, want the answer to request 9", line)
	}
	r.send(`{"id":8,"credit":1}`)
	if _, line := r.next(); !strings.Contains(line, `"checkpoint_id":"c"`) {
		t.Fatalf("after the first credit got %s, want item c", line)
	}
	r.send(`{"id":8,"cancel":true}`)
	if code := errorCode(r.answer(8)); code != "canceled" {
		t.Fatalf("cancelled list: code %q", code)
	}
	r.send(`{"id":10,"saver":"s1","method":"list","params":{"thread_id":"t"}}`)
	for _, want := range []string{`"checkpoint_id":"c"`, `"checkpoint_id":"b"`, `"checkpoint_id":"a"`, `"result":null`} {
		if _, line := r.next(); !strings.Contains(line, want) {
			t.Fatalf("list without credit: got %s, want %s", line, want)
		}
	}
}

func TestServerDeadlineAndCancel(t *testing.T) {
	r := startRaw(t, helperCmd(t, "gate"))
	r.open()
	get := func(id int64, thread, extra string) {
		r.send(fmt.Sprintf(`{"id":%d,"saver":"s1","method":"get_tuple","params":{"config":{"thread_id":%q}}%s}`, id, thread, extra))
	}
	get(2, "block:a", `,"timeout_ms":20`)
	if code := errorCode(r.answer(2)); code != "deadline_exceeded" {
		t.Errorf("a request past its timeout_ms: code %q, want deadline_exceeded", code)
	}
	// A saver call that ignores its context still gets answered at the deadline.
	get(3, "ignore:b", `,"timeout_ms":20`)
	if code := errorCode(r.answer(3)); code != "deadline_exceeded" {
		t.Errorf("a stuck saver call past its timeout_ms: code %q, want deadline_exceeded", code)
	}
	get(4, "release:b", "")
	r.answer(4)

	get(5, "block:c", "")
	get(6, "started:c", "")
	r.answer(6)
	// A second request under an id still open is rejected without touching the first.
	get(5, "t", "")
	if m := r.answer(0); errorCode(m) != "bad_request" {
		t.Errorf("a duplicate id: %v, want bad_request under id 0", m)
	}
	r.send(`{"id":5,"cancel":true}`)
	if code := errorCode(r.answer(5)); code != "canceled" {
		t.Errorf("a cancelled request: code %q, want canceled", code)
	}
	r.send(`{"id":99,"cancel":true}`, `{"id":98,"credit":3}`) // unknown ids: ignored
	get(7, "ended:c", "")
	if m := r.answer(7); !bytes.Contains(must(json.Marshal(m)), []byte("context canceled")) {
		t.Errorf("the saver call did not see the cancel: %v", m)
	}
	get(8, "panic:x", "")
	if m := r.answer(8); errorCode(m) != "internal" || !strings.Contains(fmt.Sprint(m), "boom") {
		t.Errorf("a panicking saver: %v, want an internal error saying boom", m)
	}
}

// TestServerWriteOutcome checks that a write cancelled, or past its
// deadline, after it reached the saver is answered with what the saver
// call returned, never canceled or deadline_exceeded while it may still
// land.
func TestServerWriteOutcome(t *testing.T) {
	r := startRaw(t, helperCmd(t, "gate"))
	r.open()
	get := func(id int64, thread, extra string) {
		r.send(fmt.Sprintf(`{"id":%d,"method":"get_tuple","params":{"config":{"thread_id":%q}},"saver":"s1"%s}`, id, thread, extra))
	}
	del := func(id int64, thread, extra string) {
		r.send(fmt.Sprintf(`{"id":%d,"method":"delete_thread","params":{"thread_id":%q},"saver":"s1"%s}`, id, thread, extra))
	}

	// Past its deadline: a read sent after the write, with the same
	// timeout, ends first, so the write's deadline has passed by then.
	del(2, "ignore:w", `,"timeout_ms":30`)
	get(3, "started:w", "")
	r.answer(3)
	get(4, "block:d", `,"timeout_ms":30`)
	if code := errorCode(r.answer(4)); code != "deadline_exceeded" {
		t.Fatalf("the read past its deadline: code %q", code)
	}
	get(5, "release:w", "")
	r.answer(5)
	if m := r.answer(2); errorCode(m) != "" || m["result"] != nil {
		t.Errorf("a write that landed after its deadline: %v, want result null", m)
	}

	// Cancelled: the saver's own error is the answer.
	del(6, "refuse:v", "")
	get(7, "started:v", "")
	r.answer(7)
	r.send(`{"cancel":true,"id":6}`)
	get(8, "release:v", "")
	r.answer(8)
	if code := errorCode(r.answer(6)); code != "invalid_config" {
		t.Errorf("a cancelled write that failed on its own: code %q, want invalid_config", code)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
