package conformance

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkpointkit/checkpointkit/spec"
)

// The recorder of a saver with delta history: the same wrappers as
// recorded builds, each with the recorded DeltaHistory method besides.

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

// recordedDelta is recorded for a saver that is a
// [spec.DeltaHistoryReader]: r records its base methods, the flags say
// which other optional interfaces it has, and c, d, p and v record them.
func recordedDelta(r *recorder, dr deltaRec, has [4]bool, c copierRec, d runsRec, p prunerRec, v spec.VersionGenerator) spec.Saver {
	type (
		C = copierRec
		D = runsRec
		P = prunerRec
		V = spec.VersionGenerator
		R = deltaRec
	)
	switch has {
	case [4]bool{false, false, false, true}:
		return struct {
			*recorder
			V
			R
		}{r, v, dr}
	case [4]bool{false, false, true, false}:
		return struct {
			*recorder
			P
			R
		}{r, p, dr}
	case [4]bool{false, false, true, true}:
		return struct {
			*recorder
			P
			V
			R
		}{r, p, v, dr}
	case [4]bool{false, true, false, false}:
		return struct {
			*recorder
			D
			R
		}{r, d, dr}
	case [4]bool{false, true, false, true}:
		return struct {
			*recorder
			D
			V
			R
		}{r, d, v, dr}
	case [4]bool{false, true, true, false}:
		return struct {
			*recorder
			D
			P
			R
		}{r, d, p, dr}
	case [4]bool{false, true, true, true}:
		return struct {
			*recorder
			D
			P
			V
			R
		}{r, d, p, v, dr}
	case [4]bool{true, false, false, false}:
		return struct {
			*recorder
			C
			R
		}{r, c, dr}
	case [4]bool{true, false, false, true}:
		return struct {
			*recorder
			C
			V
			R
		}{r, c, v, dr}
	case [4]bool{true, false, true, false}:
		return struct {
			*recorder
			C
			P
			R
		}{r, c, p, dr}
	case [4]bool{true, false, true, true}:
		return struct {
			*recorder
			C
			P
			V
			R
		}{r, c, p, v, dr}
	case [4]bool{true, true, false, false}:
		return struct {
			*recorder
			C
			D
			R
		}{r, c, d, dr}
	case [4]bool{true, true, false, true}:
		return struct {
			*recorder
			C
			D
			V
			R
		}{r, c, d, v, dr}
	case [4]bool{true, true, true, false}:
		return struct {
			*recorder
			C
			D
			P
			R
		}{r, c, d, p, dr}
	case [4]bool{true, true, true, true}:
		return struct {
			*recorder
			C
			D
			P
			V
			R
		}{r, c, d, p, v, dr}
	}
	// No other optional interface.
	return struct {
		*recorder
		R
	}{r, dr}
}
