package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/checkpointkit/checkpointkit/spec"
)

// callTimeout bounds the calls that take no context: a saver's Close and
// NextVersion.
const callTimeout = time.Minute

// remote is a saver hosted by a bridge server. Its optional capabilities
// live on the small types below, so that newRemoteSaver can compose a value
// implementing exactly those the server advertised.
type remote struct {
	p      *Process
	id     string // "" for the one saver of a server without open
	closed atomic.Bool
}

// closableSaver is what every saver from Process.Open implements. Every
// one is a spec.DeltaHistoryReader: without the server's delta_history
// capability its DeltaHistory fails with errors.ErrUnsupported, which is
// how the suite learns that a bridged saver lacks it (see delta.go).
type closableSaver interface {
	spec.Saver
	io.Closer
	spec.DeltaHistoryReader
}

type (
	copier     struct{ *remote }
	runDeleter struct{ *remote }
	pruner     struct{ *remote }
	versioner  struct{ *remote }
)

// newRemoteSaver returns the saver id of p, implementing the optional
// interfaces of p's capabilities and no others: one of 16 anonymous struct
// types, selected by a 4-bit mask.
func newRemoteSaver(p *Process, id string) spec.Saver {
	r := &remote{p: p, id: id}
	var mask int
	for bit, capability := range []string{capCopyThread, capDeleteRuns, capPrune, capNextVersion} {
		if p.has(capability) {
			mask |= 1 << bit
		}
	}
	type (
		b = closableSaver
		c = spec.ThreadCopier
		d = spec.RunDeleter
		x = spec.Pruner
		v = spec.VersionGenerator
	)
	rc, rd, rx, rv := copier{r}, runDeleter{r}, pruner{r}, versioner{r}
	switch mask {
	case 0b0000:
		return struct{ b }{r}
	case 0b0001:
		return struct {
			b
			c
		}{r, rc}
	case 0b0010:
		return struct {
			b
			d
		}{r, rd}
	case 0b0011:
		return struct {
			b
			c
			d
		}{r, rc, rd}
	case 0b0100:
		return struct {
			b
			x
		}{r, rx}
	case 0b0101:
		return struct {
			b
			c
			x
		}{r, rc, rx}
	case 0b0110:
		return struct {
			b
			d
			x
		}{r, rd, rx}
	case 0b0111:
		return struct {
			b
			c
			d
			x
		}{r, rc, rd, rx}
	case 0b1000:
		return struct {
			b
			v
		}{r, rv}
	case 0b1001:
		return struct {
			b
			c
			v
		}{r, rc, rv}
	case 0b1010:
		return struct {
			b
			d
			v
		}{r, rd, rv}
	case 0b1011:
		return struct {
			b
			c
			d
			v
		}{r, rc, rd, rv}
	case 0b1100:
		return struct {
			b
			x
			v
		}{r, rx, rv}
	case 0b1101:
		return struct {
			b
			c
			x
			v
		}{r, rc, rx, rv}
	case 0b1110:
		return struct {
			b
			d
			x
			v
		}{r, rd, rx, rv}
	default:
		return struct {
			b
			c
			d
			x
			v
		}{r, rc, rd, rx, rv}
	}
}

func (r *remote) call(ctx context.Context, method string, params func([]byte) ([]byte, error)) (any, error) {
	if r.closed.Load() {
		return nil, fmt.Errorf("bridge: %s: saver %q is closed: %w", method, r.id, ErrClosed)
	}
	return r.p.c.call(ctx, r.id, method, params)
}

// exec is call for the methods whose result is null.
func (r *remote) exec(ctx context.Context, method string, params func([]byte) ([]byte, error)) error {
	_, err := r.call(ctx, method, params)
	return err
}

// Put implements spec.Saver.
func (r *remote) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) (spec.Config, error) {
	if err := checkPut(cfg, cp, newVersions); err != nil {
		return spec.Config{}, err
	}
	res, err := r.call(ctx, "put", func(b []byte) ([]byte, error) { return appendPutParams(b, cfg, cp, md, newVersions) })
	if err != nil {
		return spec.Config{}, err
	}
	m, err := objectOf(res, "put result")
	if err == nil && m == nil {
		err = badRequest("the put result is null")
	}
	if err != nil {
		return spec.Config{}, fmt.Errorf("bridge: put: %w", err)
	}
	out, err := configOf(m["config"], "put result config")
	if err != nil {
		return spec.Config{}, fmt.Errorf("bridge: put: %w", err)
	}
	return out, nil
}

