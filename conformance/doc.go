// Package conformance is the checkpointkit conformance suite: a Ginkgo v2
// suite that any [spec.Saver] implementation runs to learn exactly which
// rules of spec/SPEC.md it breaks.
//
// Every spec cites the rule IDs it checks in its text ("[LIST-BEFORE-2]
// cuts globally ...") and carries the Ginkgo label of its capability, so a
// failure names the rule and `-ginkgo.label-filter=list` runs one
// capability. A self-test fails the suite when a rule of SPEC.md is cited by
// no spec or a spec cites an ID SPEC.md does not define.
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
//	var _ = conformance.Describe(conformance.Harness{
//		Name: "mysaver",
//		New:  newIsolatedSaver,
//		Skip: map[string]string{"LIST-FILTER-6": "nested filters land in v2"},
//	})
//
// Run calls Ginkgo's RunSpecs, so call it once per test binary; to run
// several harnesses in one binary, call Describe for each and RunSpecs once.
// Harness.New is called once per spec (and once per random sequence) and
// must return a saver over empty, isolated storage. Harness.Skip maps a rule ID or a label to a reason;
// matching specs are skipped and the reason is shown in the report.
//
// Ginkgo's flags pass through go test: -ginkgo.label-filter=list,
// -ginkgo.junit-report=out.xml, -ginkgo.no-color, -ginkgo.v. The suite adds
// -checkpointkit.seed (or env CHECKPOINTKIT_SEED) and -checkpointkit.sequences
// (or env CHECKPOINTKIT_SEQUENCES, for longer runs) for the random specs, and
// -checkpointkit.report-json=FILE (or env CHECKPOINTKIT_REPORT_JSON) to write
// the report as JSON. Run it under -race: the concurrency specs rely on it.
//
// # Labels
//
// Base capabilities: put (identity, Put, values, namespaces), put_writes,
// get_tuple, list, delete_thread, concurrency, errors (invalid input and
// contexts), model (model-based random sequences), engine (the reference
// engine's scenarios replayed against the saver). Optional capabilities,
// detected by type assertion on the saver: copy_thread ([spec.ThreadCopier]),
// delete_for_runs ([spec.RunDeleter]), prune ([spec.Pruner]), versions
// ([spec.VersionGenerator]). A saver without an optional interface gets
// "not supported" for it, never a failure.
//
// # What is checked
//
// Hand-written specs for every rule; a generated List matrix (thread scope
// × namespace scope × Before, each over every filter × limit) compared with
// a small, obviously correct in-suite model of the contract; model-based
// random sequences of Put, PutWrites, GetTuple, List, DeleteThread and the
// optional operations, mixed with invalid calls that must fail and change
// nothing, over adversarial names (`|`, `:`, `%`, `_`, quotes, unicode, NUL
// in metadata), compared with the model after every step and
// shrunk to a minimal reproduction on failure (the failure message prints
// the seed); the full value model round trip; invalid input and cancelled
// or expired contexts for every method; early break out of List; many
// goroutines writing to distinct threads and to one thread with readers
// checking that no torn checkpoint is ever visible.
//
// # Report and levels
//
// After the suite a ReportAfterSuite node prints, per harness, a table of
// capabilities (status, passed / failed / skipped / not supported counts,
// failing rule IDs, skip reasons) and a level:
//
//   - FULL: every capability, optional ones included, passed.
//   - BASE: every base capability passed; optional ones passed, are not
//     supported or were skipped by the harness; nothing failed.
//   - PARTIAL: something failed or a base capability was skipped or
//     filtered out, but at least one base capability passed.
//   - NONE: no base capability passed.
//
// The same data is available as a [Report] (see [LastReport] and
// [BuildReport]) and, when asked, as JSON of this shape:
//
//	{
//	  "seed": 20261122,
//	  "harnesses": [{
//	    "name": "memory",
//	    "level": "FULL",
//	    "capabilities": [{"name": "list", "optional": false, "status": "passed",
//	                      "passed": 84, "failed": 0, "skipped": 0, "not_supported": 0,
//	                      "failed_rules": ["LIST-BEFORE-2"], "skip_reasons": ["..."]}],
//	    "rules": [{"id": "LIST-BEFORE-2", "status": "failed",
//	               "passed": 70, "failed": 1, "skipped": 0, "not_supported": 0}],
//	    "failed_rules": ["LIST-BEFORE-2"],
//	    "specs": [{"text": "[LIST-BEFORE-2] cuts globally ...", "rules": ["LIST-BEFORE-2"],
//	               "labels": ["list"], "status": "failed", "message": "..."}],
//	    "uncited_rules": ["PUT-99"], "unknown_rules": ["NS-77"]
//	  }]
//	}
//
// Empty "failed_rules", "skip_reasons", "message", "uncited_rules" and
// "unknown_rules" are omitted, except the harness-level "failed_rules",
// which is always present. The model-based spec of label "model" cites
// every rule its random operations exercise, so one divergence marks all of
// them failed; the other specs cite one rule, or a few.
//
// Statuses are passed, failed, skipped (by the harness), not_supported and
// not_run (filtered out). A rule's status is failed when any spec citing it
// failed, so "failed_rules" is exactly the set of rule IDs with a failing
// spec.
//
// # Extending
//
// Other files of this package add spec groups by appending a
// func(*env) to extraGroups from an init func; each group runs inside
// the harness container with a fresh saver per spec, so Skip and the report cover it. The
// reference-engine specs (ENGINE-* rules) plug in that way.
package conformance
