"""Fixtures: a bridge server started as `python -m checkpointkit_bridge serve`,
spoken to over its real pipes."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checkpointkit_bridge.wire import message_line, parse_line

HERE = Path(__file__).resolve().parent
WAIT = 30.0  # seconds a test waits for a line before it fails


class Client:
    """Speaks the protocol to a server process: send() writes a message,
    next() reads the next message, reply(id) reads until id's answer."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.ids = iter(range(1, 1 << 30))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(parse_line(line))
        self.lines.put(None)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(message_line(msg))
        self.proc.stdin.flush()

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None, **extra: Any) -> int:
        rid = next(self.ids)
        self.send({"id": rid, "method": method, "params": params or {}, **extra})
        return rid

    def next(self) -> dict[str, Any]:
        msg = self.lines.get(timeout=WAIT)
        if msg is None:
            raise AssertionError("the server closed its stdout")
        self.seen.append(msg)
        return msg

    def reply(self, rid: int) -> dict[str, Any]:
        """The answer (result or error) of request rid; other messages are kept in seen."""
        for m in self.seen:
            if m.get("id") == rid and ("result" in m or "error" in m):
                return m
        while True:
            m = self.next()
            if m.get("id") == rid and ("result" in m or "error" in m):
                return m

    def call(self, method: str, params: dict[str, Any] | None = None, **extra: Any) -> Any:
        """The result of a request; fails the test on an error answer."""
        m = self.reply(self.request(method, params, **extra))
        assert "result" in m, m
        return m["result"]

    def error(self, method: str, params: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
        """The error of a request; fails the test on a result."""
        m = self.reply(self.request(method, params, **extra))
        assert "error" in m, m
        return m["error"]

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=WAIT)


def start(factory: str) -> Client:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(HERE.parent), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "checkpointkit_bridge", "serve", factory],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    return Client(proc)


@pytest.fixture
def serve() -> Iterator[Any]:
    """serve(factory) starts a server for factory and says hello; every
    server is ended (stdin closed) after the test."""
    clients: list[Client] = []

    def _serve(factory: str = "checkpointkit_bridge.factories:memory") -> Client:
        c = start(factory)
        clients.append(c)
        c.hello = c.call("hello", {"version": 1})  # type: ignore[attr-defined]
        return c

    yield _serve
    for c in clients:
        if c.proc.poll() is None:
            c.close()


@pytest.fixture
def client(serve: Any) -> Client:
    """A server of InMemorySaver."""
    return serve()


def cfg(thread: str = "t", ns: str = "", cid: str = "") -> dict[str, str]:
    return {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": cid}


def checkpoint(cid: str, values: dict[str, Any] | None = None, ts: Any = "2026-01-01T00:00:00+00:00") -> dict[str, Any]:
    values = values or {}
    return {
        "v": 4,
        "id": cid,
        "ts": ts,
        "channel_values": values,
        "channel_versions": {k: "1" for k in values},
        "versions_seen": {},
        "updated_channels": None,
    }


def put_params(cid: str, values: dict[str, Any] | None = None, thread: str = "t", parent: str = "", **kw: Any) -> dict[str, Any]:
    cp = checkpoint(cid, values, **kw)
    return {"config": cfg(thread, "", parent), "checkpoint": cp, "metadata": {"step": 1}, "new_versions": cp["channel_versions"]}
