"""Test helpers for BridgeSaver's tests: the cmd/checkpointkit-saver binary
and the adapters whose servers this run has.

CHECKPOINTKIT_SAVER_BIN names the built server; without it the tests build
cmd/checkpointkit-saver once into a temporary directory. postgres and mongo
need CHECKPOINTKIT_POSTGRES_DSN and CHECKPOINTKIT_MONGO_URI: without them
their tests are skipped, unless CI or CHECKPOINTKIT_REQUIRE_BACKENDS is set,
when they fail (a skipped backend is an untested backend).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import tempfile
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
ADAPTERS = ("memory", "sqlite", "postgres", "mongo")
_NEEDS = {"postgres": "CHECKPOINTKIT_POSTGRES_DSN", "mongo": "CHECKPOINTKIT_MONGO_URI"}

_build_lock = threading.Lock()
_built: str | None = None


def saver_bin() -> str:
    """The cmd/checkpointkit-saver binary: $CHECKPOINTKIT_SAVER_BIN, else built once for this run."""
    global _built
    env = os.environ.get("CHECKPOINTKIT_SAVER_BIN")
    if env:
        return env
    with _build_lock:
        if _built is None:
            out = pathlib.Path(tempfile.mkdtemp(prefix="ck-saver-bin-")) / "checkpointkit-saver"
            subprocess.run(["go", "build", "-o", str(out), "./cmd/checkpointkit-saver"], cwd=ROOT, check=True)
            _built = str(out)
        return _built


def require_adapter(adapter: str) -> None:
    """Skip (or, in CI, fail) the calling test when adapter's server is not configured."""
    env = _NEEDS.get(adapter)
    if env is None or os.environ.get(env):
        return
    if os.environ.get("CI") or os.environ.get("CHECKPOINTKIT_REQUIRE_BACKENDS"):
        pytest.fail(f"{env} is not set but CI / CHECKPOINTKIT_REQUIRE_BACKENDS requires the {adapter} adapter")
    pytest.skip(f"{env} is not set (run under ci/backends postgres mongo -- ...)")