// PutWrites implements spec.Saver.
func (r *remote) PutWrites(ctx context.Context, cfg spec.Config, writes []spec.Write, taskID, taskPath string) error {
	if err := checkConfig("put writes", cfg); err != nil {
		return err
	}
	if err := carryable("put writes", "task ID", taskID); err != nil {
		return err
	}
	if err := carryable("put writes", "task path", taskPath); err != nil {
		return err
	}
	for _, w := range writes {
		if err := carryable("put writes", "channel", w.Channel); err != nil {
			return err
		}
	}
	return r.exec(ctx, "put_writes", func(b []byte) ([]byte, error) { return appendPutWritesParams(b, cfg, writes, taskID, taskPath) })
}

// GetTuple implements spec.Saver. A server's null answer ("there is none")
// becomes spec.ErrNotFound.
func (r *remote) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	if err := checkConfig("get tuple", cfg); err != nil {
		return nil, err
	}
	res, err := r.call(ctx, "get_tuple", func(b []byte) ([]byte, error) { return appendGetTupleParams(b, cfg), nil })
	if err != nil {
		return nil, err
	}
	t, err := tupleOf(res)
	if err != nil {
		return nil, fmt.Errorf("bridge: get tuple: %w", err)
	}
	if t == nil {
		return nil, fmt.Errorf("get tuple: thread %q namespace %q checkpoint %q: %w", cfg.ThreadID, cfg.Namespace, cfg.CheckpointID, spec.ErrNotFound)
	}
	return t, nil
}

// DeleteThread implements spec.Saver.
func (r *remote) DeleteThread(ctx context.Context, threadID string) error {
	if err := carryable("delete thread", "thread ID", threadID); err != nil {
		return err
	}
	return r.exec(ctx, "delete_thread", stringParams("thread_id", threadID))
}

// Close releases the saver and its storage on the server (the close
// request). It is idempotent; after it, every call fails with ErrClosed.
func (r *remote) Close() error {
	if r.closed.Swap(true) || r.id == "" {
		return nil // the one saver of a server without open lives as long as the server
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := r.p.c.call(ctx, r.id, "close", noParams)
	if errors.Is(err, ErrClosed) {
		return nil // the session is over, and the storage went with it
	}
	return err
}

// CopyThread implements spec.ThreadCopier.
func (c copier) CopyThread(ctx context.Context, src, dst string) error {
	if err := carryable("copy thread", "thread ID", src, dst); err != nil {
		return err
	}
	return c.exec(ctx, "copy_thread", func(b []byte) ([]byte, error) { return appendCopyThreadParams(b, src, dst), nil })
}

// DeleteForRuns implements spec.RunDeleter.
func (d runDeleter) DeleteForRuns(ctx context.Context, runIDs []string) error {
	if err := carryable("delete for runs", "run ID", runIDs...); err != nil {
		return err
	}
	return d.exec(ctx, "delete_for_runs", func(b []byte) ([]byte, error) {
		return append(appendStrings(append(b, `{"run_ids":`...), runIDs, false), '}'), nil
	})
}

// Prune implements spec.Pruner.
func (p pruner) Prune(ctx context.Context, threadIDs []string, strategy spec.PruneStrategy) error {
	if err := carryable("prune", "thread ID", threadIDs...); err != nil {
		return err
	}
	return p.exec(ctx, "prune", func(b []byte) ([]byte, error) { return appendPruneParams(b, threadIDs, strategy), nil })
}

// NextVersion implements spec.VersionGenerator. It has no way to report an
// error, so when the call fails (the server died, say; the next call with
// an error result will say so) it falls back to spec.NextVersion, which is
// also strictly greater than current.
func (v versioner) NextVersion(current spec.Version) spec.Version {
	if !utf8.ValidString(string(current)) {
		return spec.NextVersion(current)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := v.call(ctx, "next_version", stringParams("current", string(current)))
	m, _ := res.(map[string]any)
	next, ok := m["version"].(string)
	if err != nil || !ok {
		return spec.NextVersion(current)
	}
	return spec.Version(next)
}

// stringParams returns the params {key: s}.
func stringParams(key, s string) func([]byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) {
		b = appendString(append(append(append(b, `{"`...), key...), `":`...), s)
		return append(b, '}'), nil
	}
}

// carryable checks that strings can cross the bridge: JSON carries only
// valid UTF-8, so another string gives an error wrapping ErrNotCarried
// before anything is sent. That is not the saver's refusal (SPEC.md ERR-8
// and ERR-9 are the saver's to judge), which is why it is not
// spec.ErrInvalidConfig. Everything the wire can carry is left for the
// saver to judge.
func carryable(op, what string, ss ...string) error {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return fmt.Errorf("bridge: %s: %s %q is not valid UTF-8: %w", op, what, s, ErrNotCarried)
		}
	}
	return nil
}

