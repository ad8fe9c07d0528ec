package conformance

import (
	"context"
	"fmt"
	"iter"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The recorder: every spec's saver is wrapped so that its calls are kept in
// the spec's callLog (see evidence.go), with the same optional interfaces.

// recorder wraps a saver's base methods to record their calls.
type recorder struct {
	s   spec.Saver
	log *callLog
}

func (r *recorder) Put(ctx context.Context, cfg spec.Config, cp spec.Checkpoint, md spec.Metadata, nv spec.Versions) (spec.Config, error) {
	c := r.log.start("Put", fmt.Sprintf("%s, id=%q", showConfig(cfg), cp.ID))
	out, err := r.s.Put(ctx, cfg, cp, md, nv)
	r.log.end(c, err)
	return out, err
}

func (r *recorder) PutWrites(ctx context.Context, cfg spec.Config, ws []spec.Write, task, path string) error {
	c := r.log.start("PutWrites", fmt.Sprintf("%s, %d writes, task=%q", showConfig(cfg), len(ws), task))
	err := r.s.PutWrites(ctx, cfg, ws, task, path)
	r.log.end(c, err)
	return err
}

func (r *recorder) GetTuple(ctx context.Context, cfg spec.Config) (*spec.Tuple, error) {
	c := r.log.start("GetTuple", showConfig(cfg))
	t, err := r.s.GetTuple(ctx, cfg)
	r.log.end(c, err)
	return t, err
}

func (r *recorder) List(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
	inner := r.s.List(ctx, o)
	return func(yield func(*spec.Tuple, error) bool) {
		c := r.log.start("List", showListOptions(o))
		var last error
		defer func() { r.log.end(c, last) }()
		for t, err := range inner {
			if err != nil {
				last = err
			} else {
				r.log.mu.Lock()
				c.n++
				r.log.mu.Unlock()
			}
			if !yield(t, err) {
				return
			}
		}
	}
}

func (r *recorder) DeleteThread(ctx context.Context, th string) error {
	c := r.log.start("DeleteThread", fmt.Sprintf("thread=%q", th))
	err := r.s.DeleteThread(ctx, th)
	r.log.end(c, err)
	return err
}

// copierRec, runsRec and prunerRec record the calls of the optional
// capabilities that change the store.
type (
	copierRec struct {
		c   spec.ThreadCopier
		log *callLog
	}
	runsRec struct {
		d   spec.RunDeleter
		log *callLog
	}
	prunerRec struct {
		p   spec.Pruner
		log *callLog
	}
)

func (r copierRec) CopyThread(ctx context.Context, src, dst string) error {
	c := r.log.start("CopyThread", fmt.Sprintf("src=%q dst=%q", src, dst))
	err := r.c.CopyThread(ctx, src, dst)
	r.log.end(c, err)
	return err
}

func (r runsRec) DeleteForRuns(ctx context.Context, runIDs []string) error {
	c := r.log.start("DeleteForRuns", fmt.Sprintf("runs=%q", runIDs))
	err := r.d.DeleteForRuns(ctx, runIDs)
	r.log.end(c, err)
	return err
}

func (r prunerRec) Prune(ctx context.Context, threads []string, strategy spec.PruneStrategy) error {
	c := r.log.start("Prune", fmt.Sprintf("threads=%q strategy=%v", threads, strategy))
	err := r.p.Prune(ctx, threads, strategy)
	r.log.end(c, err)
	return err
}

// recorded wraps s in a recorder that keeps the same optional interfaces:
// the specs find a saver's capabilities by type assertion.
func recorded(s spec.Saver, log *callLog) spec.Saver {
	r := &recorder{s: s, log: log}
	sc, hc := s.(spec.ThreadCopier)
	sd, hd := s.(spec.RunDeleter)
	sp, hp := s.(spec.Pruner)
	v, hv := s.(spec.VersionGenerator)
	c, d, p := copierRec{sc, log}, runsRec{sd, log}, prunerRec{sp, log}
	if dr, ok := s.(spec.DeltaHistoryReader); ok {
		return recordedDelta(r, deltaRec{r: dr, log: log, walk: r}, [4]bool{hc, hd, hp, hv}, c, d, p, v)
	}
	type (
		C = copierRec
		D = runsRec
		P = prunerRec
		V = spec.VersionGenerator
	)
	switch [4]bool{hc, hd, hp, hv} {
	case [4]bool{}:
		return r
	case [4]bool{false, false, false, true}:
		return struct {
			*recorder
			V
		}{r, v}
	case [4]bool{false, false, true, false}:
		return struct {
			*recorder
			P
		}{r, p}
	case [4]bool{false, false, true, true}:
		return struct {
			*recorder
			P
			V
		}{r, p, v}
	case [4]bool{false, true, false, false}:
		return struct {
			*recorder
			D
		}{r, d}
	case [4]bool{false, true, false, true}:
		return struct {
			*recorder
			D
			V
		}{r, d, v}
	case [4]bool{false, true, true, false}:
		return struct {
			*recorder
			D
			P
		}{r, d, p}
	case [4]bool{false, true, true, true}:
		return struct {
			*recorder
			D
			P
			V
		}{r, d, p, v}
	case [4]bool{true, false, false, false}:
		return struct {
			*recorder
			C
		}{r, c}
	case [4]bool{true, false, false, true}:
		return struct {
			*recorder
			C
			V
		}{r, c, v}
	case [4]bool{true, false, true, false}:
		return struct {
			*recorder
			C
			P
		}{r, c, p}
	case [4]bool{true, false, true, true}:
		return struct {
			*recorder
			C
			P
			V
		}{r, c, p, v}
	case [4]bool{true, true, false, false}:
		return struct {
			*recorder
			C
			D
		}{r, c, d}
	case [4]bool{true, true, false, true}:
		return struct {
			*recorder
			C
			D
			V
		}{r, c, d, v}
	case [4]bool{true, true, true, false}:
		return struct {
			*recorder
			C
			D
			P
		}{r, c, d, p}
	case [4]bool{true, true, true, true}:
		return struct {
			*recorder
			C
			D
			P
			V
		}{r, c, d, p, v}
	}
	return r
}
