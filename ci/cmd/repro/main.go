// Command repro records, shrinks and writes reproductions of a saver's
// failed conformance rules: for each rule, the shortest sequence of saver
// calls whose result differs from checkpointkit's reference (see package
// conformance/repro), as a JSON trace and as a snippet in the saver's own
// language. The saver is served by a bridge server, started as
// ci/ecosystem and bridge/lgpy start it:
//
//	go run ./ci/cmd/repro -rules ERR-1,LIST-LIMIT-1 -out docs/ecosystem/lgpy-memory \
//	    -factory checkpointkit_bridge.factories:memory \
//	    -- bridge/python/.venv/bin/python -m checkpointkit_bridge serve checkpointkit_bridge.factories:memory
//	go run ./ci/cmd/repro -js memory -rules LIST-SCOPE-4 -out DIR -- node bridge/js/server.js --saver memory
//	go run ./ci/cmd/repro -replay DIR/ERR-1.json -- SERVER...   # replay a trace against the server
//
// It writes DIR/RULE.json, DIR/RULE.py (with -factory) or DIR/RULE.mjs
// (with -js), and DIR/index.json listing what it wrote and, for each rule
// it could not reproduce, why. Rules about races and network faults
// (CONC-*, FAULT-*) are recorded and shrunk like the others: a saver may
// break them by something a plain sequence of its recorded calls shows
// (a read that fails whatever the timing). When no sequence shows CONC-1,
// CONC-2 or CONC-3, the command writes DIR/RULE.race.py or .mjs, a program
// that races the saver's calls on purpose, runs it once and records whether
// the race showed. A rule without a reproduction never fails the command; a
// server that does not start does.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/checkpointkit/checkpointkit/bridge"
	"github.com/checkpointkit/checkpointkit/conformance/repro"
	"github.com/checkpointkit/checkpointkit/refengine/trace"
	"github.com/checkpointkit/checkpointkit/spec"
)

