"""The generated message unions are keyed by ``method``: an envelope's params are read as the
model of the method it names, never as whichever branch of the schema's untagged params union
happens to fit first.

``ClientRequest``, ``AgentRequest``, ``ClientNotification``, ``AgentNotification`` (and the
unstable build's ``ProxyRequest``) carry ``params`` as a union of every method's params; several
of those models take the same JSON (``{"sessionId": ...}`` is a valid ``CloseSessionRequest``,
``DeleteSessionRequest`` and more). What the union accepts is unchanged: params that the named
method's model refuses are still read as the union reads them, as the TypeScript SDK's schemas
(whose params unions hold a member of any value) accept them.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from tests.support.bindings import models, schema
from tests.support.instances import sample

ENVELOPES = ("AgentRequest", "ClientRequest", "AgentNotification", "ClientNotification", "ProxyRequest")


def _params_types(envelope: type[BaseModel]) -> set[Any]:
    """The members of the envelope's ``params`` union: model classes and unions' type aliases."""
    annotation = envelope.model_fields["params"].annotation
    return set(getattr(annotation, "__args__", ())) - {type(None)}


def _cases(variant: str) -> list[tuple[str, str, Any]]:
    """(envelope, method, params type) for every method an envelope's params union holds."""
    bindings = models(variant)
    methods = __import__(f"{bindings.__package__}.methods", fromlist=["METHODS"]).METHODS
    cases = []
    for name in ENVELOPES:
        envelope = getattr(bindings, name, None)
        if envelope is None:
            continue
        request = "id" in envelope.model_fields or "id_" in envelope.model_fields
        held = _params_types(envelope)
        for spec in methods:
            if spec.params in held and (spec.kind == "request") == request:
                cases.append((name, spec.wire, spec.params))
    return cases


def _envelope(method: str, params: Any, request: bool) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request:
        message["id"] = 7
    return json.dumps(message).encode()


