// Package conformance is the checkpointkit conformance suite: a Ginkgo v2
// suite that any [spec.Saver] runs to learn which rules of spec/SPEC.md it
// breaks, which of them matter to a LangGraph engine, and where to start
// fixing.
//
// Every spec cites the rule IDs it checks in its text ("[LIST-BEFORE-2]
// cuts every namespace listed ...") and carries the Ginkgo label of its
// capability, so a failure names its rule and -ginkgo.label-filter=list
// runs one capability. A self-test fails the suite when a rule of SPEC.md
// is cited by no spec or a spec cites an ID SPEC.md does not define.
//
// # Using it
//
// In a plain Go test package:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Harness{
//			Name: "mysaver",
//			New: func(ctx context.Context) (spec.Saver, func(), error) {
//				s, err := mysaver.Open(ctx, freshDatabase(t))
//				return s, func() { s.Close() }, err
//			},
//		})
//	}
//
// In an existing Ginkgo suite (the suite's RunSpecs runs it):
//
//	var _ = conformance.Describe(conformance.Harness{Name: "mysaver", New: newIsolatedSaver})
//
// Run calls Ginkgo's RunSpecs, so call it once per test binary; to run
// several harnesses in one binary, call Describe for each and RunSpecs once.
// Harness.New is called once per spec (and once per random sequence) and
// must return a saver over empty, isolated storage. The other fields of
// [Harness] describe the saver:
//
//   - Skip maps a rule ID or a label to a reason; matching specs are skipped
//     and the reason is shown in the report.
//   - Variants declares a legitimate design that a strict rule rules out:
//     [WholeSnapshots] for a saver that stores each checkpoint's values
//     whole, as LangGraph's SQLite saver does.
//   - NotSupported declares optional capabilities the saver lacks; it is
//     how a saver that cannot List with an empty ThreadID says so, unless
//     its List fails with an error wrapping errors.ErrUnsupported.
//   - Faults, for a saver that talks to a server over TCP, gives the
//     server's address and a way to make a saver that connects through
//     another address: the suite puts its fault-injecting proxy (package
//     faultproxy) there and runs the faults group (FAULT-* rules), which
//     cuts connections after a swept number of bytes during every call and
//     restarts the connection path; [FaultHarness.Restart] adds a real
//     server restart. The report counts the faults injected, the calls cut
//     and the partial outcomes found.
//
// Ginkgo's flags pass through go test: -ginkgo.label-filter=list,
// -ginkgo.focus='LIST-BEFORE-2', -ginkgo.junit-report=out.xml. The suite
// adds -checkpointkit.seed (or CHECKPOINTKIT_SEED) and
// -checkpointkit.sequences (or CHECKPOINTKIT_SEQUENCES) for the random
// specs (without a seed, each run draws its own and prints it with a
// command that replays the run), and -checkpointkit.report-json=FILE (or CHECKPOINTKIT_REPORT_JSON)
// to write the report as JSON. Run it under -race: the concurrency specs
// rely on it.
//
// # Capabilities
//
// Base capabilities: put (identity, Put, values, namespaces), put_writes,
// get_tuple, list, delete_thread, concurrency, errors (invalid input and
// contexts), model (model-based random sequences) and engine (the reference
// engine's scenarios and golden traces replayed against the saver).
// Optional capabilities: list_threads (List with an empty ThreadID),
// copy_thread ([spec.ThreadCopier]), delete_for_runs ([spec.RunDeleter]),
// prune ([spec.Pruner]), versions ([spec.VersionGenerator]) and
// delta_history ([spec.DeltaHistoryReader]; a first call failing with
// errors.ErrUnsupported, as a bridged saver's does, also means not
// supported), the last five detected by type assertion, and faults
// (network faults, for harnesses with a [FaultHarness]; a harness
// capability, so a saver without a network stays at FULL without it). A
// saver without one gets "not supported", never a failure. The delta
// maintenance rules (DELTA-11 to DELTA-13) run under copy_thread, prune and
// delete_for_runs, reading histories through [spec.ReadDeltaHistory], so a
// saver without the reader is judged on them too. Only the specs of list_threads list across
// threads: every other check, "nothing was stored" included, reads one
// thread at a time.
//
// # Two tiers, two verdicts
//
// Every rule of SPEC.md is tagged core or strict, and the report gives a
// level for each: "LangGraph core: FULL   strict: PARTIAL".
//
//   - core rules are those whose breakage changes what a LangGraph engine
//     does or shows: state, history, resume, replay, interrupts. At core
//     FULL a saver can back LangGraph-style graphs.
//   - strict rules are checkpointkit's own choices where LangGraph's savers
//     disagree or LangGraph is silent: inputs the engine never produces,
//     details it never reads, Go API conventions, capabilities it does not
//     call. checkpointkit's adapters keep them so that every backend
//     behaves alike.
//
// Levels, per tier and overall (the lower of the two): FULL when every
// capability passed; BASE when every base capability passed and nothing
// failed, optional capabilities possibly unsupported or skipped; PARTIAL
// when something failed or a base capability was skipped; NONE when no base
// capability passed. Where a saver follows a documented LangGraph behaviour
// instead of a strict rule (true matching 1 in filters, pending writes in
// insertion order, whole snapshots, ...), the spec reports "differs" with
// that behaviour's name instead of failing; a differing rule keeps the tier
// at BASE, never below. SPEC.md lists these behaviours and how each tag
// was decided; TIERS.md in this directory has the evidence rule by rule.
//
// # Root causes
//
// One fault makes many specs fail: the model-based sequences, the
// generated List matrix and the engine scenarios (the broad specs) check
// dozens of rules each, and a focused spec can fail because a rule its
// scenario relies on is broken. The report therefore separates the rules a
// maintainer must fix from their consequences:
//
//   - A focused spec declares as prerequisites the rules its fixture relies
//     on besides its own (LIST-LIMIT-1's spec filters, so it needs
//     LIST-FILTER-1). When a prerequisite failed, the spec is "not judged:
//     needs X" and accuses nothing; two rules that need each other are both
//     judged. A self-test records every focused spec's List calls on the
//     memory adapter and fails when one uses an unknown Before, a filter, a
//     cross-thread list or a negative limit without citing or declaring the
//     rule of that behaviour.
//   - A rule whose focused spec failed is a root cause unless another failed
//     rule explains it: explain.json lists, per rule, the rules whose mutants
//     (package mutants) make its specs fail, and how they fail (the failing
//     call's operation and observation); the explanation holds only when
//     this run's failures look the same, or the same as the explaining
//     rule's own. A failure explained both ways explains nothing. A missed
//     explanation is preferred to a wrong one.
//   - Every spec's saver is wrapped in a recorder of its calls: a failed
//     spec's evidence is its failing call (the latest call whose error the
//     failure quotes, else the latest call), what it returned, and the
//     expected and actual values of the failing assertion. The report prints
//     it under each root cause, with the spec's prerequisites.
//   - A spec in which the transport between the suite and the saver could
//     not carry a call (an error for which errors.As finds a [NotCarried]
//     reporting true, such as package bridge's ErrNotCarried) is "not
//     judged over this transport", neither passed nor failed.
//   - A failed broad spec adds a root cause only when no failed or
//     differing rule explains it: an engine scenario adds its ENGINE-* rule,
//     the List matrix the rule its failing cases point at, the model the
//     rule its shrunk reproduction points at.
//
// The broad specs look for the faults the focused specs miss, so they do not
// stop at a difference a LangGraph saver has on purpose: where a sequence or
// a List matrix case meets a recognised LangGraph behaviour (WRITES-5's
// batches, PUT-11's re-puts, true matching 1, list(None), whole snapshots),
// the model adopts it and judges the rest; they compare
// numbers by value, pending writes in any order, ties between equal IDs
// sorted, and accept a listing grouped by thread and namespace; they filter
// on plain values only; an invalid call that fails need only leave the
// store unchanged, and one the saver accepts ends the sequence unjudged.
// Number types, the sign of zero, write order, tie order, interleaving,
// nested or nil filter values and the errors of invalid calls are checked
// by the focused specs of their strict rules.
//
// The JSON report's "primary_failed_rules" are the root causes, each named
// once. The printed report starts with them (rule, tier, first failing
// spec, message), then the differing strict rules, then the rules that
// failed only as a consequence (status "explained"), then the capability
// table. Fix the root causes first: a rule that only failed as a
// consequence may pass once they are fixed, or show up as a root cause.
//
// # What is checked
//
// Focused specs per rule; the List matrix (thread scope × namespace scope
// × Before, each over every filter × limit) against a small, obviously
// correct model of the contract; model-based random sequences of every
// operation, invalid calls included, over adversarial names, compared with
// the model after every step and shrunk to a minimal reproduction on
// failure; the whole value model, self-containing and too deep values
// included; invalid input and odd bytes; cancelled, expired and live
// contexts for every method, and contexts that cancel themselves at every
// point of a call (a context counting its uses, swept until the call no
// longer notices); early breaks out of List, with goroutine-leak checks;
// concurrent writers and readers, and maintenance racing writes on one
// thread; the reference engine's scenarios and golden traces.
// Failure messages show Go types wherever they differ (int64(2) against
// float64(2)), as go-cmp diffs; the JSON report keeps each message up to a
// few KB.
//
// # Wrapping an existing saver
//
// A store designed without checkpointkit in mind has typed fields where
// the contract has strings and maps. Map them so that every value comes
// back exactly as it was put; keep the original whenever the typed form
// cannot give it back byte for byte. The worked example in the wrapexample
// directory does all of the following and reaches core FULL.
//
//   - Checkpoint.V is an int: store it as is.
//   - Checkpoint.TS is a string the engine sets to the checkpoint's creation
//     time. A time.Time column is fine for queries and retention, but keep
//     the layout it was parsed with, or the string itself when no layout
//     reproduces it: "…05.123450Z" must not come back as "…05.12345Z". Never
//     order by it: "latest" is the greatest checkpoint ID, compared
//     byte-wise (ID-4, GET-2), and the fixtures' timestamps grow with their
//     IDs only so that a time-ordered saver is judged on the other rules.
//   - ChannelVersions and VersionsSeen hold strings. An int64 version column
//     works when the saver mints its own versions ([spec.VersionGenerator])
//     as decimal integers; keep any version that is not a canonical integer
//     in a string column beside it. Mint them from one counter per saver, not
//     per thread: two forks of a thread must not get the same version
//     (VERSION-2).
//   - Metadata is free-form JSON. Map the keys the engine writes (source,
//     step, parents) to typed fields only when the value has exactly that
//     type (step an int64, parents a map of strings), and keep every other
//     key, and a known key of another type, in a free-form column. The
//     filter compares values as JSON values, whole maps and lists included.
//   - Channel values: store either one value per (channel, version), reading
//     a checkpoint's channels through its ChannelVersions, or the whole
//     ChannelValues of each checkpoint, and declare [WholeSnapshots]. The
//     engine always passes complete ChannelValues, so both read back the
//     same state.
//   - List with an empty ThreadID (every thread) is optional: return an
//     error wrapping errors.ErrUnsupported, or list NotSupported:
//     []string{"list_threads"}.
//
// # Extending
//
// Other files of this package add spec groups by appending a func(*env) to
// extraGroups from an init func; each group runs inside the harness
// container with a fresh saver per spec, so Skip and the report cover it.
// A spec that checks many rules at once registers with checkBroad and a
// group name, so that root causes can be told from consequences. The
// reference-engine specs (ENGINE-* rules) plug in that way.
package conformance
