"""The server over real pipes: `python -m checkpointkit_bridge serve` as a
subprocess, spoken to line by line."""

from __future__ import annotations

from typing import Any

from conftest import Client, cfg, put_params


def opened(c: Client) -> str:
    return c.call("open")["saver"]


def test_hello_names_the_saver_and_its_capabilities(client: Client) -> None:
    h = client.hello  # type: ignore[attr-defined]
    assert h["protocol"] == "checkpointkit-bridge" and h["version"] == 1
    assert "InMemorySaver" in h["name"] and "langgraph-checkpoint" in h["name"]
    # InMemorySaver overrides none of the optional methods; delta_history is
    # always there (BaseCheckpointSaver has a default).
    assert h["capabilities"] == ["open", "next_version", "delta_history"]


def test_capabilities_follow_the_class_overrides(serve: Any) -> None:
    c = serve("savers:refusing")
    assert c.hello["capabilities"] == ["open", "next_version", "copy_thread", "delta_history"]


def test_put_get_tuple_round_trip_keeps_types(client: Client) -> None:
    s = opened(client)
    values = {"i": 1, "big": {"$int": "9007199254740993"}, "f": {"$float": "2"}, "half": 0.5,
              "b": {"$bytes": "AP8="}, "m": {"$map": {"$k": [None, True, "x"]}}, "n": None}
    out = client.call("put", put_params("1", values), saver=s)
    assert out == {"config": cfg(cid="1")}
    t = client.call("get_tuple", {"config": cfg()}, saver=s)
    assert t["checkpoint"]["channel_values"] == values
    assert t["checkpoint"]["id"] == "1" and t["parent_config"] is None and t["pending_writes"] == []
    assert t["metadata"]["step"] == 1


def test_put_writes_and_pending_writes(client: Client) -> None:
    s = opened(client)
    client.call("put", put_params("1"), saver=s)
    client.call("put_writes", {"config": cfg(cid="1"), "writes": [["a", {"$float": "-0"}]], "task_id": "task", "task_path": ""}, saver=s)
    t = client.call("get_tuple", {"config": cfg(cid="1")}, saver=s)
    assert t["pending_writes"] == [["task", "a", {"$float": "-0"}]]


def test_a_saver_without_task_path_or_dumps_is_called_as_langgraph_calls_it(serve: Any) -> None:
    # LangGraph passes task_path only to a put_writes that takes it, and the
    # server's serde wrapper offers only what the saver's serde has.
    c = serve("savers:old_style")
    s = opened(c)
    c.call("put", put_params("1"), saver=s)
    c.call("put_writes", {"config": cfg(cid="1"), "writes": [["a", 1]], "task_id": "task", "task_path": "~x"}, saver=s)
    assert c.call("get_tuple", {"config": cfg(cid="1")}, saver=s)["pending_writes"] == [["task", "a", 1]]


def test_non_utf8_ts_travels_as_the_same_bytes(serve: Any) -> None:
    c = serve("savers:keeping")
    s = opened(c)
    c.call("put", put_params("1", ts={"$bytes": "/w=="}), saver=s)
    t = c.call("get_tuple", {"config": cfg()}, saver=s)
    assert t["checkpoint"]["ts"] == {"$bytes": "/w=="}


def put_three(c: Client, s: str) -> None:
    for i, parent in (("1", ""), ("2", "1"), ("3", "2")):
        c.call("put", put_params(i, {"n": int(i)}, parent=parent), saver=s)


def test_list_honours_credit(client: Client) -> None:
    s = opened(client)
    put_three(client, s)
    lid = client.request("list", {"thread_id": "t", "credit": 1}, saver=s)
    first = client.next()
    assert first["id"] == lid and first["item"]["checkpoint"]["id"] == "3"
    # A later request's answer comes while the stream waits for credit.
    barrier = client.request("get_tuple", {"config": cfg()}, saver=s)
    client.reply(barrier)
    assert [m for m in client.seen if m.get("id") == lid] == [first]
    client.send({"id": lid, "credit": 5})
    assert client.reply(lid) == {"id": lid, "result": None}
    ids = [m["item"]["checkpoint"]["id"] for m in client.seen if m.get("id") == lid and "item" in m]
    assert ids == ["3", "2", "1"]


