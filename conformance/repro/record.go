package repro

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"sync"

	g "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/conformance"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Failed is a spec that failed while [RecordRules] recorded it.
type Failed struct {
	// Spec is the spec's text ("[LIST-LIMIT-1] returns at most ...").
	Spec string
	// Rules are the rule IDs the text cites.
	Rules []string
	// Location is the spec's file and line; Message its failure message.
	Location, Message string
	// Traces holds the calls made to each saver the spec opened, in the
	// order it opened them.
	Traces [][]trace.Call
}

// citation matches a rule ID cited in a spec text.
var citation = regexp.MustCompile(`\[([A-Z]+(?:-[A-Z]+)*-[0-9]+)\]`)

// RecordRules runs the conformance suite's specs that cite one of rules
// (a Ginkgo focus on "[RULE]") on the savers open gives, each wrapped in a
// trace.Recorder that also records the versions the saver mints
// (trace.WithNextVersion), and returns the specs that failed with their
// calls. It
// registers the suite with conformance.Describe under the harness name
// name and calls Ginkgo's RunSpecs with t, so it can run once per process
// and not inside another Ginkgo suite. The conformance report is printed
// as usual; its JSON form is written only where CHECKPOINTKIT_REPORT_JSON
// says.
//
// The recorder hides the saver's optional capabilities (thread copy, run
// deletion, pruning), so their specs read "not supported": reproductions
// cover the base contract.
func RecordRules(t g.GinkgoTestingT, name string, open Opener, rules []string) ([]Failed, error) {
	if len(rules) == 0 {
		return nil, fmt.Errorf("repro: no rules to record")
	}
	quoted := make([]string, len(rules))
	for i, r := range rules {
		quoted[i] = regexp.QuoteMeta(r)
	}
	if err := flag.Set("ginkgo.focus", `\[(`+strings.Join(quoted, "|")+`)\]`); err != nil {
		return nil, fmt.Errorf("repro: setting the Ginkgo focus: %w", err)
	}
	var (
		mu     sync.Mutex
		opened []*trace.Recorder
		failed []Failed
	)
	conformance.Describe(conformance.Harness{
		Name: name,
		New: func(ctx context.Context) (spec.Saver, func(), error) {
			s, cleanup, err := open(ctx)
			if err != nil {
				return nil, nil, err
			}
			r := trace.Record(s, trace.WithNextVersion())
			mu.Lock()
			opened = append(opened, r)
			mu.Unlock()
			return r, cleanup, nil
		},
	})
	g.ReportAfterEach(func(rep types.SpecReport) {
		mu.Lock()
		recs := opened
		opened = nil
		mu.Unlock()
		if rep.State != types.SpecStateFailed {
			return
		}
		f := Failed{Spec: rep.LeafNodeText, Location: rep.Failure.Location.String(), Message: rep.Failure.Message}
		for _, m := range citation.FindAllStringSubmatch(rep.LeafNodeText, -1) {
			f.Rules = append(f.Rules, m[1])
		}
		for _, r := range recs {
			f.Traces = append(f.Traces, r.Calls())
		}
		mu.Lock()
		failed = append(failed, f)
		mu.Unlock()
	})
	gomega.RegisterFailHandler(conformance.Fail)
	g.RunSpecs(t, "checkpointkit repro: "+name)
	mu.Lock()
	defer mu.Unlock()
	return failed, nil
}

// Cites reports whether f's text cites rule.
func (f Failed) Cites(rule string) bool {
	for _, r := range f.Rules {
		if r == rule {
			return true
		}
	}
	return false
}
