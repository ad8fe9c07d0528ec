// Command deltagrowth measures how a message-append thread grows in storage
// and in read cost when its messages live in a plain list channel (the
// whole value stored at every step) and when they live in a delta channel
// (refengine.Delta: writes only, a snapshot every so many updates), on each
// checkpointkit adapter; ci/bench-delta drives it next to
// bridge/python/bench/delta_growth.py, which does the same with LangGraph
// Python's StateGraph and savers.
//
// It has two subcommands:
//
//	deltagrowth run -saver memory|sqlite|postgres|mongo [-steps 10,100,1000] [-iters N] [-modes list,delta100,delta50]
//	deltagrowth report -in DIR [-doc docs/benchmarks.md] [-note TEXT]
//
// run drives, per mode, one refengine graph on a thread of its own in
// storage of its own: keys "messages" (the channel under test) and "turn"
// (last value); each step is one Invoke with input {"turn": i} whose node
// appends one message of -msg bytes of random base-64 text (incompressible
// enough that PostgreSQL's TOAST cannot hide the growth). When the thread
// reaches each of -steps it stops writing and records the bytes stored
// (see storage.go) and the median of -iters reads. A read is what the
// engine's load does: GetTuple of the latest checkpoint, then, when the
// messages channel has no stored value there, spec.ReadDeltaHistory from
// that checkpoint and the fold of the seed and writes; every read checks
// that it found exactly one message per step. It prints one JSON line per
// mode and step (type point).
//
// report reads every *.jsonl file under -in (Go and Python sides alike),
// prints a Markdown table and, with -doc, replaces the part of that file
// between <!-- bench-delta:begin --> and <!-- bench-delta:end --> with it
// (appending a section when the markers are missing).
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(os.Args[2:])
	case "report":
		err = reportCmd(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "deltagrowth:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: deltagrowth run -saver memory|sqlite|postgres|mongo [-steps 10,100,1000] [-iters N] [-modes list,delta100,delta50]\n       deltagrowth report -in DIR [-doc FILE] [-note TEXT]")
	os.Exit(2)
}
