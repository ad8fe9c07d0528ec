"""Tests of render.py: verdicts merge into the table, a root without one is
flagged and counted. Run: python3 -m pytest ci/ecosystem.d (needs pytest)."""

from __future__ import annotations

import json
from pathlib import Path

from render import render


def _result(saver: str, roots: list[tuple[str, str]], core: str = "PARTIAL") -> dict:
    return {
        "id": saver, "language": "Python", "package": f"pkg-{saver}", "version": "1.0", "langgraph_checkpoint": "4.3.2",
        "class": "S", "backend": "files", "api": "sync", "seconds": 12.0, "exit": 1, "date": "2026-11-25",
        "level": core, "core_level": core, "strict_level": "PARTIAL", "specs": {"passed": 3, "failed": 2},
        "roots": [{"rule": r, "tier": t, "message": f"{r} failed | badly"} for r, t in roots],
    }


def test_verdicts_merge_and_missing_ones_are_flagged(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "a.json").write_text(json.dumps(_result("a", [("NS-3", "core"), ("ERR-4", "strict"), ("CONC-6", "strict")])))
    (results / "b.json").write_text(json.dumps(_result("b", [], core="FULL")))
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps({
        "_doc": "ignored",
        "*/ERR-4": {"verdict": "difference", "cause": "negative limit accepted"},
        "a/NS-3": {"verdict": "bug", "cause": "pipes refused", "where": "pkg/saver.py:62"},
    }))
    doc = tmp_path / "ecosystem.md"

    ports = tmp_path / "goports.md"
    ports.write_text("## Go ports\n\nJudged by hand.\n")
    missing = render(results, doc, verdicts, ports)

    text = doc.read_text()
    assert missing == 1
    assert "| NS-3 | core | pipes refused | bug | `pkg/saver.py:62` |" in text
    assert "| ERR-4 | strict | negative limit accepted | LangGraph difference (shared) |  |" in text
    assert "| CONC-6 | strict | CONC-6 failed \\| badly | **no verdict yet** |  |" in text
    assert "**2 savers judged; 1 at LangGraph core FULL (b); 1 bugs found" in text
    assert "| [a](#a) | Python | `pkg-a` (S, sync) | 1.0 | files | PARTIAL | PARTIAL | 3 (1 + 2) | 1 | 12s |" in text
    assert "## Savers that cannot run here" in text
    assert "## Go ports\n\nJudged by hand.\n\n## Savers that cannot run here" in text


def test_core_roots_link_their_reproductions(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "a.json").write_text(json.dumps(_result("a", [("NS-3", "core"), ("CONC-1", "core"), ("CONC-3", "core")])))
    folder = tmp_path / "ecosystem" / "a"
    folder.mkdir(parents=True)
    (folder / "index.json").write_text(json.dumps([
        {"rule": "NS-3", "recorded": 14, "calls": 2, "trace": "NS-3.json", "snippet": "NS-3.py"},
        {"rule": "CONC-1", "skipped": "a race"},
        {"rule": "CONC-3", "skipped": "a race", "snippet": "CONC-3.race.py", "kind": "race",
         "note": "the race program showed the race in this run", "detail": "x: channel values ['id']"},
    ]))
    doc = tmp_path / "ecosystem.md"

    render(results, doc, tmp_path / "none.json")

    text = doc.read_text()
    assert "| 2 of 14 calls: [trace](ecosystem/a/NS-3.json) · [snippet](ecosystem/a/NS-3.py) |" in text
    assert "| none: a race |" in text
    assert ("| race program: [snippet](ecosystem/a/CONC-3.race.py) (the race program showed the race"
            " in this run: x: channel values ['id']) |") in text
