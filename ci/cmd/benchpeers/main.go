// Command benchpeers measures checkpointkit's adapters side by side with
// LangGraph.js's and LangGraph Python's savers; ci/bench-peers drives it.
//
// It has two subcommands:
//
//	benchpeers run -saver memory|sqlite|postgres|mongo [-iters N] [-depths 10,2000]
//	benchpeers report -in DIR [-doc docs/benchmarks.md]
//
// run performs the workload of one round on one Go adapter and prints one
// JSON result (type result) on stdout: "put" is one Put of a checkpoint
// holding a 1 KB value plus one PutWrites of two writes (the 1 KB value and
// a small integer); the reads are GetTuple of the latest checkpoint and List
// with limit 10, each on a thread whose history is as deep as each of
// -depths, every history in storage of its own. Reads of the depths are
// timed alternately in one loop, so load from other processes hits them
// alike. Every figure is the median latency of its -iters calls, and
// allocations per call come from runtime.MemStats around a separate loop.
//
// bridge/js/bench/peers.js prints the same JSON for LangGraph.js's savers
// (side "js"), bridge/python/bench/peers.py for LangGraph Python's (side
// "py", or "py-async" for their async API).
// report reads every *.json result under -in (one per saver, side and
// round), takes the median of each figure over the rounds, prints a Markdown
// comparison table and, with -doc, replaces the part of that file between
// the markers <!-- bench-peers:begin --> and <!-- bench-peers:end --> with
// it (appending a section when the markers are missing).
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
		fmt.Fprintln(os.Stderr, "benchpeers:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchpeers run -saver memory|sqlite|postgres|mongo [-iters N] [-depths 10,2000]\n       benchpeers report -in DIR [-doc FILE]")
	os.Exit(2)
}
