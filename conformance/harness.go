package conformance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/spec"
)

// Harness plugs a saver implementation into the suite.
type Harness struct {
	// Name identifies the saver in spec texts and in the report.
	Name string
	// New returns a saver over empty, isolated storage and a cleanup func
	// (nil allowed). The suite calls it once per spec, and once per
	// sequence (including shrinking replays) in the model-based specs.
	New func(ctx context.Context) (spec.Saver, func(), error)
	// Skip maps a rule ID (e.g. "LIST-FILTER-3") or a capability label (e.g.
	// "prune") to the reason it is skipped; the reason appears in the report.
	Skip map[string]string
	// Variants declares legitimate designs the saver follows where a strict
	// rule of SPEC.md chooses otherwise. The specs of those rules report
	// "differs" (they do so for a detected variant too), and the
	// model-based specs expect the variant, so they keep finding other
	// faults.
	Variants []Variant
	// NotSupported lists optional capability labels the saver declares it
	// lacks. Capabilities behind an interface are detected by type
	// assertion anyway; use it for "list_threads" when List with an empty
	// ThreadID does not fail with errors.ErrUnsupported.
	NotSupported []string
	// Faults, when set, routes the saver's connections through the
	// suite's fault-injecting proxy and enables the optional faults
	// capability (FAULT-* rules); see [FaultHarness].
	Faults *FaultHarness
}

// Variant is a legitimate saver design that a strict rule of SPEC.md
// rules out.
type Variant string

// Variants a harness can declare.
const (
	// WholeSnapshots: Put stores cp.ChannelValues as the checkpoint's
	// values and ignores newVersions, as LangGraph's SQLite and MongoDB
	// savers do; a checkpoint reads back the values it was put with. It
	// replaces PUT-5 and PUT-6; every other rule about values holds for
	// the complete ChannelValues an engine passes.
	WholeSnapshots Variant = "whole-snapshots"
)

// has reports whether the harness declares variant v.
func (h Harness) has(v Variant) bool { return slices.Contains(h.Variants, v) }

// extraGroups are further spec groups registered by other files of this
// package (the reference-engine specs append to it from an init func). Each
// is called inside the harness container, so the harness's Skip map and the
// report cover its specs too; e.s is the fresh saver of the running spec.
var extraGroups []func(e *env)

// specTimeout bounds every spec, so that a saver that deadlocks (for example
// one that never releases a lock after an early break out of List) fails a
// spec instead of hanging the suite.
const specTimeout = 60 * time.Second

var (
	registryMu sync.Mutex
	registered []string // harness names, in registration order
	reportOnce sync.Once
)

// containerText is the text of the top-level container of a harness.
func containerText(name string) string { return "checkpointkit conformance: " + name }

// Describe registers the whole suite for h as a Ginkgo container and
// returns true, so it can be used as `var _ = conformance.Describe(h)` in an
// existing Ginkgo suite. It also registers, once per process, the
// ReportAfterSuite node that prints the capability report and writes it as
// JSON when CHECKPOINTKIT_REPORT_JSON (or -checkpointkit.report-json) is set.
// Several harnesses may be registered in one suite; their names must differ.
// Describe panics on a harness without New or with a name already used.
func Describe(h Harness) bool {
	if h.Name == "" {
		h.Name = "saver"
	}
	if h.New == nil {
		panic("conformance: Harness " + h.Name + " has no New func")
	}
	registryMu.Lock()
	if slices.Contains(registered, h.Name) {
		registryMu.Unlock()
		panic("conformance: two harnesses are named " + h.Name + "; names must differ")
	}
	registered = append(registered, h.Name)
	registryMu.Unlock()
	reportOnce.Do(func() {
		g.ReportAfterSuite("checkpointkit conformance report", afterSuite)
	})

	return g.Describe(containerText(h.Name), func() {
		e := &env{h: h}
		g.BeforeEach(func(ctx g.SpecContext) {
			e.s, e.log = nil, nil
			e.skipIfAsked()
			s, cleanup, err := h.New(ctx)
			Expect(err).NotTo(HaveOccurred(), "Harness.New")
			Expect(s).NotTo(BeNil(), "Harness.New returned a nil saver")
			if cleanup != nil {
				g.DeferCleanup(cleanup)
			}
			e.log = &callLog{}
			e.s = recorded(s, e.log)
			activeLog.Store(e.log)
		}, g.NodeTimeout(specTimeout))
		g.AfterEach(func() {
			activeLog.Store(nil)
			recordEvidence(e.log)
			recordNotCarried(e.log)
		})

		putSpecs(e)
		valueSpecs(e)
		nsSpecs(e)
		writesSpecs(e)
		getSpecs(e)
		listSpecs(e)
		listThreadsSpecs(e)
		listTableSpecs(e)
		deleteSpecs(e)
		copySpecs(e)
		runsSpecs(e)
		pruneSpecs(e)
		versionSpecs(e)
		errorSpecs(e)
		ctxSpecs(e)
		concSpecs(e)
		modelSpecs(e)
		for _, group := range extraGroups {
			group(e)
		}
	})
}

