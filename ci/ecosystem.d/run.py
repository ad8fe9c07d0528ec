"""Runs checkpointkit's conformance suite on third-party savers and keeps
one compact result per saver in ci/ecosystem.d/results/ (committed, the
source of docs/ecosystem.md).

    python3 ci/ecosystem.d/run.py plan [--smoke] [SAVER...]   # "id venv backends" lines
    python3 ci/ecosystem.d/run.py run --binaries DIR [SAVER...] # run them, write results
    python3 ci/ecosystem.d/run.py render                       # rewrite docs/ecosystem.md

ci/ecosystem (the bash script) installs the venvs, builds the suite
(`go test -c ./bridge/lgpy`), starts the backends and calls these. Each
saver runs in the bridge/lgpy test binary with CHECKPOINTKIT_LGPY_FACTORY
set to its factory (ci/ecosystem.d/ecofactories) and CHECKPOINTKIT_PYTHON to
its venv's interpreter; the full JSON report and log go to out/ecosystem/.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "out" / "ecosystem"
RESULTS = Path(os.environ.get("CHECKPOINTKIT_ECO_RESULTS") or HERE / "results")
# A saver's run stops after this long; a hang is a finding too.
RUN_TIMEOUT = 15 * 60


def registry() -> dict[str, Any]:
    """savers.json: the savers, their venvs and the savers that cannot run."""
    return json.loads((HERE / "savers.json").read_text())


def select(names: list[str], smoke: bool) -> list[dict[str, Any]]:
    """The savers named, or the smoke ones, or all but the slow ones (a saver
    marked slow runs only when named; the table keeps its last result)."""
    savers = registry()["savers"]
    if smoke:
        return [s for s in savers if s.get("smoke")]
    if not names:
        return [s for s in savers if not s.get("slow")]
    by_id = {s["id"]: s for s in savers}
    unknown = [n for n in names if n not in by_id]
    if unknown:
        raise SystemExit(f"ecosystem: unknown saver(s) {', '.join(unknown)}; known: {', '.join(by_id)}")
    return [by_id[n] for n in names]


def venv_python(venv: str) -> Path:
    """The interpreter of a venv of savers.json ("bridge" is bridge/python's)."""
    if venv == "bridge":
        return ROOT / "bridge" / "python" / ".venv" / "bin" / "python"
    return OUT / "venvs" / venv / "bin" / "python"


def npm_version(package: str) -> str:
    """The version of an npm package installed in bridge/js."""
    pj = ROOT / "bridge" / "js" / "node_modules" / package / "package.json"
    return json.loads(pj.read_text())["version"]


def installed_versions(python: Path, packages: list[str]) -> dict[str, str]:
    """The installed versions of packages in a venv."""
    code = (
        "import json, sys\nfrom importlib import metadata\n"
        "print(json.dumps({p: metadata.version(p) for p in sys.argv[1:]}))"
    )
    out = subprocess.run([str(python), "-c", code, *packages], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def one_line(text: str, limit: int = 220) -> str:
    """The first meaningful line of a failure message, shortened."""
    for line in text.splitlines():
        line = line.strip()
        if line and line not in ("Unexpected error:", "occurred"):
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def roots(harness: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's root causes, each with its tier and its first failing
    spec (text, location and a one-line message)."""
    tiers = {r["id"]: r.get("tier", "") for r in harness.get("rules", [])}
    failed = [s for s in harness.get("specs", []) if s.get("status") == "failed"]
    out = []
    for rule in harness.get("primary_failed_rules") or []:
        spec = next((s for s in failed if rule in s.get("rules", [])), None)
        item: dict[str, Any] = {"rule": rule, "tier": tiers.get(rule, "")}
        if spec:
            ev = spec.get("evidence") or {}
            item["spec"] = spec.get("text", "")
            item["location"] = spec.get("location", "")
            item["message"] = one_line(ev.get("result") or spec.get("message", ""))
            if ev.get("call"):
                item["call"] = ev["call"]
        out.append(item)
    return out


def counts(harness: dict[str, Any]) -> dict[str, int]:
    c: dict[str, int] = {}
    for s in harness.get("specs", []):
        c[s["status"]] = c.get(s["status"], 0) + 1
    c["differs_rules"] = sum(1 for r in harness.get("rules", []) if r.get("status") == "differs")
    return c


def run_one(saver: dict[str, Any], binaries: Path) -> dict[str, Any]:
    """Runs the suite on one saver and returns its compact result: through
    bridge/lgpy's test binary (a Python factory) or bridge/lgjs's (one of
    LangGraph.js's savers, served by bridge/js/server.js)."""
    OUT.mkdir(parents=True, exist_ok=True)
    runner = saver.get("runner", "lgpy")
    binary = binaries / f"{runner}.test"
    report = OUT / f"{saver['id']}.report.json"
    log = OUT / f"{saver['id']}.log"
    report.unlink(missing_ok=True)
    env = dict(os.environ)
    env.update(CHECKPOINTKIT_REPORT_JSON=str(report), CHECKPOINTKIT_REQUIRE_BACKENDS="1")
    if runner == "lgjs":
        env["CHECKPOINTKIT_LGJS_SAVER"] = saver["lgjs_saver"]
    else:
        py = venv_python(saver["venv"])
        env.update(CHECKPOINTKIT_LGPY_FACTORY=saver["factory"], CHECKPOINTKIT_PYTHON=str(py))
    args = [str(binary), "-test.run", "^TestConformance$", "-test.count", "1",
            "-test.timeout", f"{RUN_TIMEOUT + 60}s", "-ginkgo.no-color"]
    print(f"ecosystem: {saver['id']}: {saver['package']} {saver['class']} ...", file=sys.stderr, flush=True)
    start = time.monotonic()
    with log.open("w") as f:
        proc = subprocess.Popen(args, cwd=ROOT / "bridge" / runner, env=env, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = -1
    seconds = round(time.monotonic() - start, 1)
    if runner == "lgjs":
        versions = {saver["package"]: npm_version(saver["package"]),
                    "langgraph-checkpoint": "JS " + npm_version("@langchain/langgraph-checkpoint")}
    else:
        versions = installed_versions(py, [saver["package"], "langgraph-checkpoint"])
    result: dict[str, Any] = {
        "id": saver["id"],
        "language": "JS" if runner == "lgjs" else "Python",
        "package": saver["package"],
        "version": versions[saver["package"]],
        "langgraph_checkpoint": versions["langgraph-checkpoint"],
        "class": saver["class"],
        "backend": saver["backend"],
        "api": saver["api"],
        "seconds": seconds,
        "exit": code,
        "date": datetime.date.today().isoformat(),
    }
    if report.exists():
        h = json.loads(report.read_text())["harnesses"][0]
        result.update(level=h["level"], core_level=h["core_level"], strict_level=h["strict_level"],
                      specs=counts(h), roots=roots(h))
    else:
        tail = log.read_text(errors="replace").splitlines()[-5:]
        result.update(level="NO REPORT", core_level="-", strict_level="-", specs={}, roots=[],
                      error=" | ".join(tail) or ("timed out" if code == -1 else f"exit {code}"))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{saver['id']}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"ecosystem: {saver['id']}: core {result['core_level']}, strict {result['strict_level']}, "
          f"{len(result['roots'])} root cause(s), {seconds}s", file=sys.stderr, flush=True)
    return result


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="ci/ecosystem.d/run.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    pl = sub.add_parser("plan")
    pl.add_argument("--smoke", action="store_true")
    pl.add_argument("savers", nargs="*")
    r = sub.add_parser("run")
    r.add_argument("--binaries", required=True, type=Path, help="folder of lgpy.test and lgjs.test")
    r.add_argument("--smoke", action="store_true")
    r.add_argument("--parallel", type=int, default=1, help="savers run at once")
    r.add_argument("savers", nargs="*")
    rd = sub.add_parser("render")
    rd.add_argument("--results", type=Path, help="folder of results (default ci/ecosystem.d/results)")
    rd.add_argument("--doc", type=Path, help="file to write (default docs/ecosystem.md)")
    a = p.parse_args(argv)
    if a.cmd == "plan":
        for s in select(a.savers, a.smoke):
            print(s["id"], s.get("venv") or s.get("runner", "lgpy"), ",".join(s["backends"]) or "-")
        return 0
    if a.cmd == "run":
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.parallel)) as pool:
            results = list(pool.map(lambda s: run_one(s, a.binaries), select(a.savers, a.smoke)))
        # A run without a report is a breakage of the harness; findings are not.
        return 1 if any(x["level"] == "NO REPORT" for x in results) else 0
    from render import DOC, render

    render(a.results, a.doc or DOC)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main(sys.argv[1:]))
