"""Tests of checkpointkit_bridge.client against a real cmd/checkpointkit-saver."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from ckbackends import saver_bin

from checkpointkit_bridge.client import (
    BridgeProcess,
    DeadlineExceeded,
    ServerExited,
    start_saver_process,
)
from checkpointkit_bridge.codec import BadRequest, BridgeError, InvalidConfig

LIST_ALL = {
    "thread_id": "",
    "checkpoint_ns": "",
    "all_namespaces": True,
    "checkpoint_id": "",
    "filter": {},
    "before": "",
    "limit": 0,
}


@pytest.fixture(scope="module")
def proc() -> Iterator[BridgeProcess]:
    p = start_saver_process("memory", bin=saver_bin())
    yield p
    p.close()


@pytest.fixture
def saver_id(proc: BridgeProcess) -> Iterator[str]:
    sid = proc.request("open", {})["saver"]
    yield sid
    proc.request("close", {}, saver=sid)


def put(proc: BridgeProcess, sid: str, thread: str, cid: str, parent: str = "") -> None:
    proc.request(
        "put",
        {
            "config": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": parent},
            "checkpoint": {
                "v": 4,
                "id": cid,
                "ts": "2026-01-01T00:00:00+00:00",
                "channel_values": {},
                "channel_versions": {},
                "versions_seen": {},
                "updated_channels": None,
            },
            "metadata": {"source": "loop", "step": 0, "parents": {}},
            "new_versions": {},
        },
        saver=sid,
    )


def test_hello_and_capabilities(proc: BridgeProcess) -> None:
    assert proc.hello["protocol"] == "checkpointkit-bridge"
    assert proc.hello["version"] == 1
    assert {"open", "copy_thread", "delete_for_runs", "prune", "next_version"} <= proc.capabilities


def test_requests_from_many_threads_get_their_own_answers(proc: BridgeProcess, saver_id: str) -> None:
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(25):
                current = n * 1000 + i
                got = proc.request("next_version", {"current": f"{current}.5"}, saver=saver_id)["version"]
                assert int(got.split(".")[0]) == current + 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_requests_from_many_tasks_get_their_own_answers(proc: BridgeProcess, saver_id: str) -> None:
    async def one(n: int) -> int:
        got = await proc.arequest("next_version", {"current": str(n)}, saver=saver_id)
        return int(got["version"].split(".")[0])

    async def main() -> list[int]:
        return await asyncio.gather(*(one(n) for n in range(200)))

    assert asyncio.run(main()) == [n + 1 for n in range(200)]


def test_stream_with_small_credit_yields_every_item_in_order(proc: BridgeProcess, saver_id: str) -> None:
    ids = [f"1ef{n:05d}" for n in range(40)]
    parent = ""
    for cid in ids:
        put(proc, saver_id, "t", cid, parent)
        parent = cid
    got = [item["checkpoint"]["id"] for item in proc.stream("list", LIST_ALL, saver=saver_id, credit=3)]
    assert got == list(reversed(ids))

    async def alist() -> list[str]:
        return [item["checkpoint"]["id"] async for item in proc.astream("list", LIST_ALL, saver=saver_id, credit=1)]

    assert asyncio.run(alist()) == list(reversed(ids))


def test_stream_stopped_early_cancels_the_request(proc: BridgeProcess, saver_id: str) -> None:
    for n in range(10):
        put(proc, saver_id, "t", f"1ef{n:05d}")
    stream = proc.stream("list", LIST_ALL, saver=saver_id, credit=2)
    first = next(stream)
    assert first["checkpoint"]["id"] == "1ef00009"
    stream.close()
    assert proc._pending == {}
    # The session goes on.
    assert proc.request("next_version", {"current": ""}, saver=saver_id)["version"]


def test_cancelling_a_task_cancels_its_request(proc: BridgeProcess, saver_id: str) -> None:
    put(proc, saver_id, "t", "1ef00001")

    async def main() -> None:
        # With no credit the server holds the list open until told more.
        task = asyncio.create_task(proc.arequest("list", {**LIST_ALL, "credit": 0}, saver=saver_id))
        while not proc._pending:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert proc._pending == {}
        assert (await proc.arequest("next_version", {"current": "1"}, saver=saver_id))["version"].startswith("0")

    asyncio.run(main())


def test_sync_deadline_ends_the_request_with_deadline_exceeded(proc: BridgeProcess, saver_id: str) -> None:
    put(proc, saver_id, "t", "1ef00001")
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded) as info:
        proc.request("list", {**LIST_ALL, "credit": 0}, saver=saver_id, timeout=0.2)
    assert isinstance(info.value, TimeoutError)
    assert time.monotonic() - t0 < 5
    with pytest.raises(DeadlineExceeded):
        list(proc.stream("list", LIST_ALL, saver=saver_id, timeout=0.2, credit=0))
    assert proc._pending == {}


def test_async_deadline(proc: BridgeProcess, saver_id: str) -> None:
    put(proc, saver_id, "t", "1ef00001")

    async def main() -> None:
        with pytest.raises(DeadlineExceeded):
            await proc.arequest("list", {**LIST_ALL, "credit": 0}, saver=saver_id, timeout=0.2)

    asyncio.run(main())


def test_error_answers_map_to_python_exceptions(proc: BridgeProcess, saver_id: str) -> None:
    with pytest.raises(BadRequest) as bad:
        proc.request("no_such_method", {}, saver=saver_id)
    assert bad.value.code == "bad_request" and isinstance(bad.value, ValueError)
    with pytest.raises(InvalidConfig) as inv:
        proc.request("get_tuple", {"config": {"thread_id": "", "checkpoint_ns": "", "checkpoint_id": ""}}, saver=saver_id)
    assert isinstance(inv.value, ValueError)
    assert isinstance(inv.value, BridgeError) and "get_tuple" in str(inv.value)


def test_a_dead_server_fails_open_calls_with_its_stderr() -> None:
    p = start_saver_process("memory", bin=saver_bin())
    sid = p.request("open", {})["saver"]
    put(p, sid, "t", "1ef00001")
    result: list[BaseException] = []

    def wait() -> None:
        try:
            p.request("list", {**LIST_ALL, "credit": 0}, saver=sid)
        except BaseException as exc:
            result.append(exc)

    pending = threading.Thread(target=wait)
    pending.start()
    while not p._pending:
        time.sleep(0.001)
    p._child.kill()
    pending.join(10)
    assert len(result) == 1 and isinstance(result[0], ServerExited)
    assert "killed by signal 9" in str(result[0])
    with pytest.raises(ServerExited):
        p.request("next_version", {"current": ""}, saver=sid)
    p.close()


def test_a_server_that_exits_at_once_reports_its_stderr() -> None:
    with pytest.raises(ServerExited) as info:
        BridgeProcess.start(["sh", "-c", "echo 'no database here' >&2; exit 3"])
    assert "exited with status 3" in str(info.value)
    assert "no database here" in str(info.value)


def test_unknown_adapter_is_reported() -> None:
    with pytest.raises(ServerExited) as info:
        start_saver_process("nosuch", bin=saver_bin())
    assert "status 2" in str(info.value)


def test_children_are_killed_when_the_interpreter_exits() -> None:
    code = (
        "import sys\n"
        "from checkpointkit_bridge.client import start_saver_process\n"
        f"p = start_saver_process('memory', bin={saver_bin()!r})\n"
        "print(p.pid, flush=True)\n"
        "sys.exit(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_close_is_idempotent_and_fails_later_calls() -> None:
    p = start_saver_process("memory", bin=saver_bin())
    p.close()
    p.close()
    assert p.exited is not None
    with pytest.raises(ServerExited):
        p.request("hello", {"version": 1})
    assert not _alive(p.pid)