// Entry is one rule's line in index.json.
type Entry struct {
	Rule string `json:"rule"`
	// Spec is the failed spec the reproduction was recorded from.
	Spec string `json:"spec,omitempty"`
	// Recorded and Calls are the lengths of the recorded and the shrunk
	// sequences; Kind says how the saver differs at the last call.
	Recorded int    `json:"recorded,omitempty"`
	Calls    int    `json:"calls,omitempty"`
	Runs     int    `json:"replays,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Trace    string `json:"trace,omitempty"`
	Snippet  string `json:"snippet,omitempty"`
	// Note says that the trace's replay meets another difference first.
	Note string `json:"note,omitempty"`
	// Skipped says why there is no reproduction.
	Skipped string `json:"skipped,omitempty"`
}

// nonDeterministic are the prefixes of rules about races and faults, which
// a sequence of calls reproduces only when the saver breaks them without
// the race or the fault.
var nonDeterministic = []string{"CONC-", "FAULT-"}

// raceOrFault reports whether rule is about races or faults.
func raceOrFault(rule string) bool {
	return slices.ContainsFunc(nonDeterministic, func(p string) bool { return strings.HasPrefix(rule, p) })
}

// failT is Ginkgo's testing.T stand-in: failed specs are findings here.
type failT struct{}

func (failT) Fail() {}

func main() {
	rules := flag.String("rules", "", "comma-separated rule IDs to reproduce")
	out := flag.String("out", "", "folder to write the reproductions to")
	name := flag.String("name", "saver", "the saver's name in the snippets")
	factory := flag.String("factory", "", "Python factory module:function: write .py snippets")
	async := flag.Bool("async", false, "the Python snippets call the async API (aput, alist, ...)")
	js := flag.String("js", "", "LangGraph.js saver kind (memory, sqlite, postgres, mongo): write .mjs snippets")
	budget := flag.Int("budget", repro.DefaultBudget, "replays per rule while shrinking")
	replay := flag.String("replay", "", "replay this JSON trace against the server and exit")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: repro -rules R1,R2 -out DIR [-factory M:F [-async] | -js KIND] -- SERVER COMMAND...\n       repro -replay TRACE.json -- SERVER COMMAND...")
		flag.PrintDefaults()
	}
	flag.Parse()
	server := flag.Args()
	if len(server) == 0 || (*replay == "" && (*rules == "" || *out == "")) {
		flag.Usage()
		os.Exit(2)
	}
	// The suite writes its JSON report where this says; it is not ours.
	os.Unsetenv("CHECKPOINTKIT_REPORT_JSON")
	ctx := context.Background()
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	cmd := exec.Command(server[0], server[1:]...)
	cmd.Stderr = os.Stderr
	proc, err := bridge.Start(startCtx, cmd)
	cancel()
	if err != nil {
		fatal("starting the server: %v", err)
	}
	defer proc.Close()
	open := func(ctx context.Context) (spec.Saver, func(), error) {
		s, err := proc.Open(ctx)
		if err != nil {
			return nil, nil, err
		}
		return s, func() {
			if c, ok := s.(io.Closer); ok {
				_ = c.Close()
			}
		}, nil
	}
	if *replay != "" {
		status := replayTrace(ctx, open, *replay)
		proc.Close()
		os.Exit(status)
	}
	o := options{out: *out, name: *name, factory: *factory, async: *async, js: *js, budget: *budget, server: server}
	if err := run(ctx, open, strings.Split(*rules, ","), o); err != nil {
		proc.Close()
		fatal("%v", err)
	}
}

// options are the command's flags for run.
type options struct {
	out, name, factory, js string
	async                  bool
	budget                 int
	// server is the bridge server's command: its interpreter runs the
	// race programs (see race.go).
	server []string
}

func run(ctx context.Context, open repro.Opener, rules []string, o options) error {
	var index []Entry
	var record []string
	for _, r := range rules {
		if r = strings.TrimSpace(r); r != "" {
			record = append(record, r)
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if len(record) > 0 {
		failed, err := repro.RecordRules(failT{}, o.name, open, record)
		if err != nil {
			return err
		}
		for _, r := range record {
			e := reproduce(ctx, open, r, failed, o)
			if e.Skipped != "" && slices.Contains(repro.RaceRules, r) {
				e = race(ctx, e, o)
			}
			index = append(index, e)
		}
	}
	slices.SortFunc(index, func(a, b Entry) int { return strings.Compare(a.Rule, b.Rule) })
	data, err := json.MarshalIndent(index, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, "index.json"), append(data, '\n'), 0o644)
}

// maxTries bounds the recorded traces tried per rule, shortest first.
const maxTries = 4

// reproduce shrinks the shortest recorded trace of a failed spec citing
// rule that reproduces, and writes its files.
func reproduce(ctx context.Context, open repro.Opener, rule string, failed []repro.Failed, o options) Entry {
	type cand struct {
		spec  string
		rules int
		calls []trace.Call
	}
	var cands []cand
	for _, f := range failed {
		if f.Cites(rule) {
			for _, tr := range f.Traces {
				if len(tr) > 0 {
					cands = append(cands, cand{f.Spec, len(f.Rules), tr})
				}
			}
		}
	}
	if len(cands) == 0 {
		return report(Entry{Rule: rule, Skipped: "no spec citing the rule failed in this run"})
	}
	// Focused specs (fewest rules cited) first, then the shortest.
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.rules != b.rules {
			return a.rules - b.rules
		}
		return len(a.calls) - len(b.calls)
	})
	why := ""
	for i, c := range cands {
		if i == maxTries {
			break
		}
		r, err := repro.Minimize(ctx, open, repro.Reference, c.calls, o.budget)
		if errors.Is(err, repro.ErrNotReproduced) {
			// A reason found with an earlier candidate says more.
			switch {
			case why != "":
			case raceOrFault(rule):
				why = "a race or a network fault: the recorded calls, replayed one at a time on a fresh saver, give what the reference gives, so the failure needs the concurrency or the fault"
			default:
				why = "the recorded calls, replayed on a fresh saver, give what the reference gives (the spec judged something a call sequence does not show, such as a cancelled context)"
			}
			continue
		}
		if err != nil {
			why = err.Error()
			continue
		}
		r.Rule = rule
		e, err := write(ctx, open, r, c.spec, o)
		if err != nil {
			why = err.Error()
			continue
		}
		if raceOrFault(rule) {
			e.Note = strings.TrimPrefix(e.Note+"; the spec made these calls concurrently (recorded in completion order): the difference shows without the concurrency", "; ")
		}
		return report(e)
	}
	return report(Entry{Rule: rule, Skipped: why})
}

func write(ctx context.Context, open repro.Opener, r *repro.Repro, specText string, o options) (Entry, error) {
	d := r.Divergence
	e := Entry{Rule: r.Rule, Spec: specText, Recorded: r.Recorded, Calls: len(r.Calls), Runs: r.Runs, Kind: d.Kind(), Detail: d.Detail}
	data, err := r.Trace()
	if err != nil {
		return e, err
	}
	re, err := repro.CheckTrace(ctx, open, data)
	if err != nil {
		return e, fmt.Errorf("the JSON trace does not reproduce: %w", err)
	}
	if re.Index != d.Index {
		e.Note = fmt.Sprintf("replaying the trace stops earlier, at call %d: %s", re.Index+1, re.Detail)
	}
	e.Trace = r.Rule + ".json"
	if err := os.WriteFile(filepath.Join(o.out, e.Trace), data, 0o644); err != nil {
		return e, err
	}
	title := fmt.Sprintf("%s differs from checkpointkit's contract", o.name)
	var src string
	switch {
	case o.js != "":
		if src, err = r.JS(o.js, title); err != nil {
			return e, err
		}
		e.Snippet = r.Rule + ".mjs"
	case o.factory != "":
		src = r.Python(repro.PythonOptions{Factory: o.factory, Async: o.async, Title: title})
		e.Snippet = r.Rule + ".py"
	}
	if e.Snippet != "" {
		if err := os.WriteFile(filepath.Join(o.out, e.Snippet), []byte(src), 0o644); err != nil {
			return e, err
		}
	}
	return e, nil
}

func report(e Entry) Entry {
	if e.Skipped != "" {
		fmt.Fprintf(os.Stderr, "repro: %s: no reproduction: %s\n", e.Rule, e.Skipped)
	} else {
		fmt.Fprintf(os.Stderr, "repro: %s: %d recorded calls -> %d (%d replays); %s at call %d: %s\n",
			e.Rule, e.Recorded, e.Calls, e.Runs, e.Kind, e.Calls, e.Detail)
	}
	return e
}

// replayTrace replays a JSON trace on a fresh saver and prints the first
// difference; the status is 1 when there is one.
func replayTrace(ctx context.Context, open repro.Opener, file string) int {
	data, err := os.ReadFile(file)
	if err != nil {
		fatal("%v", err)
	}
	re, err := repro.CheckTrace(ctx, open, data)
	if errors.Is(err, repro.ErrNotReproduced) {
		fmt.Println("the saver gives what the trace records")
		return 0
	}
	if err != nil {
		fatal("%v", err)
	}
	fmt.Println(re.Error())
	return 1
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "repro: "+format+"\n", args...)
	os.Exit(1)
}