def test_list_params(client: Client) -> None:
    s = opened(client)
    put_three(client, s)

    def listed(**params: Any) -> list[str]:
        rid = client.request("list", params, saver=s)
        assert client.reply(rid)["result"] is None
        return [m["item"]["checkpoint"]["id"] for m in client.seen if m.get("id") == rid and "item" in m]

    assert listed(thread_id="t", limit=2) == ["3", "2"]
    assert listed(thread_id="t", before="3") == ["2", "1"]
    assert listed(thread_id="t", checkpoint_id="2") == ["2"]
    assert listed(thread_id="t", filter={"step": 1}, limit=0) == ["3", "2", "1"]
    assert listed(thread_id="", all_namespaces=True) == ["3", "2", "1"]
    assert listed(thread_id="other") == []


def test_cancel_ends_a_waiting_list_with_canceled(client: Client) -> None:
    s = opened(client)
    put_three(client, s)
    lid = client.request("list", {"thread_id": "t", "credit": 0}, saver=s)
    client.send({"id": lid, "cancel": True})
    assert client.reply(lid)["error"]["code"] == "canceled"
    # The saver is still usable.
    assert client.call("get_tuple", {"config": cfg()}, saver=s)["checkpoint"]["id"] == "3"


def test_next_version(client: Client) -> None:
    s = opened(client)
    v1 = client.call("next_version", {"current": ""}, saver=s)["version"]
    v2 = client.call("next_version", {"current": v1}, saver=s)["version"]
    assert int(v1.split(".")[0]) == 1 and int(v2.split(".")[0]) == 2


def test_protocol_errors(client: Client) -> None:
    s = opened(client)
    assert client.error("frobnicate")["code"] == "bad_request"
    assert client.error("get_tuple", {"config": cfg()}, saver="nope")["code"] == "bad_request"
    bad = put_params("1", {"x": {"$nope": 1}})
    assert client.error("put", bad, saver=s)["code"] == "bad_request"
    assert client.error("copy_thread", {"src": "a", "dst": "b"}, saver=s)["code"] == "unsupported"
    # A strategy without a Python name is refused before the saver is asked.
    assert client.error("prune", {"thread_ids": ["t"], "strategy": "bogus"}, saver=s)["code"] == "invalid_argument"
    assert client.error("prune", {"thread_ids": ["t"], "strategy": "delete_all"}, saver=s)["code"] == "unsupported"
    client.send_raw(b"not json\n")
    m = client.next()
    assert m["id"] == 0 and m["error"]["code"] == "bad_request"
    # Nothing was stored by the refused put.
    assert client.call("get_tuple", {"config": cfg()}, saver=s) is None


def test_saver_exceptions_map_by_type(serve: Any) -> None:
    c = serve("savers:refusing")
    s = opened(c)
    assert c.error("get_tuple", {"config": cfg("value")}, saver=s)["code"] == "invalid_config"
    # list: the config alone, or a filter too.
    assert c.reply(c.request("list", {"thread_id": "value"}, saver=s))["error"]["code"] == "invalid_config"
    assert c.reply(c.request("list", {"thread_id": "value", "filter": {"a": 1}}, saver=s))["error"]["code"] == "invalid_argument"
    assert c.error("put", put_params("1", thread="value"), saver=s)["code"] == "invalid_argument"
    assert c.error("put", put_params("1", thread="serde"), saver=s)["code"] == "unsupported_value"
    e = c.error("get_tuple", {"config": cfg("boom")}, saver=s)
    assert e["code"] == "internal" and "RuntimeError: boom" in e["message"] and "'boom'" in e["message"]
    e = c.error("get_tuple", {"config": cfg("tuple")}, saver=s)
    assert e["code"] == "unsupported_value" and "tuple" in e["message"]
    assert c.error("copy_thread", {"src": "a", "dst": "b"}, saver=s)["code"] == "unsupported"


