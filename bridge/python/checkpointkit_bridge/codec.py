"""The typed value encoding of the checkpointkit bridge protocol
(../../PROTOCOL.md) and its error codes, shared by the server and
BridgeSaver; shapes.py builds configs, versions, checkpoints and tuples on it.

Python keeps integers, floats, bytes and strings apart, so every value of
the protocol's model has exactly one Python type here: ``None``, ``bool``,
``int`` (within int64), ``float``, ``str`` (valid UTF-8), ``bytes``,
``list`` and ``dict`` with ``str`` keys, plus LangGraph's ``_DeltaSnapshot``
(a delta channel's snapshot, ``{"$delta": ...}`` on the wire). Nothing else is converted: a tuple,
a set, a datetime, an ``int`` subclass or a dict with non-string keys raises
:class:`UnsupportedValue` naming its type and place, since turning it into
something the wire can carry would hand a different value back.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Mapping
from typing import Any

from .snapshot import DeltaSnapshot as _DeltaSnapshot

# Error codes of the protocol.
NOT_FOUND = "not_found"
INVALID_CONFIG = "invalid_config"
INVALID_ARGUMENT = "invalid_argument"
UNSUPPORTED_VALUE = "unsupported_value"
CANCELED = "canceled"
DEADLINE_EXCEEDED = "deadline_exceeded"
UNAVAILABLE = "unavailable"
UNSUPPORTED = "unsupported"
BAD_REQUEST = "bad_request"
INTERNAL = "internal"

CODES = frozenset(
    {
        NOT_FOUND,
        INVALID_CONFIG,
        INVALID_ARGUMENT,
        UNSUPPORTED_VALUE,
        CANCELED,
        DEADLINE_EXCEEDED,
        UNAVAILABLE,
        UNSUPPORTED,
        BAD_REQUEST,
        INTERNAL,
    }
)


class BridgeError(Exception):
    """An error with a protocol error code (``code``)."""

    code: str = INTERNAL

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class UnsupportedValue(BridgeError, TypeError):
    """A value outside the protocol's value model (code unsupported_value)."""

    code = UNSUPPORTED_VALUE


class BadRequest(BridgeError, ValueError):
    """A malformed message or encoding (code bad_request)."""

    code = BAD_REQUEST


class InvalidConfig(BridgeError, ValueError):
    """A config or identifier that cannot address a checkpoint (code invalid_config)."""

    code = INVALID_CONFIG


class InvalidArgument(BridgeError, ValueError):
    """Another invalid argument, such as a version of the wrong type (code invalid_argument)."""

    code = INVALID_ARGUMENT


INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
MAX_SAFE = (1 << 53) - 1

_TAGS = ("$int", "$float", "$bytes", "$map", "$delta")
_INT_RE = re.compile(r"-?[0-9]+\Z")
_FLOAT_RE = re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?\Z")
_B64_RE = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")


def type_name(v: object) -> str:
    """The qualified name of v's type, for error messages."""
    t = type(v)
    mod = t.__module__
    return t.__qualname__ if mod == "builtins" else f"{mod}.{t.__qualname__}"


def valid_utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def member_path(path: str, k: str) -> str:
    return f"{path}[{k!r}]"


def format_float(x: float) -> str:
    """The canonical decimal form of a finite float: ECMAScript's
    Number::toString spelling, the shortest decimal that reads back as x
    (bridge/testdata/vectors/README.md, "Canonical form")."""
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign, digits, exponent = _shortest(x)
    k = len(digits)
    n = k + exponent  # x = 0.d1...dk * 10^n
    if k <= n <= 21:
        return f"{sign}{digits}{'0' * (n - k)}"
    if 0 < n <= 21:
        return f"{sign}{digits[:n]}.{digits[n:]}"
    if -6 < n <= 0:
        return f"{sign}0.{'0' * -n}{digits}"
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    e = n - 1
    return f"{sign}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def _shortest(x: float) -> tuple[str, str, int]:
    """sign, significant digits (no trailing zeros) and the exponent of the
    last digit of the shortest decimal that reads back as x."""
    r = repr(x)
    sign = ""
    if r.startswith("-"):
        sign, r = "-", r[1:]
    mant, _, e = r.partition("e")
    exponent = int(e) if e else 0
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    exponent -= len(frac)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return sign, stripped, exponent


def _integral_float(x: float) -> str:
    # The text of an integral float in {"$float": ...}: plain digits below
    # 1e21 ("2", "-0"), the exponent form above ("1e+21", "1e+300").
    return format_float(x)


