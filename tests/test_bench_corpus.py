"""The benchmark corpus (``bench/corpus``) is valid ACP: every payload validates against the
schema (the stable one, or else the unstable one), its envelope names the right method, and it
round-trips through the models of every build that has its type."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.bindings import ROOT, CorpusMessage, read, wire

BENCH = ROOT / "bench" / "corpus"
GROUPS = {"session-update": 40, "session-prompt": 5, "initialize-response": 3}


def _messages() -> list[CorpusMessage]:
    found = []
    for group in GROUPS:
        for path in sorted((BENCH / group).glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            found.append(CorpusMessage(f"{group}/{path.stem}", group, data["def"], data["payload"], data["message"]))
    return found


MESSAGES = _messages()


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
    for group, least in GROUPS.items():
        assert sum(m.folder == group for m in MESSAGES) >= least, group


def test_session_updates_cover_every_stable_kind() -> None:
    kinds = {m.payload["update"]["sessionUpdate"] for m in MESSAGES if m.folder == "session-update"}
    union = _schema("stable")["$defs"]["SessionUpdate"]["oneOf"]
    stable_kinds = {b["properties"]["sessionUpdate"]["const"] for b in union}
    assert stable_kinds <= kinds


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: m.name)
def test_message_validates_and_round_trips(msg: CorpusMessage) -> None:
    assert msg.message["jsonrpc"] == "2.0"
    variants = [v for v in ("stable", "unstable") if _valid(v, msg.def_name, msg.payload)]
    assert variants, f"{msg.name}: the payload validates against neither schema"
    if "stable" in variants:
        variants = ["stable", "unstable"]  # a stable message must read in both builds
    for variant in variants:
        definition = _schema(variant)["$defs"][msg.def_name]
        if msg.payload_key == "params":
            assert msg.message["method"] == definition["x-method"]
        else:
            assert "method" not in msg.message and "id" in msg.message
        obj = read(variant, msg.def_name, json.loads(json.dumps(msg.payload)))
        assert wire(variant, msg.def_name, obj) == msg.payload
