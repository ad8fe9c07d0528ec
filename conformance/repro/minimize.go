package repro

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkpointkit/checkpointkit/adapters/memory"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Opener opens a saver over fresh, empty storage and returns it with its
// cleanup func (nil allowed): the shape of conformance.Harness.New.
type Opener func(ctx context.Context) (spec.Saver, func(), error)

// Reference opens checkpointkit's memory adapter, the reference whose
// results a saver's are compared with.
func Reference(context.Context) (spec.Saver, func(), error) { return memory.New(), nil, nil }

// ErrNotReproduced reports that a sequence's replay on a fresh saver gives
// what the reference gives at every call.
var ErrNotReproduced = errors.New("repro: the replay agrees with the reference")

// DefaultBudget bounds the replays one [Minimize] makes.
const DefaultBudget = 400

// Divergence is the first call at which a saver's replay of a sequence
// differs from the reference's.
type Divergence struct {
	// Index is the position of the call in the sequence.
	Index int
	// Method is the call's method (trace.MethodList, ...).
	Method string
	// Outcome reports that one side failed where the other did not, or that
	// only one failed with spec.ErrNotFound; otherwise both succeeded (or
	// both failed alike) and a read returned something else.
	Outcome bool
	// Detail is trace.Replay's description of the difference.
	Detail string
	// Want is the reference's call, with what it returned; Got is the
	// saver's.
	Want, Got trace.Call
}

// Kind names the kind of difference: the method and whether the outcome
// (success, failure, not found) or a returned value differs.
func (d *Divergence) Kind() string {
	if d.Outcome {
		return d.Method + " outcome"
	}
	return d.Method + " result"
}

// Diverge replays the arguments of calls on a fresh reference and on a fresh
// saver and returns the reference's recording (the calls with the results
// the contract expects) and every call at which the saver's result differs,
// in order. Each call is compared on its own (trace.Replayer.Next), so the
// replay goes on past a difference: a read that differs
// changes nothing, and the spec that recorded calls failed at or after its
// last difference, not necessarily its first (a fixture's listing may
// differ as a LangGraph saver is allowed to).
func Diverge(ctx context.Context, saver, ref Opener, calls []trace.Call) ([]trace.Call, []*Divergence, error) {
	want, err := Expected(ctx, ref, calls)
	if err != nil {
		return nil, nil, err
	}
	s, cleanup, err := saver(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("repro: opening the saver: %w", err)
	}
	if cleanup != nil {
		defer cleanup()
	}
	rec := trace.Record(s, trace.WithNextVersion())
	rp := trace.NewReplayer(rec, trace.ReplayOptions{})
	var out []*Divergence
	for i := range want {
		rerr := rp.Next(ctx, want[i])
		if rerr == nil {
			continue
		}
		var re *trace.ReplayError
		if !errors.As(rerr, &re) {
			return nil, nil, rerr
		}
		got := rec.Calls()
		d := &Divergence{Index: i, Method: re.Method, Detail: re.Detail, Want: want[i]}
		if len(got) > 0 {
			d.Got = got[len(got)-1]
		}
		d.Outcome = (d.Want.Err == "") != (d.Got.Err == "") || d.Want.NotFound != d.Got.NotFound
		out = append(out, d)
	}
	return want, out, nil
}

// firstOfKind returns the first divergence of the kind, or nil.
func firstOfKind(ds []*Divergence, kind string) *Divergence {
	for _, d := range ds {
		if d.Kind() == kind {
			return d
		}
	}
	return nil
}

// Expected issues the arguments of calls, in order, on a fresh saver from
// ref and returns its recording: the same calls with the reference's
// results. A List the recorded consumer stopped early stops after as many
// tuples; a NextVersion call mints the reference's own version, which later
// calls use in place of the recorded one.
func Expected(ctx context.Context, ref Opener, calls []trace.Call) ([]trace.Call, error) {
	s, cleanup, err := ref(ctx)
	if err != nil {
		return nil, fmt.Errorf("repro: opening the reference: %w", err)
	}
	if cleanup != nil {
		defer cleanup()
	}
	rec := trace.Record(s, trace.WithNextVersion())
	rp := trace.NewReplayer(rec, trace.ReplayOptions{})
	for i, c := range calls {
		if err := rp.Issue(ctx, c); err != nil {
			return nil, fmt.Errorf("repro: call %d: %w", i, err)
		}
	}
	return rec.Calls(), nil
}

// Repro is a minimal reproduction of a difference from the reference.
type Repro struct {
	// Rule is the rule the failure was found under, if known.
	Rule string
	// Calls is the shrunk sequence as the reference recorded it: the
	// arguments, and the results the contract expects.
	Calls []trace.Call
	// Divergence is where the saver's replay of Calls differs.
	Divergence *Divergence
	// Recorded and Runs are the length of the sequence given to Minimize
	// and the number of replays shrinking took.
	Recorded, Runs int
}

// Minimize shrinks calls, recorded on a saver that failed, to the shortest
// sequence whose replay on a fresh saver differs from the reference's at a
// call of the same kind ([Divergence.Kind]) as the last difference of the
// whole sequence (the one nearest to where the recording spec failed). It
// returns ErrNotReproduced when the whole sequence's replay agrees with the
// reference. budget bounds the replays ([DefaultBudget] when <= 0).
// Versions the recording saver minted twice are told apart first (see
// distinctMints), so that the reference mints one version per mint.
func Minimize(ctx context.Context, saver, ref Opener, calls []trace.Call, budget int) (*Repro, error) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	calls = distinctMints(calls)
	want, ds, err := Diverge(ctx, saver, ref, calls)
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		return nil, ErrNotReproduced
	}
	kind := ds[len(ds)-1].Kind()
	d := firstOfKind(ds, kind)
	r := &Repro{Calls: want[:d.Index+1], Divergence: d, Recorded: len(calls), Runs: 1}
	var ferr error
	minted := mintedVersions(calls)
	Shrink(calls[:d.Index+1], budget, func(cand []trace.Call) ([]trace.Call, bool) {
		if ferr != nil || ctx.Err() != nil || !keepsMints(cand, minted) {
			return nil, false
		}
		r.Runs++
		w, cds, err := Diverge(ctx, saver, ref, cand)
		if err != nil {
			ferr = err
			return nil, false
		}
		cd := firstOfKind(cds, kind)
		if cd == nil {
			return nil, false
		}
		r.Calls, r.Divergence = w[:cd.Index+1], cd
		return cand[:cd.Index+1], true
	})
	if ferr != nil {
		return nil, ferr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r, nil
}
