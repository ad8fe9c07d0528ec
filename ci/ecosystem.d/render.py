"""Rewrites docs/ecosystem.md from ci/ecosystem.d/results/*.json, the
savers that cannot run here (savers.json) and the hand-checked verdicts
(verdicts.json). A root cause without a verdict is flagged in the table
and counted on stderr."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DOC = ROOT / "docs" / "ecosystem.md"

VERDICTS = {
    "bug": "bug",
    "difference": "LangGraph difference",
    "artefact": "harness artefact",
}
LEVEL_ORDER = {"FULL": 0, "BASE": 1, "PARTIAL": 2, "NONE": 3, "NO REPORT": 4, "-": 5}


def load_results(results: Path) -> list[dict[str, Any]]:
    out = [json.loads(p.read_text()) for p in sorted(results.glob("*.json"))]
    order = {s["id"]: i for i, s in enumerate(json.loads((HERE / "savers.json").read_text())["savers"])}
    return sorted(out, key=lambda r: order.get(r["id"], len(order)))


def cell(text: str) -> str:
    """Text made safe for one Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def verdict_of(verdicts: dict[str, Any], saver: str, rule: str) -> dict[str, str] | None:
    """The verdict on a saver's root: its own, else the one shared by every
    saver that behaves as LangGraph's own savers do (marked "shared")."""
    if f"{saver}/{rule}" in verdicts:
        return verdicts[f"{saver}/{rule}"]
    shared = verdicts.get(f"*/{rule}")
    return {**shared, "shared": "1"} if shared else None


def distinct_bugs(r: dict[str, Any], verdicts: dict[str, Any]) -> set[str]:
    """The distinct places (verdict "where") of a saver's roots judged bugs:
    several roots with one cause count once."""
    out = set()
    for x in r.get("roots", []):
        v = verdict_of(verdicts, r["id"], x["rule"]) or {}
        if v.get("verdict") == "bug":
            out.add(v.get("where") or x["rule"])
    return out


def level(r: dict[str, Any], key: str) -> str:
    """A level of a result, or "no report" for a run that wrote none."""
    return "no report" if r.get("level") == "NO REPORT" else r[key]


