package conformance

import (
	"context"
	"fmt"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/checkpointkit/checkpointkit/refengine/enginetest"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// The engine group drives the saver under test through refengine, the
// reference Pregel engine, with the scenarios of package enginetest: the
// paths real savers break on (pending writes replayed on resume, interrupts,
// subgraph namespaces, time travel, writes racing their checkpoint) checked
// end to end. Each spec cites the ENGINE-* rule of its scenario. The group
// also replays golden traces (exact recorded traffic, IDs and versions
// included; embedded by enginetest, so only test binaries carry them) and
// checks every read against the recording: LangGraph.js's own saver
// traffic for every scenario written for LangGraph.js
// (bridge/js/scenarios), normalised to the contract by
// enginetest.NormalizeLangGraphJS, and refengine's for the scenarios that
// have no LangGraph.js counterpart.

// lEngine is the label of the engine group.
var lEngine = g.Label("engine")

func init() { extraGroups = append(extraGroups, engineSpecs) }

func engineSpecs(e *env) {
	g.Describe("driven by the reference engine", lEngine, func() {
		for _, sc := range enginetest.All() {
			text := fmt.Sprintf("[%s] %s", sc.Rule, sc.Doc)
			checkBroad(text, "engine scenario "+sc.Name, lEngine, []string{sc.Rule}, func(ctx g.SpecContext) {
				env := &enginetest.Env{Saver: e.s}
				if err := sc.Run(ctx, env); err != nil {
					g.Fail(fmt.Sprintf("%v\nsaver calls of the scenario:\n%s", err, callSummary(env.Calls)))
				}
			})
		}
		traces, terr := enginetest.GoldenTraces()
		if terr != nil {
			check("[ENGINE-TRACE-1] golden traces load", lEngine, func(context.Context) {
				Expect(terr).NotTo(HaveOccurred())
			})
		}
		for _, tr := range traces {
			text := fmt.Sprintf("[ENGINE-TRACE-1] replays refengine's saver traffic of %q and every read returns what the reference saver returned", tr.Name)
			if name, ok := strings.CutPrefix(tr.Name, enginetest.LangGraphJSPrefix); ok {
				text = fmt.Sprintf("[ENGINE-TRACE-1] replays LangGraph.js's saver traffic of %q and every read returns what LangGraph.js's saver returned, as the contract reads it", name)
			}
			labels := lEngine
			if usesDelta(tr.Calls) {
				labels = withDelta(lEngine)
			}
			checkBroad(text, "engine trace "+tr.Name, labels, []string{"ENGINE-TRACE-1"}, func(ctx g.SpecContext) {
				if err := trace.ReplayWith(ctx, e.s, tr.Calls, trace.ReplayOptions{WholeSnapshots: e.h.has(WholeSnapshots), EitherValues: true}); err != nil {
					g.Fail(err.Error())
				}
			})
		}
	})
}

// usesDelta tells whether a trace reads a delta history or stores a
// snapshot, that is, whether its graph has delta channels.
func usesDelta(calls []trace.Call) bool {
	for _, c := range calls {
		if c.Method == trace.MethodDeltaHistory {
			return true
		}
		if c.Checkpoint == nil {
			continue
		}
		for _, v := range c.Checkpoint.ChannelValues {
			if _, ok := v.(spec.DeltaSnapshot); ok {
				return true
			}
		}
	}
	return false
}

// callSummary renders recorded saver calls one per line, for failure
// messages.
func callSummary(calls []trace.Call) string {
	const maxLines = 60
	var out string
	for i, c := range calls {
		if i == maxLines {
			out += fmt.Sprintf("  ... %d more\n", len(calls)-maxLines)
			break
		}
		line := fmt.Sprintf("  %s ns=%q id=%s", c.Method, c.Config.Namespace, c.Config.CheckpointID)
		switch c.Method {
		case trace.MethodPut:
			line += fmt.Sprintf(" -> %s %v", c.Checkpoint.ID, c.Metadata)
		case trace.MethodPutWrites:
			chans := make([]string, len(c.Writes))
			for j, w := range c.Writes {
				chans[j] = w.Channel
			}
			line += fmt.Sprintf(" task=%s %v", c.TaskID, chans)
		case trace.MethodGetTuple:
			if c.Tuple != nil {
				line += " -> " + c.Tuple.Config.CheckpointID
			}
		}
		if c.Err != "" {
			line += " error: " + c.Err
		}
		out += line + "\n"
	}
	return out
}