// Run registers the suite for h and runs it with Ginkgo inside a plain Go
// test. Ginkgo's flags work through go test, e.g.
// -ginkgo.label-filter=list or -ginkgo.junit-report=out.xml.
func Run(t *testing.T, h Harness) {
	t.Helper()
	Describe(h)
	RegisterFailHandler(Fail)
	g.RunSpecs(t, "checkpointkit conformance: "+h.Name)
}

// activeLog is the call log of the running spec (specs of one process run
// one at a time), for Fail.
var activeLog atomic.Pointer[callLog]

// notCarriedSkip starts the skip message of a spec that failed after the
// transport could not carry one of its calls.
const notCarriedSkip = "not carried: "

// Fail is the suite's Gomega fail handler, which Run registers; a Ginkgo
// suite that calls Describe itself may register it too. It is Ginkgo's Fail,
// except in a spec where the transport between the suite and the saver
// could not carry a call (see [NotCarried]): that spec judged nothing about
// the saver, so it ends skipped, and the report reads it as not judged over
// this transport instead of failing the run.
func Fail(message string, callerSkip ...int) {
	skip := 1
	if len(callerSkip) > 0 {
		skip += callerSkip[0]
	}
	if l := activeLog.Load(); l != nil && l.carriedNot() {
		g.Skip(notCarriedSkip+message, skip)
	}
	g.Fail(message, skip)
}

// env is the per-harness state shared by the specs of one container.
type env struct {
	h   Harness
	s   spec.Saver // fresh for every spec, wrapped in a recorder
	log *callLog   // the calls made to s
}

// skipIfAsked skips the current spec when the harness's Skip map names one
// of its rule IDs or labels.
func (e *env) skipIfAsked() {
	if len(e.h.Skip) == 0 {
		return
	}
	r := g.CurrentSpecReport()
	keys := append(ruleIDsIn(r.LeafNodeText), r.Labels()...)
	for _, k := range keys {
		if reason, ok := e.h.Skip[k]; ok {
			g.Skip(skipPrefix + k + ": " + reason)
		}
	}
}

// Messages that let the report tell an explicit skip from a missing optional
// capability and from a saver that follows a LangGraph behaviour.
const (
	skipPrefix         = "skipped by harness: "
	notSupportedPrefix = "not supported: "
	differsPrefix      = "differs: "
)

// differ ends the current spec with status differs: instead of the strict
// rule the spec checks, the saver follows behaviour, as a LangGraph saver
// does.
func differ(behaviour string) {
	g.Skip(differsPrefix + behaviour)
}

// check registers one spec. text must cite its rule IDs ("[PUT-1] ...");
// labels carries its capability label. The body gets the spec's context,
// which is cancelled when the spec times out.
func check(text string, labels g.Labels, body func(ctx context.Context)) bool {
	return g.It(text, labels, g.SpecTimeout(specTimeout), func(ctx g.SpecContext) {
		body(ctx)
	})
}

// notSupported skips the current spec because the saver lacks an optional
// capability.
func notSupported(why string) {
	g.Skip(notSupportedPrefix + why)
}

// lListThreadsName is the label of the optional capability of listing
// across threads.
const lListThreadsName = "list_threads"

// listThreads skips the current spec as not supported unless the saver
// can List with an empty ThreadID.
func (e *env) listThreads(ctx context.Context) {
	if ok, why := e.canListThreads(ctx); !ok {
		notSupported(why)
	}
}

// canListThreads reports whether the saver lists across threads: the
// harness does not declare otherwise, and a List with an empty ThreadID
// does not fail with errors.ErrUnsupported.
func (e *env) canListThreads(ctx context.Context) (bool, string) {
	if slices.Contains(e.h.NotSupported, lListThreadsName) {
		return false, "the harness declares that List with an empty ThreadID is not supported"
	}
	if err := listErr(ctx, e.s, spec.ListOptions{}); errors.Is(err, errors.ErrUnsupported) {
		return false, "List with an empty ThreadID fails with errors.ErrUnsupported: " + err.Error()
	}
	return true, ""
}

func (e *env) copier() spec.ThreadCopier {
	c, ok := e.s.(spec.ThreadCopier)
	if !ok {
		notSupported("saver does not implement spec.ThreadCopier")
	}
	return c
}

func (e *env) runDeleter() spec.RunDeleter {
	d, ok := e.s.(spec.RunDeleter)
	if !ok {
		notSupported("saver does not implement spec.RunDeleter")
	}
	return d
}

func (e *env) pruner() spec.Pruner {
	p, ok := e.s.(spec.Pruner)
	if !ok {
		notSupported("saver does not implement spec.Pruner")
	}
	return p
}

func (e *env) versioner() spec.VersionGenerator {
	v, ok := e.s.(spec.VersionGenerator)
	if !ok {
		notSupported("saver does not implement spec.VersionGenerator")
	}
	return v
}
