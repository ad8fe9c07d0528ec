"""Run LangGraph's own conformance package (langgraph-checkpoint-conformance)
against checkpointkit's Go adapters, through BridgeSaver and
cmd/checkpointkit-saver.

    python -m checkpointkit_bridge.lgconformance [--out DIR] [memory] [sqlite] [postgres] [mongo]

No adapter runs all four. CHECKPOINTKIT_SAVER_BIN names the built server;
postgres and mongo use CHECKPOINTKIT_POSTGRES_DSN and CHECKPOINTKIT_MONGO_URI.
For each adapter it prints every test's result and the package's own
report; the last line is "N passed, N failed, N skipped". Every capability,
base and extended, must be detected and pass: a capability may be left out
only by name, in EXPECTED_SKIPS below, with its reason, which is printed.
The exit status is 1 when a test fails or a capability is skipped
otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability
from langgraph.checkpoint.conformance.report import CapabilityReport, ProgressCallbacks

from .client import BridgeProcess, start_saver_process
from .saver import BridgeSaver

ADAPTERS = ("memory", "sqlite", "postgres", "mongo")

# Capabilities of the package that may be left out, by name, with the reason.
# None is: the Go adapters answer delta_history themselves (a version of the
# package with a delta_channel_history group runs it; 0.0.2 has none).
EXPECTED_SKIPS: dict[str, str] = {}

# The package's delta group, when it has one, must reach the Go adapter's own
# history, not BaseCheckpointSaver's default walk that BridgeSaver falls back to.
DELTA_CAPABILITY = "delta_channel_history"

_ENV_NEEDED = {"postgres": "CHECKPOINTKIT_POSTGRES_DSN", "mongo": "CHECKPOINTKIT_MONGO_URI"}


@dataclass
class AdapterResult:
    """The counts of one adapter's run."""

    adapter: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _progress() -> ProgressCallbacks:
    def start(capability: str, detected: bool) -> None:
        print(f"  {capability}:" if detected else f"  {capability}: not detected", flush=True)

    def result(capability: str, test: str, passed: bool, error: str | None) -> None:
        print(f"    {'ok  ' if passed else 'FAIL'} {test}", flush=True)
        if error:
            for line in error.rstrip().splitlines():
                print(f"         {line}")

    return ProgressCallbacks(on_capability_start=start, on_test_result=result)


async def run_adapter(adapter: str) -> tuple[AdapterResult, CapabilityReport | None]:
    """Run the package's every capability against one adapter, a fresh saver per capability suite."""
    res = AdapterResult(adapter)
    t0 = time.monotonic()
    env = _ENV_NEEDED.get(adapter)
    if env and not os.environ.get(env):
        res.failed = 1
        res.problems.append(f"{env} is not set: no {adapter} server to run against")
        return res, None
    proc: BridgeProcess = await asyncio.to_thread(start_saver_process, adapter)
    if "delta_history" not in proc.capabilities:
        res.failed = 1
        res.problems.append(f"the {adapter} server does not advertise delta_history")
    skips = {name for name in EXPECTED_SKIPS if name in {c.value for c in Capability}}

    async def factory() -> AsyncGenerator[BridgeSaver, None]:
        saver = await BridgeSaver.aopen(proc, timeout=60)
        try:
            yield saver
        finally:
            await saver.aclose()

    registered = checkpointer_test(name=f"checkpointkit {adapter} (BridgeSaver)", skip_capabilities=skips)(factory)
    try:
        report = await validate(registered, progress=_progress())
    finally:
        await proc.aclose()
    for name, r in report.results.items():
        res.passed += r.tests_passed
        res.failed += r.tests_failed
        if not r.detected:
            res.skipped += max(1, r.tests_skipped)
            if name in skips:
                print(f"  skipped by name: {name}: {EXPECTED_SKIPS[name]}")
            else:
                res.problems.append(f"capability {name} was not run (not detected)")
    if DELTA_CAPABILITY not in report.results:
        print(f"  note: {DELTA_CAPABILITY}: not in this version of langgraph-checkpoint-conformance")
    res.seconds = time.monotonic() - t0
    return res, report


async def main_async(adapters: list[str], out: str | None, totals_file: str | None = None) -> int:
    results: list[AdapterResult] = []
    for adapter in adapters:
        print(f"\n== langgraph-checkpoint-conformance on checkpointkit {adapter}", flush=True)
        res, report = await run_adapter(adapter)
        if report is not None:
            report.print_report()
            if out:
                os.makedirs(out, exist_ok=True)
                with open(os.path.join(out, f"{adapter}.json"), "w") as f:
                    json.dump({**report.to_dict(), "seconds": round(res.seconds, 2)}, f, indent=2)
        for p in res.problems:
            print(f"  problem: {p}")
        results.append(res)
    print("\n== summary")
    for r in results:
        extra = f" ({'; '.join(r.problems)})" if r.problems else ""
        print(f"{r.adapter}: {r.passed} passed, {r.failed} failed, {r.skipped} skipped in {r.seconds:.1f}s{extra}")
    passed = sum(r.passed for r in results)
    failed = sum(r.failed for r in results)
    skipped = sum(r.skipped for r in results)
    bad = [r.adapter for r in results if r.failed or r.problems]
    if bad:
        print(f"FAILED: {' '.join(bad)}")
    totals = f"{passed} passed, {failed} failed, {skipped} skipped"
    if totals_file:
        with open(totals_file, "w") as f:
            print(totals, file=f)
    else:
        print(totals)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """The command line: adapters to run (default all four) and --out for JSON reports."""
    ap = argparse.ArgumentParser(prog="python -m checkpointkit_bridge.lgconformance", description=__doc__.split("\n\n")[0])
    ap.add_argument("adapters", nargs="*", metavar="adapter", help=" | ".join(ADAPTERS) + " (default: all)")
    ap.add_argument("--out", help="write each adapter's report as JSON into this directory")
    ap.add_argument("--totals-file", help="write the totals line into this file instead of printing it")
    args = ap.parse_args(argv)
    for a in args.adapters:
        if a not in ADAPTERS:
            ap.error(f"unknown adapter {a!r}")
    return asyncio.run(main_async(args.adapters or list(ADAPTERS), args.out, args.totals_file))


if __name__ == "__main__":
    sys.exit(main())