def saver_table(results: list[dict[str, Any]], verdicts: dict[str, Any], link: bool = True) -> list[str]:
    lines = [
        "| saver | language | package | version | backend | core | strict | roots (core + strict) | distinct bugs | time |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        roots = r.get("roots", [])
        core = sum(1 for x in roots if x.get("tier") == "core")
        bugs = len(distinct_bugs(r, verdicts))
        name = f"[{r['id']}](#{r['id']})" if link else r["id"]
        lines.append(
            f"| {name} | {r.get('language', 'Python')} | `{r['package']}` ({r['class']}, {r['api']}) "
            f"| {r['version']} | {cell(r['backend'])} | {level(r, 'core_level')} | {level(r, 'strict_level')} "
            f"| {len(roots)} ({core} + {len(roots) - core}) | {bugs} | {r['seconds']:.0f}s |"
        )
    return lines


def reproductions(folder: Path) -> dict[str, dict[str, Any]]:
    """The reproductions ci/cmd/repro wrote for one saver (its index.json),
    by rule."""
    index = folder / "index.json"
    return {e["rule"]: e for e in json.loads(index.read_text())} if index.exists() else {}


def repro_cell(saver: str, e: dict[str, Any] | None) -> str:
    """Links to a root's shrunk reproduction, or why there is none."""
    if not e:
        return ""
    if e.get("kind") == "race" and e.get("snippet"):
        # A concurrency rule no call sequence shows: a program that races
        # the saver's calls, run once by ci/cmd/repro.
        shown = f" ({e['note']}: {e['detail']})" if e.get("detail") else f" ({e.get('note', '')})"
        return f"race program: [snippet](ecosystem/{saver}/{e['snippet']})" + cell(shown)
    if not e.get("trace"):
        return cell(f"none: {e.get('skipped', '')}")
    links = [f"[trace](ecosystem/{saver}/{e['trace']})"]
    if e.get("snippet"):
        links.append(f"[snippet](ecosystem/{saver}/{e['snippet']})")
    return f"{e['calls']} of {e['recorded']} calls: " + " · ".join(links)


def root_section(r: dict[str, Any], verdicts: dict[str, Any], notes: dict[str, str],
                 doc_dir: Path | None = None) -> tuple[list[str], int]:
    """The section of one saver and its number of roots without a verdict."""
    out = [f"### {r['id']}", ""]
    out.append(
        f"`{r['package']}` {r['version']}, `{r['class']}` ({r['api']} API) on {r['backend']}, "
        f"langgraph-checkpoint {r['langgraph_checkpoint']}; run {r['date']} in {r['seconds']:.0f}s. "
        f"Core **{r['core_level']}**, strict **{r['strict_level']}**."
    )
    specs = r.get("specs", {})
    if specs:
        out[-1] += (
            f" Specs: {specs.get('passed', 0)} passed, {specs.get('failed', 0)} failed, "
            f"{specs.get('not_supported', 0)} not supported; {specs.get('differs_rules', 0)} rules differ as LangGraph's savers do."
        )
    if notes.get(r["id"]):
        out += ["", f"Note: {notes[r['id']]}."]
    if r.get("error"):
        out += ["", f"The run wrote no report: `{cell(r['error'])}`"]
    out.append("")
    roots = r.get("roots", [])
    missing = 0
    if not roots:
        out += ["No root causes.", ""]
        return out, 0
    repros = reproductions(doc_dir / "ecosystem" / r["id"]) if doc_dir else {}
    out += ["| rule | tier | cause | verdict | where | reproduction |", "| --- | --- | --- | --- | --- | --- |"]
    for x in roots:
        v = verdict_of(verdicts, r["id"], x["rule"])
        if v:
            kind = VERDICTS.get(v.get("verdict", ""), v.get("verdict", ""))
            if v.get("shared"):
                kind += " (shared)"
            cause = v.get("cause") or x.get("message", "")
            where = f"`{v['where']}`" if v.get("where") else ""
        else:
            missing += 1
            kind = "**no verdict yet**"
            cause = x.get("message", "")
            where = ""
        out.append(f"| {x['rule']} | {x.get('tier', '')} | {cell(cause)} | {kind} | {cell(where)} "
                   f"| {repro_cell(r['id'], repros.get(x['rule']))} |")
    out.append("")
    return out, missing


def render(results_dir: Path | None = None, doc: Path = DOC, verdicts_file: Path | None = None,
           go_ports: Path | None = None) -> int:
    """Writes the doc; returns the number of roots without a verdict. The
    Go ports section (go_ports, default goports.md next to this file) is
    hand-written: those ports are judged locally and never run here."""
    reg = json.loads((HERE / "savers.json").read_text())
    vf = verdicts_file or HERE / "verdicts.json"
    verdicts = json.loads(vf.read_text()) if vf.exists() else {}
    verdicts = {k: v for k, v in verdicts.items() if not k.startswith("_")}
    notes = {s["id"]: s["note"] for s in reg["savers"] if s.get("note")}
    own_ids = {s["id"] for s in reg["savers"] if s.get("own")}
    everything = load_results(results_dir or HERE / "results")
    own = [r for r in everything if r["id"] in own_ids]
    results = [r for r in everything if r["id"] not in own_ids]
    full = [r["id"] for r in results if r["core_level"] == "FULL"]
    bugs = sum(len(distinct_bugs(r, verdicts)) for r in results)
    slow = {s["id"] for s in reg["savers"] if s.get("slow")}
    total = sum(r.get("seconds", 0) for r in everything if r["id"] not in slow)
    lines = [
        "# The ecosystem scoreboard",
        "",
        "<!-- Written by ci/ecosystem (ci/ecosystem.d/render.py) from ci/ecosystem.d/results and",
        "     ci/ecosystem.d/verdicts.json; edit those, not this file. -->",
        "",
        "checkpointkit's conformance suite run on LangGraph checkpoint savers that other people",
        "publish, each at a pinned version from the hashed locks in `ci/ecosystem.d`, each on a",
        "real backend started on this machine, each through the saver bridge (`bridge/python`)",
        "with a small factory in `ci/ecosystem.d/ecofactories` that gives it fresh storage per",
        "spec. Reproduce one row with `ci/ecosystem ID`, all of them with `ci/ecosystem`.",
        "",
        f"**{sum(1 for r in results if r.get('level') != 'NO REPORT')} savers judged"
        + (f" ({sum(1 for r in results if r.get('level') == 'NO REPORT')} more ran without a report)"
           if any(r.get("level") == "NO REPORT" for r in results) else "")
        + f"; {len(full)} at LangGraph core FULL"
        + (f" ({', '.join(full)})" if full else "")
        + f"; {bugs} bugs found in the savers' sources behind their root causes (distinct per saver).**"
        f" Suite time of the full run (every row below{' but the slow ones' if slow else ''}, one saver at a time): {total / 60:.1f} minutes.",
        "",
        "Levels: `FULL` every rule of the tier holds, `BASE` only optional capabilities fail,",
        "`PARTIAL` some required rule fails, `NONE` nothing works (README, *Reading the verdict*).",
        "A root cause is a rule the report names first: fix it and the specs it explains pass.",
        "Verdicts: **bug** (the file and line in the saver's installed source),",
        "**LangGraph difference** (the saver does what LangGraph's own savers do), or",
        "**harness artefact** (the bridge or the factory, not the saver, causes it).",
        "*(shared)* marks a strict rule that LangGraph's own savers break the same way.",
        "LangGraph's own eight savers (`ci/ecosystem lgpy-memory ... lgjs-mongo`, the `lgpy-*` and",
        "`lgjs-*` columns of `ci/matrix`) are listed for comparison at the end; their root causes",
        "are judged in [langgraph-python.md](langgraph-python.md) and [langgraphjs.md](langgraphjs.md).",
        "",
        "## Savers",
        "",
        *saver_table(results, verdicts),
        "",
        "## Root causes",
        "",
    ]
    missing = 0
    for r in results:
        sec, m = root_section(r, verdicts, notes, doc.parent)
        lines += sec
        missing += m
    if own:
        lines += ["## LangGraph's own savers, for comparison", "", *saver_table(own, verdicts, link=False), ""]
    ports = go_ports or HERE / "goports.md"
    if ports.exists():
        lines += [ports.read_text().rstrip("\n"), ""]
    lines += [
        "## Savers that cannot run here",
        "",
        "| package | language | why |",
        "| --- | --- | --- |",
    ]
    for s in reg["not_runnable"]:
        lines.append(f"| `{cell(s['package'])}` | {s['language']} | {cell(s['reason'])} |")
    lines.append("")
    doc.write_text("\n".join(lines))
    print(f"render: wrote {doc}: {len(results)} savers, {missing} root(s) without a verdict",
          file=sys.stderr)
    return missing


if __name__ == "__main__":
    render()
