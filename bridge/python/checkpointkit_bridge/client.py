"""The client side of the checkpointkit bridge protocol (../../PROTOCOL.md).

`BridgeProcess` starts a server as a child process and talks to it over the
child's stdin and stdout, one JSON object per line. Requests are multiplexed
by id: any number of threads and asyncio tasks may call it at once. A reader
thread routes replies to their callers; `list` streams arrive with credit;
a request can be cancelled (asyncio cancellation sends `cancel`) or given a
deadline (sent as `timeout_ms`); a server that dies fails every open call
with the end of its stderr; and the child is killed when this interpreter
exits, however it exits.

    proc = start_saver_process(adapter="sqlite")
    saver_id = proc.request("open", {})["saver"]
    ...
    proc.close()
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import itertools
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from concurrent import futures
from typing import Any

from .codec import (
    CANCELED,
    DEADLINE_EXCEEDED,
    INTERNAL,
    NOT_FOUND,
    UNAVAILABLE,
    UNSUPPORTED,
    BadRequest,
    BridgeError,
    InvalidArgument,
    InvalidConfig,
    UnsupportedValue,
)
from .pending import Call, Stream
from .wire import message_line, parse_line

PROTOCOL = "checkpointkit-bridge"
VERSION = 1

# How long a caller whose deadline passed waits for the server's own answer
# (which reports what really happened, e.g. a write that landed) before it
# gives up on the request.
DEADLINE_GRACE = 2.0


class NotFound(BridgeError, LookupError):
    """The checkpoint does not exist (`not_found`)."""

    code = NOT_FOUND


class Canceled(BridgeError):
    """The request was cancelled (`canceled`)."""

    code = CANCELED


class DeadlineExceeded(BridgeError, TimeoutError):
    """The request's deadline passed (`deadline_exceeded`)."""

    code = DEADLINE_EXCEEDED


class Unavailable(BridgeError, ConnectionError):
    """The saver's backend could not be reached (`unavailable`); the call took effect wholly or not at all."""

    code = UNAVAILABLE


class Unsupported(BridgeError, NotImplementedError):
    """The method or the saver is not supported by the server (`unsupported`)."""

    code = UNSUPPORTED


class ServerExited(BridgeError, ConnectionError):
    """The server process is gone (crashed, killed, or closed); the message ends with its stderr."""

    code = INTERNAL


_ERRORS: dict[str, type[BridgeError]] = {
    cls.code: cls
    for cls in (
        NotFound,
        InvalidConfig,
        InvalidArgument,
        UnsupportedValue,
        Canceled,
        DeadlineExceeded,
        Unavailable,
        Unsupported,
        BadRequest,
    )
}


def bridge_error(code: str, message: str) -> BridgeError:
    """Return the BridgeError subclass instance for a protocol error code."""
    cls = _ERRORS.get(code, BridgeError)
    return cls(message, code)


# Every live child, killed when the interpreter exits.
_live: set[subprocess.Popen[bytes]] = set()
_live_lock = threading.Lock()


def _kill_live() -> None:
    with _live_lock:
        children = list(_live)
    for child in children:
        if child.poll() is None:
            child.kill()


atexit.register(_kill_live)


