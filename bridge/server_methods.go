package bridge

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/checkpointkit/checkpointkit/spec"
)

// handle runs one request and returns its encoded result. A list streams
// its items itself and returns "null".
func (s *server) handle(req *request, m *message) ([]byte, error) {
	p := params{method: m.method, m: m.params}
	switch m.method {
	case "hello":
		return s.hello(req)
	case "open":
		return s.openSaver(req)
	case "close":
		return null, s.closeSaver(m.saver)
	}
	sv, err := s.saverFor(m.saver)
	if err != nil {
		return nil, err
	}
	ctx := req.ctx
	switch m.method {
	case "put":
		cfg, cp, md, nv := p.config("config"), p.checkpoint(), p.values("metadata"), p.versions("new_versions")
		if p.err != nil {
			return nil, p.err
		}
		out, err := sv.Put(ctx, cfg, cp, md, nv)
		if err != nil {
			return nil, err
		}
		return append(appendConfig([]byte(`{"config":`), out), '}'), nil
	case "put_writes":
		cfg, writes, task, path := p.config("config"), p.writes(), p.string("task_id", true), p.string("task_path", false)
		if p.err != nil {
			return nil, p.err
		}
		return null, sv.PutWrites(ctx, cfg, writes, task, path)
	case "get_tuple":
		cfg := p.config("config")
		if p.err != nil {
			return nil, p.err
		}
		t, err := sv.GetTuple(ctx, cfg)
		if errors.Is(err, spec.ErrNotFound) || (err == nil && t == nil) {
			return null, nil // "null when there is none"
		}
		if err != nil {
			return nil, err
		}
		return appendTuple(nil, t)
	case "list":
		opts := spec.ListOptions{
			ThreadID: p.string("thread_id", false), Namespace: p.string("checkpoint_ns", false),
			AllNamespaces: p.bool("all_namespaces"), CheckpointID: p.string("checkpoint_id", false),
			Filter: p.values("filter"), Before: p.string("before", false), Limit: int(p.int("limit")),
		}
		credit := int64(-1) // absent: no flow control
		if p.m["credit"] != nil {
			credit = p.int("credit")
		}
		if p.err != nil {
			return nil, p.err
		}
		return null, s.list(req, sv, opts, credit)
	case "delete_thread":
		thread := p.string("thread_id", true)
		if p.err != nil {
			return nil, p.err
		}
		return null, sv.DeleteThread(ctx, thread)
	case "copy_thread":
		c, ok := sv.(spec.ThreadCopier)
		if !ok {
			return nil, unsupported(m.method, "spec.ThreadCopier")
		}
		src, dst := p.string("src", true), p.string("dst", true)
		if p.err != nil {
			return nil, p.err
		}
		return null, c.CopyThread(ctx, src, dst)
	case "delete_for_runs":
		d, ok := sv.(spec.RunDeleter)
		if !ok {
			return nil, unsupported(m.method, "spec.RunDeleter")
		}
		runs := p.strings("run_ids")
		if p.err != nil {
			return nil, p.err
		}
		return null, d.DeleteForRuns(ctx, runs)
	case "prune":
		pr, ok := sv.(spec.Pruner)
		if !ok {
			return nil, unsupported(m.method, "spec.Pruner")
		}
		threads, name := p.strings("thread_ids"), p.string("strategy", true)
		if p.err != nil {
			return nil, p.err
		}
		strategy, err := parseStrategy(name)
		if err != nil {
			return nil, err
		}
		return null, pr.Prune(ctx, threads, strategy)
	case "delta_history":
		return deltaHistory(ctx, sv, &p)
	case "next_version":
		v, ok := sv.(spec.VersionGenerator)
		if !ok {
			return nil, unsupported(m.method, "spec.VersionGenerator")
		}
		current := p.string("current", true)
		if p.err != nil {
			return nil, p.err
		}
		next := v.NextVersion(spec.Version(current))
		return append(appendString([]byte(`{"version":`), string(next)), '}'), nil
	}
	return nil, badRequest("unknown method %q", m.method)
}

// null is the result of the methods that return nothing.
var null = []byte("null")

// params reads the params of a request; the first error sticks, so a
// method reads every member and checks p.err once.
type params struct {
	method string
	m      map[string]any
	err    error
}

func (p *params) fail(err error) {
	if p.err == nil {
		p.err = fmt.Errorf("%s: %w", p.method, err)
	}
}

// get returns member key; a required one must be present and not null.
func (p *params) get(key string, required bool) any {
	v := p.m[key]
	if v == nil && required {
		p.fail(badRequest("params.%s is required", key))
	}
	return v
}

func (p *params) string(key string, required bool) string {
	s, err := stringOf(p.get(key, required), "params."+key)
	if err != nil {
		p.fail(err)
	}
	return s
}

func (p *params) int(key string) int64 {
	i, err := intOf(p.get(key, false), "params."+key)
	if err != nil {
		p.fail(err)
	}
	return i
}

func (p *params) bool(key string) bool {
	v := p.get(key, false)
	b, ok := v.(bool)
	if v != nil && !ok {
		p.fail(badRequest("params.%s must be a boolean, not %s", key, kindOf(v)))
	}
	return b
}

func (p *params) strings(key string) []string {
	ss, err := stringsOf(p.get(key, true), "params."+key)
	if err != nil {
		p.fail(err)
	}
	return ss
}

func (p *params) config(key string) spec.Config {
	c, err := configOf(p.get(key, true), "params."+key)
	if err != nil {
		p.fail(err)
	}
	return c
}