func checkConfig(op string, cfg spec.Config) error {
	return carryable(op, "identifier", cfg.ThreadID, cfg.Namespace, cfg.CheckpointID)
}

// checkPut checks every string of a Put but the values and metadata,
// which the value encoder checks.
func checkPut(cfg spec.Config, cp spec.Checkpoint, newVersions spec.Versions) error {
	const op = "put"
	if err := checkConfig(op, cfg); err != nil {
		return err
	}
	if err := carryable(op, "checkpoint ID", cp.ID); err != nil {
		return err
	}
	for ch := range cp.ChannelValues {
		if err := carryable(op, "channel", ch); err != nil {
			return err
		}
	}
	for _, vs := range []spec.Versions{cp.ChannelVersions, newVersions} {
		if err := checkVersions(op, vs); err != nil {
			return err
		}
	}
	for node, vs := range cp.VersionsSeen {
		if err := carryable(op, "node", node); err != nil {
			return err
		}
		if err := checkVersions(op, vs); err != nil {
			return err
		}
	}
	// The timestamp is data: it crosses as $bytes when it is not UTF-8.
	return carryable(op, "updated channel", cp.UpdatedChannels...)
}

func checkVersions(op string, vs spec.Versions) error {
	for ch, v := range vs {
		if err := carryable(op, "channel", ch); err != nil {
			return err
		}
		if err := carryable(op, "version", string(v)); err != nil {
			return err
		}
	}
	return nil
}

// appendPutParams appends the params of a put request.
func appendPutParams(b []byte, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, newVersions spec.Versions) ([]byte, error) {
	b, err := appendCheckpoint(append(b, `{"checkpoint":`...), cp)
	if err != nil {
		return b, err
	}
	b = appendConfig(append(b, `,"config":`...), cfg)
	if b, err = appendObject(append(b, `,"metadata":`...), md); err != nil {
		return b, err
	}
	return append(appendVersions(append(b, `,"new_versions":`...), newVersions), '}'), nil
}

// appendPutWritesParams appends the params of a put_writes request.
func appendPutWritesParams(b []byte, cfg spec.Config, writes []spec.Write, taskID, taskPath string) ([]byte, error) {
	b = appendConfig(append(b, `{"config":`...), cfg)
	b = appendString(append(b, `,"task_id":`...), taskID)
	b = appendString(append(b, `,"task_path":`...), taskPath)
	b = append(b, `,"writes":[`...)
	for i, w := range writes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(append(b, '['), w.Channel), ',')
		var err error
		if b, err = appendValue(b, w.Value); err != nil {
			return b, err
		}
		b = append(b, ']')
	}
	return append(b, "]}"...), nil
}

// appendGetTupleParams appends the params of a get_tuple request.
func appendGetTupleParams(b []byte, cfg spec.Config) []byte {
	return append(appendConfig(append(b, `{"config":`...), cfg), '}')
}

// appendCopyThreadParams appends the params of a copy_thread request.
func appendCopyThreadParams(b []byte, src, dst string) []byte {
	b = appendString(append(b, `{"dst":`...), dst)
	return append(appendString(append(b, `,"src":`...), src), '}')
}

// appendPruneParams appends the params of a prune request.
func appendPruneParams(b []byte, threadIDs []string, strategy spec.PruneStrategy) []byte {
	b = appendString(append(b, `{"strategy":`...), strategyName(strategy))
	return append(appendStrings(append(b, `,"thread_ids":`...), threadIDs, false), '}')
}
