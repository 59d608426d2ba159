"""The benchmark corpus (``bench/corpus``) is valid ACP: every payload validates against the
schema (the stable one, or else the unstable one), its envelope validates as the JSON-RPC
message it is and names the right method, and it round-trips from JSON bytes (what the
benchmark parses) through the models of every build that has its type, both through the adapter
and through the model's own ``model_dump``/``model_dump_json`` with no argument."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from bench.corpus import GROUPS, Message, load
from tests.bindings import ROOT, adapter, wire

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


def _valid(variant: str, def_name: str, value: Any) -> bool:
    doc = _schema(variant)
    if def_name not in doc["$defs"]:
        return False
    validator = Draft202012Validator({"$ref": f"#/$defs/{def_name}", "$defs": doc["$defs"]})
    return validator.is_valid(value)


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
