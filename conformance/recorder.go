package conformance

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The recorder: every spec's saver is wrapped so that its calls are kept in
// the spec's callLog (see evidence.go), with the same optional interfaces.

//go:generate go run ./internal/genrecorder

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

// deltaRec records the calls of a [spec.DeltaHistoryReader]. With walk
// set, a call the reader answers with errors.ErrUnsupported (how a bridged
// saver whose far side lacks the method answers) is served by
// spec.WalkDeltaHistory over walk instead, as LangGraph's engines serve a
// saver without the method: the engine and trace specs then see what an
// engine sees. The DELTA specs judge the reader itself, without the
// fallback (see deltaRaw).
type deltaRec struct {
	r    spec.DeltaHistoryReader
	log  *callLog
	walk spec.Saver
}

func (r deltaRec) DeltaHistory(ctx context.Context, cfg spec.Config, channels []string) (map[string]spec.DeltaHistory, error) {
	c := r.log.start("DeltaHistory", fmt.Sprintf("%s, channels=%q", showConfig(cfg), channels))
	out, err := r.r.DeltaHistory(ctx, cfg, channels)
	r.log.end(c, err)
	if r.walk != nil && errors.Is(err, errors.ErrUnsupported) {
		return spec.WalkDeltaHistory(ctx, r.walk, cfg, channels)
	}
	return out, err
}

// deltaRaw returns the recorded reader without the fallback.
func (r deltaRec) deltaRaw() deltaRec {
	r.walk = nil
	return r
}

// recorded wraps s in a recorder that keeps the same optional interfaces:
// the specs find a saver's capabilities by type assertion.
func recorded(s spec.Saver, log *callLog) spec.Saver {
	r := &recorder{s: s, log: log}
	var has capSet
	sc, ok := s.(spec.ThreadCopier)
	if ok {
		has |= capCopier
	}
	sd, ok := s.(spec.RunDeleter)
	if ok {
		has |= capRuns
	}
	sp, ok := s.(spec.Pruner)
	if ok {
		has |= capPruner
	}
	v, ok := s.(spec.VersionGenerator)
	if ok {
		has |= capVersions
	}
	dr, ok := s.(spec.DeltaHistoryReader)
	if ok {
		has |= capDelta
	}
	return withCapabilities(r, has, copierRec{sc, log}, runsRec{sd, log}, prunerRec{sp, log}, v, deltaRec{r: dr, log: log, walk: r})
}
