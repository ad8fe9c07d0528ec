package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkpointkit/checkpointkit/spec"
)

// crashChildEnv names the database file a re-executed test binary writes
// to in TestCrashChild; only TestCrashRecovery sets it.
const crashChildEnv = "CHECKPOINTKIT_SQLITE_CRASH_CHILD"

// crashChannels are the channels every crash-loop checkpoint stores.
var crashChannels = []string{"a", "b", "c"}

// crashValue is the value of channel ch in checkpoint n of the crash loop:
// large enough (tens of kilobytes per checkpoint) that a kill often lands
// inside a write.
func crashValue(ch string, n int) any {
	switch ch {
	case "a":
		return strings.Repeat(fmt.Sprintf("a%06d|", n), 4096)
	case "b":
		return int64(n)
	default:
		list := make([]any, 0, 512)
		for i := range 512 {
			list = append(list, fmt.Sprintf("c%d-%d", n, i))
		}
		return map[string]any{"n": int64(n), "list": list}
	}
}

// crashWrites are the pending writes the loop stores for checkpoint n, in
// one PutWrites call.
func crashWrites(n int) []spec.Write {
	return []spec.Write{
		{Channel: "w1", Value: strings.Repeat(fmt.Sprintf("w%06d|", n), 2048)},
		{Channel: "w2", Value: int64(n)},
		{Channel: spec.ErrorChannel, Value: fmt.Sprintf("e%d", n)},
	}
}

// crashID is the checkpoint ID of step n.
func crashID(n int) string { return fmt.Sprintf("%08d", n) }

// TestCrashChild is the child of TestCrashRecovery: with
// CHECKPOINTKIT_SQLITE_CRASH_CHILD set, it continues the write loop on that
// file (a Put with values, then a PutWrites, per step) and reports each
// call that returned on file descriptor 3 ("put N", "writes N"), until it
// is killed. Without the variable it does nothing.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		return // run by TestCrashRecovery only
	}
	report := os.NewFile(3, "report")
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	next, parent := 0, ""
	if last, err := s.GetTuple(ctx, spec.Config{ThreadID: "t"}); err == nil {
		n, _ := strconv.Atoi(last.Config.CheckpointID)
		next, parent = n+1, last.Config.CheckpointID
	} else if !errors.Is(err, spec.ErrNotFound) {
		t.Fatal(err)
	}
	for n := next; ; n++ {
		values := map[string]any{}
		versions := spec.Versions{}
		for _, ch := range crashChannels {
			values[ch] = crashValue(ch, n)
			versions[ch] = spec.Version(crashID(n))
		}
		cp := spec.Checkpoint{V: 4, ID: crashID(n), TS: time.Unix(int64(n), 0).UTC().Format(time.RFC3339), ChannelValues: values, ChannelVersions: versions}
		cfg, err := s.Put(ctx, spec.Config{ThreadID: "t", CheckpointID: parent}, cp, spec.Metadata{"step": int64(n)}, versions)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(report, "put %d\n", n)
		if err := s.PutWrites(ctx, cfg, crashWrites(n), "task", "path"); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(report, "writes %d\n", n)
		parent = cp.ID
	}
}

// TestCrashRecovery kills a process writing checkpoints with SIGKILL at
// varied points, reopens the file and checks that it holds only whole
// checkpoints: each with all its values and metadata, and per PutWrites
// call all its writes or none; and that every call the child saw return
// survived. The kill points are counted, not timed: in acknowledged calls,
// read from the child's report pipe, then in bytes the child has added to
// the write-ahead log since, so that kills land inside commits too.
func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		return
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	// Kill points: after k acknowledged calls, then walBytes more bytes
	// of write-ahead log.
	kills := []struct {
		k        int
		walBytes int64
	}{{1, 0}, {2, 1}, {3, 4096}, {5, 12 << 10}, {8, 30 << 10}, {4, 50 << 10}, {7, 2 << 10}, {11, 70 << 10}, {6, 20 << 10}, {3, 8 << 10}}
	acked := &crashAcks{lastPut: -1, writes: map[int]bool{}}
	total, latest, unacked, midLog := 0, 0, 0, 0
	for round, kp := range kills {
		grown := crashRound(t, path, kp.k, kp.walBytes, acked)
		if grown > 0 {
			midLog++
		}
		n, last := verifyCrashFile(t, path, acked)
		total, latest = total+n, n
		if last > acked.lastPut {
			unacked++ // the kill landed after a commit, before its report
		}
		t.Logf("round %d: killed after %d acknowledged calls and %d bytes of log; last acknowledged Put %d, latest stored %d", round, kp.k, grown, acked.lastPut, last)
	}
	t.Logf("%d kills (%d after the log had grown, %d after a Put committed but before it was acknowledged); %d checkpoints in the file, %d checkpoint reads verified whole, with their writes all or nothing",
		len(kills), midLog, unacked, latest, total)
}