def _params(variant: str, params_type: Any, seed: int) -> Any:
    """A valid value of the type's schema definition (``{}`` for a model that requires nothing,
    so that the value is not an extension's)."""
    fields = getattr(params_type, "model_fields", None)
    if fields is not None and not any(f.is_required() for f in fields.values()):
        return {}
    value, _ = sample(schema(variant), params_type.__name__, random.Random(seed), max_depth=2)
    return value


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_params_are_read_as_the_model_of_their_method(variant: str) -> None:
    """Each method's params, wrapped in each envelope that carries them, read as what the
    method's params type reads them as (a union's alias: the branch it picks)."""
    cases = _cases(variant)
    assert len(cases) >= (14 if variant == "stable" else 30), cases
    assert any(not isinstance(t, type) for _, _, t in cases), "a union's alias is among the params types"
    wrong = []
    for seed, (name, method, params_type) in enumerate(cases):
        params = _params(variant, params_type, seed)
        expected = TypeAdapter(params_type).validate_python(params)
        envelope = getattr(models(variant), name)
        read = envelope.model_validate_json(_envelope(method, params, name.endswith("Request")))
        if type(read.params) is not type(expected) or read.params != expected:
            wrong.append(f"{name} {method}: read as {type(read.params).__name__}, expected {type(expected).__name__}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_what_the_method_refuses_is_read_as_the_union_reads_it(variant: str) -> None:
    """``session/prompt`` without its prompt, and a method no model knows, still read (the
    extension member takes them, whole), as the reference reader does."""
    bindings = models(variant)
    not_a_prompt = bindings.ClientRequest.model_validate_json(
        _envelope("session/prompt", {"sessionId": "s", "cwd": "/x"}, request=True)
    )
    assert not isinstance(not_a_prompt.params, bindings.PromptRequest)
    # no params of session/prompt, and none of another method either (ResumeSessionRequest takes
    # this JSON): the extension's, whole
    assert not_a_prompt.params == {"sessionId": "s", "cwd": "/x"}
    unknown = bindings.ClientRequest.model_validate_json(_envelope("_vendor/thing", {"anything": [1]}, request=True))
    assert unknown.params == {"anything": [1]}
    absent = bindings.ClientNotification.model_validate_json(b'{"jsonrpc":"2.0","method":"session/cancel"}')
    assert absent.params is None


# --- the schema's top-level unions (issue 25, item 2) ------------------------------------------

SIDES = {
    "AgentOutgoingMessage": ("AgentRequest", "AgentNotification"),
    "ClientOutgoingMessage": ("ClientRequest", "ClientNotification"),
}


def _top_level_cases(variant: str) -> list[tuple[str, str, str, Any]]:
    """(union, envelope, method, params type) for every method of each side's outgoing messages and of
    the root union (``AcpMessage``), which holds every side's."""
    found = []
    for name, method, params_type in _cases(variant):
        for union, envelopes in SIDES.items():
            if name in envelopes:
                found.append((union, name, method, params_type))
        found.append(("AcpMessage", name, method, params_type))
    return found


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_top_level_unions_read_each_message_as_its_envelope_and_method(variant: str) -> None:
    """A message read through ``AcpMessage`` or a side's outgoing messages is the envelope of the
    side that sends its method, with params read as the method's model: ``session/cancel`` is a
    ``ClientNotification`` with ``CancelNotification`` params, never an ``AgentNotification`` whose
    extension member took them."""
    bindings = models(variant)
    cases = _top_level_cases(variant)
    assert {union for union, *_ in cases} == {*SIDES, "AcpMessage"}
    wrong = []
    for seed, (union, name, method, params_type) in enumerate(cases):
        params = _params(variant, params_type, seed)
        expected = TypeAdapter(params_type).validate_python(params)
        read = TypeAdapter(getattr(bindings, union)).validate_json(_envelope(method, params, name.endswith("Request")))
        if type(read).__name__ != name or type(read.params) is not type(expected) or read.params != expected:
            wrong.append(f"{union} {method}: read as {type(read).__name__}({type(read.params).__name__})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_top_level_unions_read_responses_and_protocol_messages_by_shape(variant: str) -> None:
    bindings = models(variant)
    union = TypeAdapter(bindings.AcpMessage)
    error = union.validate_json(b'{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}')
    assert type(error).__name__ in {"ErrorAgentResponse", "ErrorClientResponse"} and error.error.code == -32601
    result = TypeAdapter(bindings.AgentOutgoingMessage).validate_json(b'{"id":4,"result":{"stopReason":"end_turn"}}')
    assert type(result) is bindings.ResultAgentResponse and type(result.result) is bindings.PromptResponse
    cancel = union.validate_json(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":4}}')
    assert type(cancel) is bindings.ProtocolLevelMessage and cancel.params == bindings.CancelRequestNotification(
        request_id=4
    )
    # a request of a notification's method is still a request (the id decides), as the union reads it
    odd = union.validate_json(b'{"id":5,"method":"session/update","params":{"x":1}}')
    assert type(odd) is bindings.AgentRequest and odd.params == {"x": 1}


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_top_level_unions_are_keyed_by_method_in_pydantic_core(variant: str) -> None:
    """The key is read by pydantic-core itself (a tagged union on ``method``), so a valid message is
    read in one pass, with no Python between the bytes and the models."""
    bindings = models(variant)
    for union in (*SIDES, "AcpMessage"):
        schema = repr(TypeAdapter(getattr(bindings, union)).core_schema)
        assert "'type': 'tagged-union'" in schema and "'discriminator': 'method'" in schema, union


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_top_level_unions_keep_every_member_and_write_the_message_back(variant: str) -> None:
    bindings = models(variant)
    line = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
        },
    }
    for union in ("AgentOutgoingMessage", "AcpMessage"):
        adapter = TypeAdapter(getattr(bindings, union))
        read = adapter.validate_json(json.dumps(line))
        assert adapter.dump_python(read, mode="json", by_alias=True, exclude_unset=True) == line
        assert read.model_dump(mode="json") == line