class BridgeProcess:
    """One server process speaking the bridge protocol, shared by any number of threads and tasks."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        name: str | None = None,
        stderr_lines: int = 30,
        grace: float = 5.0,
        echo_stderr: bool = False,
    ) -> None:
        """Start the server; use `BridgeProcess.start` to also check the protocol with `hello`."""
        if not command:
            raise ValueError("BridgeProcess: no command")
        self.name = name or " ".join(command)
        self.grace = grace
        self.hello: dict[str, Any] = {}
        self.capabilities: frozenset[str] = frozenset()
        self._ids = itertools.count(1)
        self._pending: dict[int, Call] = {}
        self._lock = threading.Lock()  # guards _pending and _exited
        self._write_lock = threading.Lock()
        self._exited: ServerExited | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self._echo_stderr = echo_stderr
        self._child = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        with _live_lock:
            _live.add(self._child)
        self._stderr_thread = threading.Thread(
            target=self._read_stderr, name=f"bridge-stderr-{self._child.pid}", daemon=True
        )
        self._stderr_thread.start()
        self._reader = threading.Thread(
            target=self._read_stdout, name=f"bridge-reader-{self._child.pid}", daemon=True
        )
        self._reader.start()

    @classmethod
    def start(cls, command: Sequence[str], **options: Any) -> BridgeProcess:
        """Start a server, send `hello` and check that it speaks protocol version 1."""
        proc = cls(command, **options)
        try:
            hello = proc.request("hello", {"version": VERSION}, timeout=60)
            if not isinstance(hello, dict) or hello.get("protocol") != PROTOCOL or hello.get("version") != VERSION:
                raise BridgeError(f"{proc.name} answered hello with {hello!r}, want {PROTOCOL} version {VERSION}")
            proc.hello = hello
            proc.capabilities = frozenset(hello.get("capabilities") or ())
        except BaseException:
            proc.close()
            raise
        return proc

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._child.pid

    @property
    def exited(self) -> ServerExited | None:
        """The error open calls failed with once the server is gone, else None."""
        return self._exited

    # --- reading -------------------------------------------------------

    def _read_stderr(self) -> None:
        assert self._child.stderr is not None
        for raw in self._child.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if self._echo_stderr:
                print(line, file=sys.stderr)
            self._stderr_tail.append(line)

    def _read_stdout(self) -> None:
        assert self._child.stdout is not None
        try:
            for raw in self._child.stdout:
                try:
                    msg = parse_line(raw)
                except BadRequest:
                    self._stderr_tail.append(f"[stdout, not a message] {raw[:200]!r}")
                    continue
                self._dispatch(msg)
        finally:
            code = self._child.wait()
            self._stderr_thread.join(timeout=5)
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            self._fail(ServerExited(f"{self.name} (pid {self._child.pid}) {how}{self._tail()}"))

    def _tail(self) -> str:
        lines = list(self._stderr_tail)
        return "; its stderr ends with:\n" + "\n".join(lines) if lines else " (no stderr)"

    def _dispatch(self, msg: dict[str, Any]) -> None:
        id_ = msg.get("id")
        with self._lock:
            call = self._pending.get(id_) if isinstance(id_, int) else None
            if call is None:
                if id_ == 0 and "error" in msg:
                    self._stderr_tail.append(f"[server: unattributed error] {msg['error']}")
                return  # a late reply to a request given up on
            if "item" in msg:
                if call.stream is not None:
                    call.stream.push(msg["item"])
                return
            del self._pending[id_]
        err = msg.get("error")
        if err is not None:
            code = err.get("code") if isinstance(err, dict) else None
            text = err.get("message") if isinstance(err, dict) else str(err)
            call.settle(error=bridge_error(code or INTERNAL, f"{self.name}: {call.method}: {text}"))
        else:
            call.settle(result=msg.get("result"))

    def _fail(self, err: ServerExited) -> None:
        with self._lock:
            if self._exited is None:
                self._exited = err
            calls = list(self._pending.values())
            self._pending.clear()
        with _live_lock:
            _live.discard(self._child)
        for call in calls:
            call.settle(error=err)

    # --- writing -------------------------------------------------------

    def _send(self, msg: dict[str, Any]) -> None:
        data = message_line(msg)
        with self._write_lock:
            if self._exited is not None:
                raise self._exited
            assert self._child.stdin is not None
            try:
                self._child.stdin.write(data)
                self._child.stdin.flush()
            except (ValueError, OSError) as exc:
                broken = exc
            else:
                return
        # The server is gone or going: report how it ended, once the reader knows.
        self._reader.join(timeout=5)
        if self._exited is not None:
            raise self._exited from broken
        raise ServerExited(f"{self.name}: cannot write to the server: {broken}{self._tail()}") from broken

    def _open_call(
        self,
        method: str,
        params: Any,
        *,
        saver: str | None,
        timeout: float | None,
        stream: Stream | None,
    ) -> Call:
        call = Call(next(self._ids), method, stream)
        msg: dict[str, Any] = {"id": call.id, "method": method, "params": params}
        if saver is not None:
            msg["saver"] = saver
        if timeout is not None:
            msg["timeout_ms"] = max(0, int(timeout * 1000))
        with self._lock:
            if self._exited is not None:
                raise self._exited
            self._pending[call.id] = call
        try:
            self._send(msg)
        except BaseException as exc:
            self._forget(call)
            call.settle(error=exc)
            raise
        return call

    def _forget(self, call: Call) -> bool:
        """Stop waiting for call; True if it was still open."""
        with self._lock:
            return self._pending.pop(call.id, None) is not None

    def cancel(self, id: int) -> None:
        """Ask the server to stop request id (no reply of its own)."""
        try:
            self._send({"id": id, "cancel": True})
        except ServerExited:
            pass

    def _give_up(self, call: Call, error: BaseException) -> None:
        """Cancel call on the server and fail it locally, unless its answer came first."""
        if self._forget(call):
            self.cancel(call.id)
            call.settle(error=error)

    # --- sync API ------------------------------------------------------

    def request(self, method: str, params: Any, *, saver: str | None = None, timeout: float | None = None) -> Any:
        """Send a request and wait for its result; raise BridgeError for an error answer.

        With `timeout` (seconds), the server gets the deadline as `timeout_ms`;
        when it passes, the caller waits DEADLINE_GRACE more for the server's
        own answer (which says what really happened) and then cancels the
        request and raises DeadlineExceeded.
        """
        call = self._open_call(method, params, saver=saver, timeout=timeout, stream=None)
        wait = None if timeout is None else timeout + DEADLINE_GRACE
        try:
            # (Not future.result(wait): its TimeoutError is also the base of
            # the server's own DeadlineExceeded.)
            if not futures.wait([call.future], wait).done:
                self._give_up(call, DeadlineExceeded(f"{self.name}: {method}: deadline of {timeout}s exceeded"))
            return call.future.result()
        except KeyboardInterrupt:
            self._give_up(call, Canceled(f"{self.name}: {method}: interrupted"))
            raise

    def stream(
        self,
        method: str,
        params: dict[str, Any],
        *,
        saver: str | None = None,
        timeout: float | None = None,
        credit: int = 64,
    ) -> Iterator[Any]:
        """Run a list-like request and yield its items, granting credit as they are consumed.

        Closing the generator early cancels the request on the server.
        """
        stream = Stream()
        call = self._open_call(method, {**params, "credit": credit}, saver=saver, timeout=timeout, stream=stream)
        deadline = None if timeout is None else time.monotonic() + timeout + DEADLINE_GRACE
        consumed = 0
        try:
            while True:
                try:
                    more, item = stream.next_sync(deadline)
                except TimeoutError:
                    self._give_up(call, DeadlineExceeded(f"{self.name}: {method}: deadline of {timeout}s exceeded"))
                    more, item = stream.next_sync(None)
                if not more:
                    return
                yield item
                consumed += 1
                if consumed >= max(1, credit // 2) and not call.future.done():
                    self._grant(call, consumed)
                    consumed = 0
        finally:
            if not call.future.done():
                self._give_up(call, Canceled(f"{self.name}: {method}: stopped early"))

    def _grant(self, call: Call, k: int) -> None:
        try:
            self._send({"id": call.id, "credit": k})
        except ServerExited:
            pass  # the reader fails the call

    # --- async API -----------------------------------------------------

    async def arequest(
        self, method: str, params: Any, *, saver: str | None = None, timeout: float | None = None
    ) -> Any:
        """Like request, for asyncio: cancelling the awaiting task sends `cancel` to the server."""
        call = self._open_call(method, params, saver=saver, timeout=timeout, stream=None)
        wait = None if timeout is None else timeout + DEADLINE_GRACE
        fut = asyncio.wrap_future(call.future)
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for drops a
            # cancellation that arrives as the awaited result does, and the
            # cancelled task would go on as if nothing happened.
            async with asyncio.timeout(wait):
                return await asyncio.shield(fut)
        except TimeoutError:
            if not call.future.done():
                self._give_up(call, DeadlineExceeded(f"{self.name}: {method}: deadline of {timeout}s exceeded"))
            return await fut
        except asyncio.CancelledError:
            if self._forget(call):
                self.cancel(call.id)
            fut.cancel()
            raise

    async def astream(
        self,
        method: str,
        params: dict[str, Any],
        *,
        saver: str | None = None,
        timeout: float | None = None,
        credit: int = 64,
    ) -> AsyncIterator[Any]:
        """Like stream, for asyncio; cancellation or closing the generator early cancels the request."""
        stream = Stream()
        call = self._open_call(method, {**params, "credit": credit}, saver=saver, timeout=timeout, stream=stream)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout + DEADLINE_GRACE
        consumed = 0
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - loop.time())
                try:
                    async with asyncio.timeout(left):  # not wait_for: see arequest
                        more, item = await stream.next_async()
                except TimeoutError:
                    self._give_up(call, DeadlineExceeded(f"{self.name}: {method}: deadline of {timeout}s exceeded"))
                    more, item = await stream.next_async()
                if not more:
                    return
                yield item
                consumed += 1
                if consumed >= max(1, credit // 2) and not call.future.done():
                    self._grant(call, consumed)
                    consumed = 0
        finally:
            if not call.future.done():
                self._give_up(call, Canceled(f"{self.name}: {method}: stopped early"))

    # --- lifecycle -----------------------------------------------------

    def close(self) -> None:
        """End the session: close the server's stdin, wait `grace` seconds for it to exit, then kill it."""
        child = self._child
        if child.poll() is None:
            with self._write_lock:
                try:
                    assert child.stdin is not None
                    child.stdin.close()
                except OSError:
                    pass
            try:
                child.wait(self.grace)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self._reader.join(timeout=10)
        self._fail(ServerExited(f"{self.name}: closed"))

    async def aclose(self) -> None:
        """close, without blocking the event loop."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> BridgeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> BridgeProcess:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def start_saver_process(
    adapter: str = "memory",
    *,
    bin: str | None = None,
    args: Sequence[str] | None = None,
    **options: Any,
) -> BridgeProcess:
    """Start cmd/checkpointkit-saver serving one of checkpointkit's Go adapters.

    Runs `<bin> -adapter <adapter>` (or `<bin> <args...>`), where bin defaults
    to $CHECKPOINTKIT_SAVER_BIN, a built cmd/checkpointkit-saver
    (`go build -o ci/bin/ ./cmd/checkpointkit-saver`). The postgres and mongo
    adapters read CHECKPOINTKIT_POSTGRES_DSN and CHECKPOINTKIT_MONGO_URI
    from the environment unless args give -postgres-dsn / -mongo-uri.
    """
    bin = bin or os.environ.get("CHECKPOINTKIT_SAVER_BIN")
    if not bin:
        raise RuntimeError(
            "start_saver_process: no saver binary: pass bin= or set CHECKPOINTKIT_SAVER_BIN "
            "to a built cmd/checkpointkit-saver (go build -o ci/bin/ ./cmd/checkpointkit-saver)"
        )
    argv = [bin, *(args if args is not None else ["-adapter", adapter])]
    options.setdefault("name", f"checkpointkit-saver -adapter {adapter}")
    return BridgeProcess.start(argv, **options)
