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

from tests.bindings import models, schema
from tests.instances import sample

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