// crashAcks is what the children acknowledged: the last step whose Put
// returned, and the steps whose PutWrites returned.
type crashAcks struct {
	lastPut int
	writes  map[int]bool
}

// add records one report line of a child.
func (a *crashAcks) add(line string) error {
	what, num, _ := strings.Cut(line, " ")
	n, err := strconv.Atoi(num)
	if err != nil {
		return fmt.Errorf("child report %q", line)
	}
	switch what {
	case "put":
		a.lastPut = n
	case "writes":
		a.writes[n] = true
	default:
		return fmt.Errorf("child report %q", line)
	}
	return nil
}

// crashRound starts the child on path, reads its reports until k calls
// have returned, then waits, without sleeping, until the child has
// written walBytes more bytes to the write-ahead log (or reported two more
// calls), kills it with SIGKILL and records what it acknowledged. It
// returns how far the log had grown past that point at the kill. Growing
// the log is what a commit does, frame by frame, so the byte count lands
// the kill at varied points of a transaction's writes.
func crashRound(t *testing.T, path string, k int, walBytes int64, acked *crashAcks) int64 {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	cmd.ExtraFiles = []*os.File{w}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	ack := func(line string) {
		if err := acked.add(line); err != nil {
			t.Error(err)
		}
	}
	for i := 0; i < k; i++ {
		line, ok := <-lines
		if !ok {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the child stopped after %d of %d calls:\n%s", i, k, stderr.String())
		}
		ack(line)
	}
	base := walSize(path)
	for extra := 0; walSize(path) < base+walBytes && extra < 2; {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the child stopped:\n%s", stderr.String())
			}
			ack(line)
			extra++
		default:
			runtime.Gosched()
		}
	}
	grown := walSize(path) - base
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// A report written before the kill is acknowledged too.
	for line := range lines {
		ack(line)
	}
	return grown
}

// walSize returns the size of the write-ahead log of the database at
// path, 0 when there is none.
func walSize(path string) int64 {
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

// verifyCrashFile opens path after a kill and checks every checkpoint of
// the loop's thread; it returns how many it checked and the latest step.
func verifyCrashFile(t *testing.T, path string, acked *crashAcks) (int, int) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open(driverName, path)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check after a kill: %q, %v", check, err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen after a kill: %v", err)
	}
	defer s.Close()
	n := 0
	last := -1
	for tup, err := range s.List(ctx, spec.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatalf("list after a kill: %v", err)
		}
		step, err := strconv.Atoi(tup.Config.CheckpointID)
		if err != nil {
			t.Fatalf("unexpected checkpoint %q", tup.Config.CheckpointID)
		}
		if last < 0 {
			last = step
		}
		if want := last - n; step != want {
			t.Fatalf("checkpoint %d listed where %d was expected: a checkpoint went missing", step, want)
		}
		n++
		if len(tup.Checkpoint.ChannelValues) != len(crashChannels) {
			t.Fatalf("checkpoint %d is torn: %d of %d channel values", step, len(tup.Checkpoint.ChannelValues), len(crashChannels))
		}
		for _, ch := range crashChannels {
			if !spec.Equal(tup.Checkpoint.ChannelValues[ch], crashValue(ch, step)) {
				t.Fatalf("checkpoint %d: channel %q does not hold the value it was put with", step, ch)
			}
		}
		if got := tup.Metadata["step"]; got != int64(step) {
			t.Fatalf("checkpoint %d: metadata step %v", step, got)
		}
		switch len(tup.PendingWrites) {
		case 0:
			if acked.writes[step] {
				t.Fatalf("checkpoint %d lost the writes whose PutWrites returned", step)
			}
		case len(crashWrites(step)):
			got := map[string]any{}
			for _, pw := range tup.PendingWrites {
				got[pw.Channel] = pw.Value
			}
			for _, w := range crashWrites(step) {
				if v, ok := got[w.Channel]; !ok || !spec.Equal(v, w.Value) {
					t.Fatalf("checkpoint %d: write to %q is missing or wrong", step, w.Channel)
				}
			}
		default:
			t.Fatalf("checkpoint %d has %d of its %d writes: a PutWrites call was torn", step, len(tup.PendingWrites), len(crashWrites(step)))
		}
	}
	if last < acked.lastPut {
		t.Fatalf("the latest checkpoint is %d, but Put %d returned before the kill", last, acked.lastPut)
	}
	if n != last+1 {
		t.Fatalf("%d checkpoints for steps 0..%d", n, last)
	}
	return n, last
}
