"""Newline-delimited JSON framing of the bridge protocol.

message_line writes a message in the canonical form that
bridge/testdata/vectors/README.md defines (one line, members sorted by code
point, JavaScript's string escapes plus U+2028/U+2029, floats in
ECMAScript's spelling), so that the Go, JavaScript and Python
implementations write the same bytes for the same message.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .codec import BadRequest, format_float, type_name

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_NEEDS_ESCAPE = re.compile('[\\x00-\\x1f"\\\\\u2028\u2029]')


def _escape(m: re.Match[str]) -> str:
    c = m.group(0)
    return _ESCAPES.get(c) or f"\\u{ord(c):04x}"


def _string(s: str, out: list[str]) -> None:
    out.append('"')
    out.append(_NEEDS_ESCAPE.sub(_escape, s))
    out.append('"')


def _dump(v: Any, out: list[str]) -> None:
    t = type(v)
    if t is str:
        _string(v, out)
    elif v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif t is int:
        out.append(str(v))
    elif t is float:
        if not math.isfinite(v):
            raise ValueError(f"wire: float {v!r} has no JSON form (encode it as a value first)")
        out.append(format_float(v))
    elif t is dict:
        out.append("{")
        first = True
        for k, e in sorted(v.items()):
            if type(k) is not str:
                raise ValueError(f"wire: key {k!r} is not a string")
            if not first:
                out.append(",")
            first = False
            _string(k, out)
            out.append(":")
            _dump(e, out)
        out.append("}")
    elif t is list or t is tuple:
        out.append("[")
        for i, e in enumerate(v):
            if i:
                out.append(",")
            _dump(e, out)
        out.append("]")
    else:
        raise ValueError(f"wire: {type_name(v)} is not a JSON tree")


def dumps(tree: Any) -> str:
    """The canonical JSON text of a JSON tree (dict, list, str, int, finite
    float, bool, None)."""
    out: list[str] = []
    _dump(tree, out)
    return "".join(out)


def message_line(msg: dict[str, Any]) -> bytes:
    """The wire line of a message: UTF-8 JSON ending in a newline."""
    return (dumps(msg) + "\n").encode("utf-8")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_decoder = json.JSONDecoder(parse_constant=_no_constant)


def parse_line(line: bytes | str) -> dict[str, Any]:
    """The message of one wire line; BadRequest when it is not UTF-8 or not a
    JSON object."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as err:
            raise BadRequest(f"line is not UTF-8: {err}") from None
    try:
        msg = _decoder.decode(line.strip())
    except ValueError as err:
        raise BadRequest(f"line is not JSON: {err}") from None
    if type(msg) is not dict:
        raise BadRequest(f"line is not a JSON object but {type_name(msg)}")
    return msg
