"""A minimal agent is minimal (issue 23, item 3): only what every peer may call is abstract in
``Agent`` and ``Client``; the rest defaults to "method not found", and which is which is derived
from the IR (capability gates, stability, identifiers the handler hands out), not from a list."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acpgen import ir
from tests.generated.test_stubs import module

REQUIRED_AGENT = {"initialize", "new_session", "prompt", "cancel"}
REQUIRED_CLIENT = {"request_permission", "session_update"}


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_only_what_every_peer_may_call_is_abstract(variant: str) -> None:
    interfaces = module(variant, "interfaces")
    assert set(interfaces.Agent.__abstractmethods__) == REQUIRED_AGENT
    assert set(interfaces.Client.__abstractmethods__) == REQUIRED_CLIENT


def test_a_minimal_agent_answers_the_rest_with_method_not_found() -> None:
    interfaces, models, methods = (
        module("stable", "interfaces"),
        module("stable", "models"),
        module("stable", "methods"),
    )
    dispatch = module("stable", "dispatch")

    class Minimal(interfaces.Agent):  # type: ignore[name-defined,misc]
        async def initialize(self, params: Any) -> Any:
            return models.InitializeResponse(protocol_version=1)

        async def new_session(self, params: Any) -> Any:
            return models.NewSessionResponse(session_id="s")

        async def prompt(self, params: Any) -> Any:
            return models.PromptResponse(stop_reason="end_turn")

        async def cancel(self, params: Any) -> None:
            return None

    dispatcher = dispatch.Dispatcher(Minimal(), methods.handled_by("agent", "both"))
    calls = {
        "authenticate": {"methodId": "any"},
        "session/set_mode": {"sessionId": "s", "modeId": "fast"},
        "session/set_config_option": {"sessionId": "s", "configId": "c", "value": "v"},
        "session/load": {"sessionId": "s", "cwd": "/", "mcpServers": []},
    }
    for number, (method, params) in enumerate(calls.items()):
        answer = asyncio.run(dispatcher.dispatch({"jsonrpc": "2.0", "id": number, "method": method, "params": params}))
        error = answer["error"] if isinstance(answer, dict) else answer.error
        code = error["code"] if isinstance(error, dict) else error.code
        assert code == -32601, (method, answer)


# --- the rule, on small schemas -------------------------------------------------------------------

_ID = {"type": "string"}


def _schema(*, styles_required: bool) -> dict[str, Any]:
    """An agent that hands out a thing id in every answer to thing/new, and style ids in a list
    (optional, or required and single)."""
    styles: dict[str, Any] = (
        {"$ref": "#/$defs/StyleId"}
        if styles_required
        else {
            "type": "array",
            "items": {"$ref": "#/$defs/StyleId"},
        }
    )
    obj = {"type": "object"}
    return {
        "$defs": {
            "ThingId": _ID,
            "StyleId": _ID,
            "NewThingRequest": {**obj, "x-method": "thing/new", "x-side": "agent", "properties": {}},
            "NewThingResponse": {
                **obj,
                "x-method": "thing/new",
                "x-side": "agent",
                "properties": {"thingId": {"$ref": "#/$defs/ThingId"}, "styles": styles},
                "required": ["thingId", *(["styles"] if styles_required else [])],
            },
            "UseThingRequest": {
                **obj,
                "x-method": "thing/use",
                "x-side": "agent",
                "properties": {"thingId": {"$ref": "#/$defs/ThingId"}},
                "required": ["thingId"],
            },
            "UseThingResponse": {**obj, "x-method": "thing/use", "x-side": "agent", "properties": {}},
            "SetStyleRequest": {
                **obj,
                "x-method": "style/set",
                "x-side": "agent",
                "properties": {"thingId": {"$ref": "#/$defs/ThingId"}, "styleId": {"$ref": "#/$defs/StyleId"}},
                "required": ["thingId", "styleId"],
            },
            "SetStyleResponse": {**obj, "x-method": "style/set", "x-side": "agent", "properties": {}},
            "ShowThingNotification": {
                **obj,
                "x-method": "thing/show",
                "x-side": "client",
                "properties": {"thingId": {"$ref": "#/$defs/ThingId"}},
                "required": ["thingId"],
            },
        }
    }


def _optional(doc: dict[str, Any]) -> dict[str, str]:
    from acpgen.ir.build import build_protocol
    from acpgen.render.required import optional_methods

    source = ir.Source(package="fixture", version="0", file="schema.json", sha256="0" * 64)
    protocol = build_protocol(doc, variant="stable", source=source, protocol_version=1, unstable_items=frozenset())
    return {wire: why.reason for (wire, _), why in optional_methods(protocol).items()}


def test_a_method_that_needs_an_identifier_the_handler_may_not_hand_out_is_optional() -> None:
    optional = _optional(_schema(styles_required=False))
    assert set(optional) == {"style/set"}
    assert "`StyleId`" in optional["style/set"] and "`thing/new`" in optional["style/set"]


def test_the_same_method_is_required_once_every_answer_hands_the_identifier_out() -> None:
    assert _optional(_schema(styles_required=True)) == {}


def test_an_identifier_handed_out_only_by_an_optional_method_makes_its_users_optional() -> None:
    doc = _schema(styles_required=True)  # thing/new unstable: thing/use and style/set lose their ids
    from acpgen.ir.build import build_protocol
    from acpgen.render.required import optional_methods

    source = ir.Source(package="fixture", version="0", file="schema.json", sha256="0" * 64)
    protocol = build_protocol(
        doc,
        variant="unstable",
        source=source,
        protocol_version=1,
        unstable_items=frozenset({"method:agent:thing/new"}),
    )
    optional = {wire for (wire, _) in optional_methods(protocol)}
    assert optional == {"thing/new", "thing/use", "style/set"}
