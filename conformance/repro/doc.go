// Package repro turns a failure the conformance suite found into the
// shortest sequence of saver calls that still shows it, for a bug report.
//
// A failed spec says which rule a saver breaks, but its evidence lives in
// the suite: a maintainer of a Python or JavaScript saver cannot run a
// Ginkgo spec, and a spec often makes dozens of calls to set up a scenario
// of which two or three matter. This package closes that gap in three
// steps:
//
//   - [RecordRules] runs the suite's specs that cite given rules (a Ginkgo
//     focus through [conformance.Describe], the suite's own entry point)
//     with every saver it opens wrapped in refengine/trace's recorder, and
//     keeps the calls of each failed spec, the versions the saver minted
//     included: a replay mints its own on the saver it replays on, so a
//     saver whose versions collide across forks (VERSION-2) shows it;
//   - [Minimize] replays a recorded sequence on a fresh saver and on a
//     fresh reference (checkpointkit's memory adapter), compares the two
//     with trace.Replay's rules (the contract's: timestamps as given,
//     errors by presence and not-found only, pending writes of different
//     tasks in any order), and shrinks the sequence (delta debugging, see
//     [Shrink]) to the shortest one whose first difference from the
//     reference is still at a call of the same kind: the same method,
//     failing where the reference succeeds (or the reverse), or returning
//     something else;
//   - [Repro.Trace] emits the reference's recording of the shrunk sequence
//     as a JSON trace, which trace.Replay issues against the saver's bridge
//     server (ci/cmd/repro -replay), and [Repro.Python] and [Repro.JS]
//     write a short program in the saver's own language that makes the same
//     calls with plain LangGraph types and prints what came back next to
//     what the contract expects.
//
// Only deterministic failures reproduce this way. A spec about races
// (CONC-*) or network faults (FAULT-*) records its concurrent calls in the
// order they completed; replayed one at a time they reproduce a failure
// that needs no race (a read that fails whatever the timing), and
// [Minimize] reports ErrNotReproduced for a sequence whose replay agrees
// with the reference.
package repro
