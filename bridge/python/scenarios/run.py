"""Run the scenarios on LangGraph Python and print their saver traffic.

    python -m scenarios.run [--list] [name...]

Each scenario runs with a fresh RecordingSaver around an InMemorySaver.
Afterwards every thread the scenario used is listed (all namespaces,
recorded), so the trace also shows everything the saver stored as
LangGraph's own saver reads it back. The output is one JSON object mapping
each scenario's name to {"calls": [...], "stored": [...]}: the scenario's
calls (a refengine/trace document) and the listing calls.
"""

from __future__ import annotations

import json
import sys

from checkpointkit_bridge.recorder import RecordingSaver

from .delta import SCENARIOS as DELTA
from .registry import SCENARIOS as REGISTERED

SCENARIOS = {**REGISTERED, **DELTA}


def threads_of(saver: RecordingSaver) -> list[str]:
    """The thread IDs the recorded calls used, sorted."""
    seen: set[str] = set()
    for c in saver.calls:
        tid = (c.get("config") or {}).get("thread_id") or (c.get("list") or {}).get("thread_id") or c.get("thread_id")
        if tid:
            seen.add(tid)
    return sorted(seen)


def record(name: str) -> dict[str, list[dict]]:
    """Run one scenario; return its calls and the listing of its threads."""
    saver = RecordingSaver()
    SCENARIOS[name](saver)
    n = len(saver.calls)
    for tid in threads_of(saver):
        list(saver.list({"configurable": {"thread_id": tid}}))
    return {"calls": saver.calls[:n], "stored": saver.calls[n:]}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--list"]:
        print("\n".join(sorted(SCENARIOS)))
        return 0
    names = argv or sorted(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenarios {unknown}; known: {', '.join(sorted(SCENARIOS))}", file=sys.stderr)
        return 2
    json.dump({n: record(n) for n in names}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
