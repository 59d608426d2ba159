"""One incoming line, one pydantic-core call (issue 25, the reading entry point of item 1).

``MessageReader(models.AgentOutgoingMessage, models.ProtocolLevelMessage)`` reads what a client
receives: each line of the realistic turn (``bench/corpus/turn``) must read as the runtime reads it
in two passes today (``connection.decode``, then the method's params model, or the pending
request's result model), with the lenient keywords, extensible unions and lone surrogates of the
models and of the runtime's decoder; what is no JSON raises ``ValueError``, what is no message
``ValidationError``, for the runtime to answer as it does now.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from bench.corpus import load_turn
from tests.support.bindings import models


def _package(variant: str) -> Any:
    return __import__(models(variant).__package__, fromlist=["connection", "dispatch", "methods"])


def _client_reader(variant: str) -> Any:
    bindings, package = models(variant), _package(variant)
    return package.connection.MessageReader(bindings.AgentOutgoingMessage, bindings.ProtocolLevelMessage)


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_every_line_of_a_turn_reads_as_the_runtime_reads_it(variant: str) -> None:
    package, turn = _package(variant), load_turn()
    read = _client_reader(variant)
    specs = {spec.wire: spec for spec in package.methods.METHODS}
    pending = turn.pending()
    for line in turn.received:
        decoded = package.connection.decode(line, 512)
        message = read(line)
        if "method" in decoded:
            expected = TypeAdapter(specs[decoded["method"]].params).validate_python(decoded["params"])
            assert (message.method, "id" in decoded) == (decoded["method"], hasattr(message, "id_"))
            assert type(message.params) is type(expected) and message.params == expected
        else:
            result_type = specs[pending[decoded["id"]]].result
            assert message.id_ == decoded["id"] and message.result == TypeAdapter(result_type).validate_python(
                decoded["result"]
            )
        assert message.model_dump(mode="json") == decoded  # the line, jsonrpc member included


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_lone_surrogates_lenient_members_and_refusals(variant: str) -> None:
    read = _client_reader(variant)
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "\ud800 half"}}
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}})
    assert "\\ud800" in line  # a lone surrogate escape: pydantic-core's JSON reader refuses it
    assert read(line.encode()).params.update.content.text == "\ud800 half"
    lenient = b'{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a","_meta":7}}'
    assert read(lenient).params.meta is None  # x-deserialize-default-on-error
    with pytest.raises(ValueError):  # the runtime answers -32700
        read(b'{"jsonrpc":"2.0","method":')
    with pytest.raises(ValidationError):
        read(b"[1, 2]")
    cancel = read(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"r1"}}')
    assert cancel.params.request_id == "r1"


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_nan_where_a_number_is_typed_is_refused(variant: str) -> None:
    # JSON has no NaN or Infinity; pydantic-core's reader takes them, the models refuse them where a
    # number is typed (a model holding one could not write it back): here the lenient cost
    # (x-deserialize-default-on-error) reads as absent
    read = _client_reader(variant)
    update = {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 0.5, "currency": "USD"}}
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}})
    assert read(line.encode()).params.update.cost.amount == 0.5
    for literal in ("NaN", "Infinity", "-Infinity"):
        assert read(line.replace("0.5", literal).encode()).params.update.cost is None
    with pytest.raises(ValidationError):
        models(variant).Cost.model_validate_json(b'{"amount": NaN, "currency": "USD"}')