def test_errors_of_the_savers_serde_are_unsupported_value(serve: Any) -> None:
    c = serve("savers:picky")
    s = opened(c)
    e = c.error("put_writes", {"config": cfg(cid="1"), "writes": [["a", "refuse"]], "task_id": "x", "task_path": ""}, saver=s)
    assert e["code"] == "unsupported_value" and "ValueError" in e["message"]
    c.call("put_writes", {"config": cfg(cid="1"), "writes": [["a", "fine"]], "task_id": "x", "task_path": ""}, saver=s)


def test_deadline_ends_a_read_at_once(serve: Any) -> None:
    c = serve("savers:slow")
    s = opened(c)
    rid = c.request("get_tuple", {"config": cfg("slow")}, saver=s, timeout_ms=20)
    fast = c.request("get_tuple", {"config": cfg("fast")}, saver=s)
    assert c.reply(rid)["error"]["code"] == "deadline_exceeded"
    assert c.reply(fast)["result"] is None
    assert c.error("get_tuple", {"config": cfg()}, saver=s, timeout_ms=0)["code"] == "deadline_exceeded"


def test_open_is_a_read(serve: Any) -> None:
    c = serve("savers:slow_open")
    rid = c.request("open", timeout_ms=20)
    assert c.reply(rid)["error"]["code"] == "deadline_exceeded"
    s = opened(c)
    assert c.call("get_tuple", {"config": cfg()}, saver=s) is None
    assert c.close() == 0


def test_a_started_write_reports_its_outcome(serve: Any) -> None:
    c = serve("savers:slow")
    s = opened(c)
    # The put takes longer than its deadline: it lands, and says so.
    assert c.call("put", put_params("1"), saver=s, timeout_ms=20) == {"config": cfg(cid="1")}
    rid = c.request("put", put_params("2", parent="1"), saver=s)
    c.send({"id": rid, "cancel": True})
    m = c.reply(rid)
    # Cancelled before it started (nothing stored) or after (stored, result).
    stored = c.call("get_tuple", {"config": cfg(cid="2")}, saver=s)
    assert ("result" in m) == (stored is not None), m
    # An expired put is not started at all.
    assert c.error("put", put_params("3", parent="1"), saver=s, timeout_ms=0)["code"] == "deadline_exceeded"
    assert c.call("get_tuple", {"config": cfg(cid="3")}, saver=s) is None


def test_requests_run_concurrently(serve: Any) -> None:
    c = serve("savers:slow")
    s = opened(c)
    slow = c.request("get_tuple", {"config": cfg("slow")}, saver=s)
    fast = c.request("get_tuple", {"config": cfg("fast")}, saver=s)
    first = c.next()
    while "result" not in first and "error" not in first:
        first = c.next()
    assert first["id"] == fast
    assert c.reply(slow)["result"] is None


def test_async_only_saver(serve: Any) -> None:
    c = serve("savers:async_only")
    s = opened(c)
    c.call("put", put_params("1", {"x": 1}), saver=s)
    assert c.call("get_tuple", {"config": cfg()}, saver=s)["checkpoint"]["channel_values"] == {"x": 1}
    rid = c.request("list", {"thread_id": "t"}, saver=s)
    assert c.reply(rid)["result"] is None
    assert [m["item"]["checkpoint"]["id"] for m in c.seen if m.get("id") == rid and "item" in m] == ["1"]


def test_sqlite_factory(serve: Any) -> None:
    c = serve("checkpointkit_bridge.factories:sqlite")
    assert "SqliteSaver" in c.hello["name"]
    s1, s2 = opened(c), opened(c)
    c.call("put", put_params("1", {"x": 1}), saver=s1)
    # Every open has storage of its own.
    assert c.call("get_tuple", {"config": cfg()}, saver=s2) is None
    assert c.call("close", saver=s1) is None
    assert c.error("get_tuple", {"config": cfg()}, saver=s1)["code"] == "bad_request"


def test_end_of_input_exits_zero(client: Client) -> None:
    opened(client)
    assert client.close() == 0


def test_a_refused_delta_history_config_is_invalid_config() -> None:
    from checkpointkit_bridge import hosting

    # A saver refusing a history read can only be refusing its config.
    assert hosting.error_code(ValueError("thread_id=''"), "delta_history", {"channels": ["m"]}) == "invalid_config"
    assert hosting.error_code(ValueError("bad value"), "put_writes", {}) == "invalid_argument"
