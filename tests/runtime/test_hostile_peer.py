"""Hostile input never wins: raw bytes over real pipes to an agent built from the generated
stable bindings (tests/support/peers/target_agent.py), each case answered with the exact JSON-RPC error
(or the documented silence for responses and notifications), and the agent still answering a
valid request afterwards (issue 11)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.peers.raw import RawPeer

PARSE, INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS, INTERNAL, CANCELLED = -32700, -32600, -32601, -32602, -32603, -32800
NEW_SESSION = {"cwd": "/w", "mcpServers": []}


def request(request_id: object, method: str = "session/new", params: object = NEW_SESSION, **extra: object) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params, **extra}
    return json.dumps(message).encode() + b"\n"


def raw(text: str) -> bytes:
    return text.encode() + b"\n"


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    answers: tuple[tuple[object, int | None], ...]
    """(id, error code, or None for a result) of every answer expected; empty: the documented silence."""
    result: object = None
    """The result expected, for an answer that is a result (None: not checked)."""


DEEP = 5000
CASES = [
    # not JSON
    Case("not-json", raw("this is not json"), ((None, PARSE),)),
    Case("truncated-json", raw('{"jsonrpc": "2.0", "id": 1, "method": "session/new"'), ((None, PARSE),)),
    Case("invalid-utf8", b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}\n', ((None, PARSE),)),
    Case(
        "nan-literal",
        raw('{"jsonrpc": "2.0", "id": 1, "method": "_test/echo", "params": {"x": NaN}}'),
        ((None, PARSE),),
    ),
    Case(
        "infinity-literal",
        raw('{"jsonrpc": "2.0", "id": 1, "method": "_test/echo", "params": [Infinity]}'),
        ((None, PARSE),),
    ),
    Case("huge-integer", raw('{"jsonrpc": "2.0", "id": ' + "9" * 5000 + ', "method": "x"}'), ((None, PARSE),)),
    # not a JSON-RPC message
    Case("empty-array", raw("[]"), ((None, INVALID_REQUEST),)),
    Case("batch", raw("[" + request(1).decode().strip() + "]"), ((None, INVALID_REQUEST),)),
    Case("string", raw('"hello"'), ((None, INVALID_REQUEST),)),
    Case("number", raw("42"), ((None, INVALID_REQUEST),)),
    Case("null", raw("null"), ((None, INVALID_REQUEST),)),
    Case("empty-object", raw("{}"), ((None, INVALID_REQUEST),)),
    Case("only-jsonrpc", raw('{"jsonrpc": "2.0"}'), ((None, INVALID_REQUEST),)),
    # ids
    Case("id-object", request({"a": 1}), ((None, INVALID_REQUEST),)),
    Case("id-array", request([1]), ((None, INVALID_REQUEST),)),
    Case("id-true", request(True), ((None, INVALID_REQUEST),)),
    Case("id-fraction", request(1.5), ((None, INVALID_REQUEST),)),
    Case("id-beyond-int64", request(2**64), ((None, INVALID_REQUEST),)),
    Case(
        "id-object-on-notification-shape",
        raw('{"jsonrpc": "2.0", "id": {}, "method": "session/cancel"}'),
        ((None, INVALID_REQUEST),),
    ),
    # envelope
    Case("method-number", request(7, method=5), ((7, INVALID_REQUEST),)),  # type: ignore[arg-type]
    Case("method-null", request(8, method=None), ((8, INVALID_REQUEST),)),  # type: ignore[arg-type]
    Case(
        "jsonrpc-1.0",
        raw('{"jsonrpc": "1.0", "id": 9, "method": "session/new", "params": {}}'),
        ((9, INVALID_REQUEST),),
    ),
    Case("jsonrpc-missing", raw('{"id": 10, "method": "session/new", "params": {}}'), ((10, INVALID_REQUEST),)),
    Case(
        "notification-method-number",
        raw('{"jsonrpc": "2.0", "method": 1, "params": "bar"}'),
        ((None, INVALID_REQUEST),),
    ),
    # params
    Case("params-string", request(11, params="bar"), ((11, INVALID_PARAMS),)),
    Case("params-number", request(12, params=3), ((12, INVALID_PARAMS),)),
    Case("params-null", request(13, params=None), ((13, INVALID_PARAMS),)),
    Case("params-array", request(14, params=["/w", []]), ((14, INVALID_PARAMS),)),
    Case("params-invalid", request(15, params={"cwd": 5, "mcpServers": []}), ((15, INVALID_PARAMS),)),
    Case("unknown-method", request(16, method="session/frobnicate"), ((16, NOT_FOUND),)),
    Case("unknown-extension", request(17, method="_acme/unknown"), ((17, NOT_FOUND),)),
    # depth
    Case(
        "brackets-in-strings-are-not-depth",
        request(18, "_test/echo", {"x": "[" * DEEP + "{" * DEEP}),
        ((18, None),),
        {"x": "[" * DEEP + "{" * DEEP},
    ),
    Case(
        "depth-at-the-limit",
        raw('{"jsonrpc": "2.0", "id": 26, "method": "_test/echo", "params": ' + "[" * 511 + "]" * 511 + "}"),
        ((26, None),),
    ),
    Case(
        "deep-array-in-params",
        raw('{"jsonrpc": "2.0", "id": 19, "method": "_test/echo", "params": ' + "[" * DEEP + "]" * DEEP + "}"),
        ((19, INVALID_REQUEST),),
    ),
    Case("deep-top-level", raw("[" * 100_000 + "]" * 100_000), ((None, INVALID_REQUEST),)),
    Case("deep-unbalanced", raw('{"id": 20, "x": ' + "{" * 100_000), ((20, INVALID_REQUEST),)),
    # strings
    Case(
        "lone-surrogate-param",
        raw('{"jsonrpc": "2.0", "id": 21, "method": "session/new", "params": {"cwd": "/w\\ud800", "mcpServers": []}}'),
        ((21, None),),
        {"sessionId": "s-1"},
    ),
    Case(
        "lone-surrogate-echoed",
        raw('{"jsonrpc": "2.0", "id": 27, "method": "_test/echo", "params": {"x": "a\\udc00b"}}'),
        ((27, None),),
        {"x": "a\udc00b"},
    ),
    Case(
        "lone-surrogate-id",
        raw('{"jsonrpc": "2.0", "id": "\\ud83d", "method": "_test/echo", "params": {}}'),
        (("\ud83d", None),),
        {},
    ),
    Case("id-null", request(None, "_test/echo", {"n": 1}), ((None, None),), {"n": 1}),
    Case(
        "id-integral-number",
        raw('{"jsonrpc": "2.0", "id": 28.0, "method": "_test/echo", "params": {}}'),
        ((28, None),),
        {},
    ),
    Case("id-string-digits", request("29", "_test/echo", {}), (("29", None),), {}),
    Case("crlf-line", request(30, "_test/echo", {"y": 2}).replace(b"\n", b"\r\n"), ((30, None),), {"y": 2}),
    # handler failures
    Case("handler-raises", request(22, method="_test/boom", params={}), ((22, INTERNAL),)),
    Case("result-nan", request(23, method="_test/nan", params={}), ((23, INTERNAL),)),
    Case("result-not-json", request(24, method="_test/object", params={}), ((24, INTERNAL),)),
    Case("result-wrong-type", request(25, params={"cwd": "/wrong-result", "mcpServers": []}), ((25, INTERNAL),)),
    # responses and cancellations: dropped
    Case("response-unknown-id", raw('{"jsonrpc": "2.0", "id": 999, "result": {}}'), ()),
    Case("response-id-object", raw('{"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}'), ()),
    Case("response-id-true", raw('{"jsonrpc": "2.0", "id": true, "result": {}}'), ()),
    Case("response-without-result", raw('{"jsonrpc": "2.0", "id": 1}'), ()),
    Case(
        "error-response-id-null", raw('{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}}'), ()
    ),
    Case(
        "cancel-id-object",
        raw('{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": {"a": 1}}}'),
        (),
    ),
    Case("cancel-params-string", raw('{"jsonrpc": "2.0", "method": "$/cancel_request", "params": "x"}'), ()),
    Case(
        "cancel-unknown-id", raw('{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 12345}}'), ()
    ),
    Case("cancel-without-params", raw('{"jsonrpc": "2.0", "method": "$/cancel_request"}'), ()),
    # notifications: never answered
    Case("notification-unknown", raw('{"jsonrpc": "2.0", "method": "no/such", "params": {}}'), ()),
    Case(
        "notification-invalid-params",
        raw('{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 5}}'),
        (),
    ),
    Case("notification-params-string", raw('{"jsonrpc": "2.0", "method": "session/cancel", "params": "x"}'), ()),
    # blank input
    Case("blank-lines", b"\n\n   \n\t\n", ()),
]


def _ids() -> Iterator[str]:
    for case in CASES:
        yield case.name


@pytest.fixture(scope="module")
def peer() -> Iterator[RawPeer]:
    agent = RawPeer()
    yield agent
    assert agent.close() == 0, agent.stderr


def _answers(messages: list[dict[str, object]], case: Case) -> list[tuple[object, int | None]]:
    found: list[tuple[object, int | None]] = []
    for message in messages:
        assert message.get("jsonrpc") == "2.0" and ("error" in message) != ("result" in message), message
        text = json.dumps(message)
        assert "secret" not in text and "Traceback" not in text, message
        if "result" in message:
            if case.result is not None:
                assert message["result"] == case.result
            found.append((message["id"], None))
            continue
        error = message["error"]
        assert isinstance(error, dict) and isinstance(error.get("message"), str), message
        found.append((message["id"], error["code"]))
    return found


@pytest.mark.parametrize("case", CASES, ids=list(_ids()))
def test_hostile_message_gets_its_exact_answer_and_the_agent_lives_on(peer: RawPeer, case: Case) -> None:
    peer.send(case.data)
    probe_id = f"probe-{case.name}"
    peer.send(request(probe_id))
    others: list[dict[str, object]] = []
    probe_answered = False
    while not probe_answered or len(others) < len(case.answers):
        message = peer.read()
        if message.get("id") == probe_id:
            assert message.get("result") == {"sessionId": "s-1"}, message
            probe_answered = True
        else:
            others.append(message)
    assert sorted(_answers(others, case), key=repr) == sorted(case.answers, key=repr)


def _until_id(peer: RawPeer, wanted: object) -> dict[str, object]:
    found = peer.read_until(lambda m: m.get("id") == wanted and ("result" in m or "error" in m))
    assert found[:-1] == [], f"unexpected messages before the answer to {wanted!r}: {found[:-1]}"
    return found[-1]


def _alive(peer: RawPeer, tag: str) -> None:
    peer.send(request(f"alive-{tag}"))
    assert _until_id(peer, f"alive-{tag}")["result"] == {"sessionId": "s-1"}


def test_a_second_request_reusing_a_running_id_is_refused_and_the_first_is_unaffected(peer: RawPeer) -> None:
    peer.send(request("dup", "_test/sleep", {}))
    peer.send(request("dup", "_test/echo", {}))
    assert _until_id(peer, "dup")["error"]["code"] == INVALID_REQUEST  # type: ignore[index]
    _alive(peer, "dup-1")
    peer.send(raw('{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "dup"}}'))
    assert _until_id(peer, "dup")["error"]["code"] == CANCELLED  # type: ignore[index]
    _alive(peer, "dup-2")


def test_a_cancel_naming_true_does_not_cancel_request_1(peer: RawPeer) -> None:
    peer.send(request(1, "_test/sleep", {}))
    peer.send(raw('{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": true}}'))
    peer.send(raw('{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "1"}}'))
    _alive(peer, "cancel-true")
    peer.send(raw('{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}'))
    assert _until_id(peer, 1)["error"]["code"] == CANCELLED  # type: ignore[index]


def test_answers_with_a_malformed_or_foreign_id_never_settle_the_agents_request(peer: RawPeer) -> None:
    peer.send(request("ask", "_test/ask-client", {}))
    asked = peer.read()
    assert asked["method"] == "fs/read_text_file" and type(asked["id"]) is int, asked
    own = asked["id"]
    for wrong_id in (True, str(own), {"id": own}, [own], own + 1):
        peer.send_message({"jsonrpc": "2.0", "id": wrong_id, "result": {"content": "wrong"}})
    _alive(peer, "ask")
    peer.send_message({"jsonrpc": "2.0", "id": own, "result": {"content": "right"}})
    assert _until_id(peer, "ask")["result"] == {"content": "right"}


@pytest.mark.parametrize("with_id", [True, False], ids=["with-id", "without-id"])
def test_a_message_over_32_mib_is_refused_and_the_agent_reads_on(peer: RawPeer, with_id: bool) -> None:
    head = '{"jsonrpc": "2.0", "id": 77, ' if with_id else '{"jsonrpc": "2.0", '
    peer.send((head + '"method": "_test/echo", "params": {"x": "').encode() + b"y" * (33 * 1024 * 1024) + b'"}}\n')
    answer = _until_id(peer, 77 if with_id else None)
    assert answer["error"]["code"] == INVALID_REQUEST  # type: ignore[index]
    _alive(peer, f"big-{with_id}")


def test_end_of_input_while_requests_run_ends_the_agent_cleanly() -> None:
    agent = RawPeer()
    agent.send(request("long", "_test/sleep", {}))
    agent.send(request("ask", "_test/ask-client", {}))
    assert agent.read()["method"] == "fs/read_text_file"  # the agent now waits for us, and we leave
    assert agent.close() == 0, agent.stderr
