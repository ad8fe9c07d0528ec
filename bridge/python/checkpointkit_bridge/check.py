"""`python -m checkpointkit_bridge check module:factory`: judge a Python
saver with checkpointkit's conformance suite, with no Go code to write.

It builds the Go test binary of bridge/lgpy once (`go test -c`), keeps it in
a cache folder keyed by a hash of the Go sources, and runs it with
CHECKPOINTKIT_LGPY_FACTORY set to the factory, this interpreter as
CHECKPOINTKIT_PYTHON, and the current folder on PYTHONPATH (so the
factory's module imports as it does here). It prints the conformance
report: the level, the root causes to fix first and the capability table.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

MODULE = "github.com/checkpointkit/checkpointkit"
# Folders that hold no sources of the Go test binary.
_PRUNE = {".git", "node_modules", ".venv", "out", "__pycache__", "js", "python", "docs"}
# Files the binary is built from: Go sources and what they embed.
_SUFFIXES = (".go", ".json", ".sql")
_NAMES = {"go.mod", "go.sum", "SPEC.md"}


def repo_root() -> Path:
    """The checkpointkit checkout this package lives in (or CHECKPOINTKIT_ROOT)."""
    env = os.environ.get("CHECKPOINTKIT_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[3]
    gomod = root / "go.mod"
    if not gomod.is_file() or f"module {MODULE}" not in gomod.read_text():
        raise SystemExit(f"check: {root} is not a checkpointkit checkout (set CHECKPOINTKIT_ROOT)")
    return root


def source_hash(root: Path) -> str:
    """A hash of every file the test binary is built from."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _PRUNE)
        for name in sorted(filenames):
            if name.endswith(_SUFFIXES) or name in _NAMES:
                p = Path(dirpath, name)
                h.update(str(p.relative_to(root)).encode())
                h.update(b"\0")
                h.update(p.read_bytes())
                h.update(b"\0")
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("CHECKPOINTKIT_CACHE", Path(base) / "checkpointkit"))


def test_binary(root: Path) -> Path:
    """The bridge/lgpy test binary for the current sources, built if needed."""
    go = shutil.which("go")
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    if go is None:
        built = sorted(cache.glob("lgpy-*.test"), key=lambda p: p.stat().st_mtime)
        if built:
            print(f"check: go is not installed; using {built[-1]}", file=sys.stderr)
            return built[-1]
        raise SystemExit("check: needs Go (https://go.dev/dl/) to build the conformance suite once")
    binary = cache / f"lgpy-{source_hash(root)}.test"
    if binary.exists():
        return binary
    print(f"check: building the conformance suite into {binary} (once per source change)...", file=sys.stderr)
    start = time.monotonic()
    tmp = binary.with_suffix(f".tmp{os.getpid()}")
    subprocess.run([go, "test", "-c", "-o", str(tmp), "./bridge/lgpy"], cwd=root, check=True)
    tmp.replace(binary)
    for old in cache.glob("lgpy-*.test"):
        if old != binary:
            old.unlink(missing_ok=True)
    print(f"check: built in {time.monotonic() - start:.0f}s", file=sys.stderr)
    return binary


def report_lines(output: str) -> list[str]:
    """The conformance report of a test run's output: from its title to the
    rules line."""
    lines = output.splitlines()
    out: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("checkpointkit conformance report:"):
            inside = True
            out = []
        if inside:
            out.append(line)
            if line.startswith("  rules:"):
                inside = False
    return out


def check(factory: str, *, focus: str | None = None, json_path: str | None = None, verbose: bool = False) -> int:
    """Run the suite on factory and print the report. Exit status: 0 when
    every spec passed, 1 when some failed (findings), 2 when the run did not
    produce a report."""
    root = repo_root()
    binary = test_binary(root)
    env = dict(os.environ)
    env["CHECKPOINTKIT_LGPY_FACTORY"] = factory
    env["CHECKPOINTKIT_PYTHON"] = sys.executable
    paths = [os.getcwd(), str(root / "bridge" / "python")]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    if json_path:
        env["CHECKPOINTKIT_REPORT_JSON"] = os.path.abspath(json_path)
    args = [str(binary), "-test.run", "^TestConformance$", "-test.count", "1", "-test.timeout", "30m", "-ginkgo.no-color"]
    if focus:
        args += ["-ginkgo.focus", focus]
    if verbose:
        args.append("-test.v")
    proc = subprocess.run(args, cwd=root / "bridge" / "lgpy", env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if verbose:
        print(proc.stdout)
    rep = report_lines(proc.stdout)
    if not rep:
        if not verbose:
            print("\n".join(proc.stdout.splitlines()[-60:]))
        print(f"check: the run of {factory} wrote no report (exit status {proc.returncode})", file=sys.stderr)
        return 2
    if not verbose:
        print("\n".join(rep))
    return 0 if proc.returncode == 0 else 1
