"""The parts of `python -m checkpointkit_bridge check` that need no Go build."""

from __future__ import annotations

from pathlib import Path

from checkpointkit_bridge import check

OUTPUT = """=== RUN   TestConformance
noise
checkpointkit conformance report: lgpy x:y (seed 1)
  LangGraph core: FULL   strict: FULL
  capability       status
  rules: 141 passed, 0 failed (root causes)
--- PASS: TestConformance
"""


def test_report_lines_are_the_report_only() -> None:
    lines = check.report_lines(OUTPUT)
    assert lines[0].startswith("checkpointkit conformance report: lgpy x:y")
    assert lines[-1].startswith("  rules: 141 passed")
    assert check.report_lines("no report here") == []


def test_source_hash_follows_the_go_sources_only(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module github.com/checkpointkit/checkpointkit\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "a.go").write_text("package a\n")
    (tmp_path / ".venv").mkdir()
    first = check.source_hash(tmp_path)
    (tmp_path / ".venv" / "b.go").write_text("package b\n")
    (tmp_path / "a" / "notes.txt").write_text("not a source\n")
    assert check.source_hash(tmp_path) == first
    (tmp_path / "a" / "a.go").write_text("package a // changed\n")
    assert check.source_hash(tmp_path) != first


def test_repo_root_is_the_checkout() -> None:
    root = check.repo_root()
    assert (root / "bridge" / "lgpy" / "lgpy_test.go").is_file()
