"""The benchmark corpus (``bench/corpus``) is valid ACP: every payload validates against the
schema (the stable one, or else the unstable one), its envelope validates as the JSON-RPC
message it is and names the right method, and it round-trips from JSON bytes (what the
benchmark parses) through the models of every build that has its type, both through the adapter
and through the model's own ``model_dump``/``model_dump_json`` with no argument.

The realistic turn (``bench/corpus/turn``) is held to the same, line by line in both
directions (a response read as the result of the request it answers), is stable ACP, and is
exactly what its writer (``bench.turn_writer``) writes."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from bench import turn_writer
from bench.corpus import GROUPS, TURN, Message, load, load_turn
from tests.support.bindings import ROOT, adapter, wire

LEAST = {"session-update": 40, "session-prompt": 5, "initialize-response": 3}
ENVELOPE = {
    "session-update": "AgentNotification",
    "session-prompt": "ClientRequest",
    "initialize-response": "AgentResponse",
}
MESSAGES = [message for group in GROUPS for message in load(group)]


@cache
def _schema(variant: str) -> dict[str, Any]:
    name = "schema.json" if variant == "stable" else "schema.unstable.json"
    doc: dict[str, Any] = json.loads((ROOT / "schema" / "v1" / name).read_text(encoding="utf-8"))
    return doc


@cache
def _validator(variant: str, def_name: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"#/$defs/{def_name}", "$defs": _schema(variant)["$defs"]})


def _valid(variant: str, def_name: str, value: Any) -> bool:
    return def_name in _schema(variant)["$defs"] and _validator(variant, def_name).is_valid(value)


def test_every_group_is_substantial() -> None:
    assert set(LEAST) == set(GROUPS)
    for group, least in LEAST.items():
        assert sum(m.group == group for m in MESSAGES) >= least, group


def test_session_updates_cover_every_stable_kind() -> None:
    kinds = {m.payload["update"]["sessionUpdate"] for m in MESSAGES if m.group == "session-update"}
    union = _schema("stable")["$defs"]["SessionUpdate"]["oneOf"]
    stable_kinds = {b["properties"]["sessionUpdate"]["const"] for b in union}
    assert stable_kinds <= kinds


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: f"{m.group}/{m.name}")
def test_message_validates_and_round_trips(msg: Message) -> None:
    assert msg.message["jsonrpc"] == "2.0"
    variants = [v for v in ("stable", "unstable") if _valid(v, msg.def_name, msg.payload)]
    assert variants, f"{msg.name}: the payload validates against neither schema"
    if "stable" in variants:
        variants = ["stable", "unstable"]  # a stable message must read in both builds
    for variant in variants:
        assert _valid(variant, ENVELOPE[msg.group], msg.message), f"{msg.name}: not a valid {ENVELOPE[msg.group]}"
        definition = _schema(variant)["$defs"][msg.def_name]
        if msg.payload_key == "params":
            assert msg.message["method"] == definition["x-method"]
        else:
            assert "method" not in msg.message and "id" in msg.message
        obj = adapter(variant, msg.def_name).validate_json(msg.payload_bytes)
        assert wire(variant, msg.def_name, obj) == msg.payload
        # a model's own dump, with no argument, is the wire too (camelCase, only what was set)
        assert obj.model_dump(mode="json") == msg.payload
        assert json.loads(obj.model_dump_json()) == msg.payload


# -- the realistic turn -------------------------------------------------------------------------

TRANSCRIPT = load_turn()
TURN_LINES = [
    (direction, index) for direction in ("received", "sent") for index in range(len(getattr(TRANSCRIPT, direction)))
]
TURN_ENVELOPE = {
    ("received", "request"): "AgentRequest",
    ("received", "notification"): "AgentNotification",
    ("received", "response"): "AgentResponse",
    ("sent", "request"): "ClientRequest",
    ("sent", "notification"): "ClientNotification",
    ("sent", "response"): "ClientResponse",
}


def _kind(message: dict[str, Any]) -> str:
    return "response" if "method" not in message else "request" if "id" in message else "notification"


@cache
def _payload_defs() -> dict[tuple[str, str], str]:
    """The stable ``$defs`` type of each method's params and result, by (method, "params" | "result")."""
    found = {}
    for name, definition in _schema("stable")["$defs"].items():
        if "x-method" in definition:
            found[(definition["x-method"], "result" if name.endswith("Response") else "params")] = name
    return found


def _asked(direction: str) -> dict[Any, str]:
    """The method of every request the other side sent, by id (what a response of ``direction`` answers)."""
    if direction == "received":
        return TRANSCRIPT.pending()
    requests = [json.loads(line) for line in TRANSCRIPT.received]
    return {m["id"]: m["method"] for m in requests if _kind(m) == "request"}


def test_turn_is_what_its_writer_writes() -> None:
    for name, data in turn_writer.rendered().items():
        assert (TURN / name).read_bytes() == data, f"{name} is stale: run `uv run python -m bench.turn_writer`"


def test_turn_is_one_long_realistic_turn() -> None:
    received = [json.loads(line) for line in TRANSCRIPT.received]
    assert len(received) >= 300 and sum(map(len, TRANSCRIPT.received)) >= 1_000_000
    updates = [m["params"]["update"] for m in received if m.get("method") == "session/update"]
    kinds = {u["sessionUpdate"] for u in updates}
    assert {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"} <= kinds
    assert {"available_commands_update", "usage_update"} <= kinds
    shown = {c["type"] for u in updates for c in u.get("content") or [] if isinstance(u.get("content"), list)}
    assert {"diff", "terminal", "content"} <= shown
    asked = {m["method"] for m in received if _kind(m) == "request"}
    assert {"session/request_permission", "fs/read_text_file", "terminal/create", "terminal/output"} <= asked
    assert _kind(received[-1]) == "response" and TRANSCRIPT.pending()[received[-1]["id"]] == "session/prompt"
    answered = [json.loads(line)["id"] for line in TRANSCRIPT.sent if "method" not in json.loads(line)]
    assert sorted(answered) == sorted(m["id"] for m in received if _kind(m) == "request")


@pytest.mark.parametrize(("direction", "index"), TURN_LINES, ids=[f"{d}-{i:03d}" for d, i in TURN_LINES])
def test_turn_message_validates_and_round_trips(direction: str, index: int) -> None:
    line = getattr(TRANSCRIPT, direction)[index]
    message = json.loads(line)
    kind = _kind(message)
    assert message["jsonrpc"] == "2.0"
    assert _valid("stable", TURN_ENVELOPE[(direction, kind)], message), (
        f"not a valid {TURN_ENVELOPE[(direction, kind)]}"
    )
    method = _asked(direction)[message["id"]] if kind == "response" else message["method"]
    key = "result" if kind == "response" else "params"
    def_name = _payload_defs()[(method, key)]
    assert _valid("stable", def_name, message[key]), f"the {key} are not a valid {def_name}"
    payload = json.dumps(message[key], ensure_ascii=False, separators=(",", ":")).encode()
    assert payload in line  # the line carries its payload as the wire writes it
    for variant in ("stable", "unstable"):
        obj = adapter(variant, def_name).validate_json(payload)
        assert wire(variant, def_name, obj) == message[key]