func (p *params) values(key string) spec.Metadata {
	m, err := valuesOf(p.get(key, false), "params."+key)
	if err != nil {
		p.fail(err)
	}
	return m
}

func (p *params) versions(key string) spec.Versions {
	vs, err := versionsOf(p.get(key, false), "params."+key)
	if err != nil {
		p.fail(err)
	}
	return vs
}

func (p *params) checkpoint() spec.Checkpoint {
	cp, err := checkpointOf(p.get("checkpoint", true))
	if err != nil {
		p.fail(err)
	}
	return cp
}

func (p *params) writes() []spec.Write {
	v := p.get("writes", true)
	list, ok := v.([]any)
	if v != nil && !ok {
		p.fail(badRequest("params.writes must be an array, not %s", kindOf(v)))
	}
	out := make([]spec.Write, len(list))
	for i, e := range list {
		parts, err := partsOf(e, "write [channel, value]", 2)
		if err != nil {
			p.fail(err)
			return nil
		}
		out[i] = spec.Write{Channel: parts[0].(string), Value: parts[1]}
	}
	return out
}

func unsupported(method, iface string) error {
	return fmt.Errorf("bridge: %s: the saver does not implement %s: %w", method, iface, errors.ErrUnsupported)
}

// Prune strategy names on the wire.
var strategyNames = map[spec.PruneStrategy]string{
	spec.KeepLatest: "keep_latest",
	spec.DeleteAll:  "delete_all",
}

func strategyName(s spec.PruneStrategy) string {
	if n, ok := strategyNames[s]; ok {
		return n
	}
	return "strategy_" + strconv.Itoa(int(s)) // unknown: the server says invalid_argument
}

func parseStrategy(name string) (spec.PruneStrategy, error) {
	for s, n := range strategyNames {
		if n == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("prune: unknown strategy %q: %w", name, spec.ErrInvalidArgument)
}

// hello answers the handshake. The capabilities are those of the savers
// the Opener makes, learnt from one opened now and kept for the first
// open request.
func (s *server) hello(req *request) ([]byte, error) {
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	if caps == nil {
		sv, err := s.open(req.ctx)
		if err != nil {
			return nil, fmt.Errorf("bridge: hello: opening a saver to learn its capabilities: %w", err)
		}
		s.mu.Lock()
		if s.caps == nil {
			s.caps = capabilitiesOf(sv)
			if !s.final {
				s.spare, sv = sv, nil
			}
		}
		caps = s.caps
		s.mu.Unlock()
		if sv != nil {
			_ = closeSaver(sv)
		}
	}
	return appendHello(s.opts.name, caps), nil
}

// appendHello returns the result of hello, members in key order.
func appendHello(name string, caps []string) []byte {
	b := appendStrings([]byte(`{"capabilities":`), caps, false)
	b = appendString(append(b, `,"name":`...), name)
	return append(b, `,"protocol":"`+protocolName+`","version":`+strconv.Itoa(protocolVersion)+`}`...)
}

// openSaver answers open with a fresh saver.
func (s *server) openSaver(req *request) ([]byte, error) {
	s.mu.Lock()
	sv := s.spare
	s.spare = nil
	s.mu.Unlock()
	if sv == nil {
		var err error
		if sv, err = s.open(req.ctx); err != nil {
			return nil, fmt.Errorf("bridge: open: %w", err)
		}
		if sv == nil {
			return nil, errors.New("bridge: open: the Opener returned a nil saver")
		}
	}
	s.mu.Lock()
	if s.final || req.ctx.Err() != nil {
		s.mu.Unlock()
		_ = closeSaver(sv)
		err := req.ctx.Err()
		if err == nil {
			err = errors.New("the session is ending")
		}
		return nil, fmt.Errorf("bridge: open: %w", err)
	}
	if s.caps == nil {
		s.caps = capabilitiesOf(sv)
	}
	id := s.newSaverID()
	s.savers[id] = sv
	s.mu.Unlock()
	return append(appendString([]byte(`{"saver":`), id), '}'), nil
}

// closeSaver answers close: the saver is forgotten, then closed.
func (s *server) closeSaver(id string) error {
	s.mu.Lock()
	sv := s.savers[id]
	delete(s.savers, id)
	s.mu.Unlock()
	if sv == nil {
		return badRequest("close: unknown saver %q", id)
	}
	if err := closeSaver(sv); err != nil {
		return fmt.Errorf("bridge: close saver %s: %w", id, err)
	}
	return nil
}

// list streams the tuples of a list request as items, each after the
// client has given credit for it; a negative credit (none in the request)
// is no limit.
func (s *server) list(req *request, sv spec.Saver, opts spec.ListOptions, credit int64) error {
	ctx := req.ctx
	unlimited := credit < 0
	req.credit.Store(max(credit, 0))
	for t, err := range sv.List(ctx, opts) {
		if err != nil {
			return err
		}
		if t == nil {
			return errors.New("bridge: list: the saver yielded a nil tuple without an error")
		}
		raw, err := appendTuple(nil, t)
		if err != nil {
			return fmt.Errorf("bridge: list: thread %q checkpoint %q: %w", t.Config.ThreadID, t.Config.CheckpointID, err)
		}
		if !unlimited {
			if err := waitCredit(ctx, req); err != nil {
				return err
			}
		}
		if !s.sendItem(req, raw) {
			return ctx.Err()
		}
	}
	return ctx.Err()
}

// waitCredit takes one unit of credit, waiting for the client to grant it.
func waitCredit(ctx context.Context, req *request) error {
	for req.credit.Load() <= 0 {
		select {
		case <-req.creditWake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	req.credit.Add(-1)
	return nil
}