def encode_value(v: Any, path: str = "$") -> Any:
    """The wire form (a JSON-able tree) of a value of the protocol's model.

    Raises UnsupportedValue, naming the type and the path, for anything else.
    """
    t = type(v)
    if v is None or t is bool:
        return v
    if t is str:
        if not valid_utf8(v):
            raise UnsupportedValue(f"value at {path}: string holds a lone surrogate (not valid UTF-8)")
        return v
    if t is int:
        if v < INT64_MIN or v > INT64_MAX:
            raise UnsupportedValue(f"value at {path}: integer {v} overflows int64")
        return v if -MAX_SAFE <= v <= MAX_SAFE else {"$int": str(v)}
    if t is float:
        if math.isnan(v):
            return {"$float": "NaN"}
        if math.isinf(v):
            return {"$float": "Infinity" if v > 0 else "-Infinity"}
        if v.is_integer():
            return {"$float": _integral_float(v)}
        return v
    if t is bytes or t is bytearray:
        return {"$bytes": base64.b64encode(bytes(v)).decode("ascii")}
    if t is list:
        return [encode_value(e, f"{path}[{i}]") for i, e in enumerate(v)]
    if t is _DeltaSnapshot:
        return {"$delta": encode_value(v.value, f"{path}.value")}
    if t is dict:
        out = _encode_entries(v, path)
        if len(out) == 1 and next(iter(out)).startswith("$"):
            return {"$map": out}
        return out
    raise UnsupportedValue(f"value at {path}: type {type_name(v)} is outside the bridge's value model")


def _encode_entries(m: Mapping[Any, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, e in m.items():
        if type(k) is not str:
            raise UnsupportedValue(f"value at {path}: key {k!r} of type {type_name(k)} is not a string")
        if not valid_utf8(k):
            raise UnsupportedValue(f"value at {path}: key {k!r} holds a lone surrogate (not valid UTF-8)")
        out[k] = encode_value(e, member_path(path, k))
    return out


def encode_map(m: Mapping[str, Any] | None, path: str = "$") -> dict[str, Any]:
    """The wire form of an object of values (channel values, metadata, a
    filter): never $map-wrapped. None gives {}."""
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise UnsupportedValue(f"{path}: want a mapping, got {type_name(m)}")
    return _encode_entries(m, path)


def decode_value(w: Any, path: str = "$") -> Any:
    """The Python value of a wire value. Raises BadRequest for a malformed tag."""
    t = type(w)
    if w is None or t is bool:
        return w
    if t is str:
        if not valid_utf8(w):
            raise BadRequest(f"value at {path}: string holds a lone surrogate (not valid UTF-8)")
        return w
    if t is int:
        # An integer literal beyond int64 can only have meant a number.
        return w if INT64_MIN <= w <= INT64_MAX else float(w)
    if t is float:
        return w
    if t is list:
        return [decode_value(e, f"{path}[{i}]") for i, e in enumerate(w)]
    if t is not dict:
        raise BadRequest(f"value at {path}: {type_name(w)} is not JSON")
    if len(w) == 1:
        tag = next(iter(w))
        if tag.startswith("$"):
            return _decode_tag(tag, w[tag], path)
    return _decode_entries(w, path)


def _decode_tag(tag: str, s: Any, path: str) -> Any:
    if tag == "$map":
        if type(s) is not dict:
            raise BadRequest(f"value at {path}: $map wants an object, got {type_name(s)}")
        return _decode_entries(s, path)
    if tag == "$delta":
        return _DeltaSnapshot(decode_value(s, f"{path}.value"))
    if tag not in _TAGS:
        raise BadRequest(
            f"value at {path}: unknown tag {tag!r} (a map whose only key starts with '$' must be wrapped in $map)"
        )
    if type(s) is not str:
        raise BadRequest(f"value at {path}: {tag} wants a string, got {type_name(s)}")
    if tag == "$int":
        if not _INT_RE.match(s):
            raise BadRequest(f"value at {path}: $int {s!r} is not a decimal integer")
        n = int(s)
        if n < INT64_MIN or n > INT64_MAX:
            raise BadRequest(f"value at {path}: $int {s} is outside int64")
        return n
    if tag == "$float":
        if s in ("NaN", "Infinity", "-Infinity"):
            return float(s.lower().replace("infinity", "inf"))
        if not _FLOAT_RE.match(s):
            raise BadRequest(f"value at {path}: $float {s!r} is not a number")
        return float(s)
    if not _B64_RE.match(s) or len(s) % 4 != 0:
        raise BadRequest(f"value at {path}: $bytes is not padded standard base64")
    try:
        return base64.b64decode(s, validate=True)
    except binascii.Error as err:
        raise BadRequest(f"value at {path}: $bytes is not padded standard base64: {err}") from None


def _decode_entries(w: dict[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, e in w.items():
        if not valid_utf8(k):
            raise BadRequest(f"value at {path}: key {k!r} holds a lone surrogate (not valid UTF-8)")
        out[k] = decode_value(e, member_path(path, k))
    return out


def decode_map(w: Any, path: str = "$") -> dict[str, Any]:
    """The Python dict of a wire object of values; its own keys are never
    read as tags. None gives {}."""
    if w is None:
        return {}
    if type(w) is not dict:
        raise BadRequest(f"{path}: want an object, got {type_name(w)}")
    return _decode_entries(w, path)
