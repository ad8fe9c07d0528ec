// Package mutants holds deliberately broken checkpoint savers that prove the
// conformance suite works.
//
// A conformance suite that passes a correct saver proves little: it might
// pass anything. Each mutant here is the memory adapter with exactly one
// rule of spec/SPEC.md broken, the way real adapters break it (List sorted
// ascending, a Before cut that is inclusive, a filter that treats true as 1,
// regular writes that are last-wins, values stored per channel instead of
// per version, a context that is ignored, a data race, ...). Every mutant
// declares the ID of the rule it breaks.
//
// The package's kill test, TestKillMatrix, runs the conformance suite
// against the unmutated memory adapter, which must pass every spec, and
// against every mutant, each in its own subprocess (Ginkgo runs one suite
// per process; the subprocess is this test binary running TestMutantSuite).
// It fails unless every mutant is caught, and caught by at least one failing
// spec that cites the rule the mutant breaks: a mutant caught only by
// unrelated specs means the spec for its rule is too weak, or cites the
// wrong rule. The model-based random specs cite dozens of rules each, so a
// kill that only they deliver is reported separately ("killed by model").
// A mutant that breaks a strict rule the way a LangGraph saver does (true
// matching 1, ties in any order, whole snapshots, ...) is caught when the
// spec of its rule reports "differs".
//
// To keep the matrix fast (about 15 s, and about a minute with -race, for
// some 120 mutants on a busy two-core machine),
// each mutant first runs only the specs that cite its rule
// (-ginkgo.focus on "[RULE]", model-based specs excluded), up to three times
// for mutants that depend on the scheduler; only a mutant that survives that
// runs the whole suite, which stops at its first focused kill. The flag
// -mutants.full runs every spec against every mutant instead. The kill test
// prints the matrix (mutant, rule, verdict, failing rules, time) with t.Log:
//
//	go test ./conformance/mutants -run TestKillMatrix -v
//	go test -race ./conformance/mutants                # includes the data-race mutant
//	go test ./conformance/mutants -run TestKillMatrix -v -args -mutants='^list-' -mutants.full
//	go test ./conformance/mutants -run TestKillMatrix -args -mutants.matrix=kill.json
//
// To run the suite against one mutant, or several stacked, by hand:
//
//	CHECKPOINTKIT_MUTANT=list-ascending go test ./conformance/mutants -run '^TestMutantSuite$' -v
//	CHECKPOINTKIT_MUTANT=before-inclusive+filter-true-is-one go test ./conformance/mutants -run '^TestMutantSuite$' -v
//
// The data-race mutant has no visible effect; only the race detector sees
// it. Without -race the matrix reports it as "needs -race" instead of
// failing. Under -race, a race counts as a kill when the detector reports it
// during a spec citing the mutant's rule (the suite subprocess marks the
// start and end of every spec on stderr, where the detector writes).
//
// With -mutants.full the kill test also checks the report's root causes:
// every mutant must yield exactly its rule in primary_failed_rules (or, for
// a LangGraph behaviour, none, its rule differing). The rules one mutant
// makes fail besides its own are what conformance/explain.json records;
// -mutants.explain=../explain.json adds a run's observations to it:
//
//	go test ./conformance/mutants -run TestKillMatrix -args -mutants.full -mutants.explain=../explain.json
//	go test ./conformance/mutants -run TestEngineEvidence -v -args -mutants.explain=../explain.json -mutants.evidence-runs=25
//
// TestEngineEvidence runs the engine scenarios and golden traces of the
// suite against every mutant in this process and logs which outcomes each
// changes: the evidence behind the tiers of SPEC.md (conformance/TIERS.md).
// TestRootCauses runs the suite on savers carrying one, two and five
// faults at once, stacked with [Stack], and checks their root causes.
//
// TestMutantsDeviate is the fast, Ginkgo-free companion: it runs each
// mutant's own small Witness scenario against the mutant and the memory
// adapter and requires the observations to differ, so a mutant that has
// silently stopped deviating is noticed without running the suite.
//
// # Adding a mutant
//
// Add one register call to an init function in this package, usually in the
// file for the area it breaks (list.go, filter.go, writes.go, get.go,
// values.go, storage.go, isolation.go, meta.go, caps.go, prune.go, misc.go, delta.go; engine-driven
// mutants go in engine_*.go files):
//
//	register(Mutant{
//		Name:        "before-inclusive",
//		Rule:        "LIST-BEFORE-1",
//		Description: "The Before cut keeps IDs equal to Before.",
//		New: func() spec.Saver {
//			w := wrap() // a Wrapper over a fresh memory saver
//			w.OnList = func(ctx context.Context, o spec.ListOptions) iter.Seq2[*spec.Tuple, error] {
//				return relist(ctx, w.Inner, o, func(in *spec.ListOptions) { in.Before = "" },
//					func(t *spec.Tuple) bool { return o.Before == "" || t.Config.CheckpointID <= o.Before })
//			}
//			return w
//		},
//		Witness: func(ctx context.Context, s spec.Saver) any { ... },
//	})
//
// New runs only through [Mutant.Build] or [Stack], which give wrap the
// saver to wrap: a fresh memory saver, or the mutant below in a stack.
// Break one rule and only that one: prefer transforming inputs and outputs
// in [Wrapper] hooks (OnPut, OnList, MapTuple, ...) or keeping a small side
// store in the mutant, and never edit the memory adapter. Helpers such as
// relist, reorder, withWriteStore, restore and a lossy spec.Serde cover the
// common shapes. Give the mutant a Witness scenario whenever its flaw shows
// up without concurrency, and set NeedsRace only for a flaw that only the
// race detector can see. Then run the kill test: the new mutant must be
// killed by a spec citing its rule, or the suite needs a stronger spec.
package mutants
