"""The connection's one-step paths for the messages it sends most (issue 33): each writes what the
general path writes, byte for byte, whatever the ids, names and values; and over a real pipe the
peer reads what was sent."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter

from acpgen.runtime.connection.connection import Connection
from acpgen.runtime.connection.lines import LineTransport
from acpgen.runtime.wire.codec import encode, encode_call, encode_result
from acpgen.runtime.wire.rpc import Deferred, Encoded


class Note(BaseModel):
    model_config = ConfigDict(extra="allow", serialize_by_alias=True)
    text: str
    count: int | None = None


NOTE = TypeAdapter(Note)
VALUES: list[Any] = [
    None,
    Deferred(NOTE.serializer, Note(text="é ✓")),
    Deferred(NOTE.serializer, Note(text="lone \ud800", count=2)),  # written escaped, never lost
    Deferred(NOTE.serializer, Note.model_validate({"text": "x", "unknownMember": [1, {"a": None}]})),
    Encoded(b'{"already":"json"}'),
    {"requestId": 3},
    {"text": "lone \udfff"},
    [1, "two", None],
    "text",
    7,
]
IDS: list[Any] = [1, 0, -5, 2**63 - 1, "abc", "é", "lone \ud800", None]
METHODS = ["session/prompt", "$/cancel_request", "_vendor/é", "_lone \ud800"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("params", VALUES)
def test_a_request_and_a_notification_are_written_as_the_general_path_writes_them(method: str, params: Any) -> None:
    for request_id in (1, 42, 2**63 - 1):
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        assert encode_call(request_id, method, params) == encode(message)
    notification: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        notification["params"] = params
    assert encode_call(None, method, params) == encode(notification)
    json.loads(encode_call(None, method, params))  # JSON, whatever the names and values


@pytest.mark.parametrize("request_id", IDS)
@pytest.mark.parametrize("result", VALUES)
def test_a_result_is_written_as_the_general_path_writes_it(request_id: Any, result: Any) -> None:
    written = encode_result(request_id, result)
    assert written == encode({"jsonrpc": "2.0", "id": request_id, "result": result})
    assert json.loads(written)["id"] == request_id


def test_what_json_cannot_hold_is_refused_as_the_general_path_refuses_it() -> None:
    for bad in (float("nan"), object()):
        with pytest.raises((TypeError, ValueError)):
            encode_call(1, "m", {"x": bad})
        with pytest.raises((TypeError, ValueError)):
            encode_result(1, {"x": bad})


def test_answers_and_requests_cross_a_real_pipe_intact() -> None:
    """Requests with params, without, and notifications one way; answers of the common shape and
    of other shapes (a handler's own key order, an error) the other way."""
    seen: list[dict[str, Any]] = []

    async def agent(message: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(message)
        if "id" not in message:
            return None
        if message["method"] == "reordered":
            return {"result": {"order": "theirs"}, "id": message["id"], "jsonrpc": "2.0"}
        if message["method"] == "failing":
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32000, "message": "no"}}
        params = message.get("params")
        return {"jsonrpc": "2.0", "id": message["id"], "result": Deferred(NOTE.serializer, Note(text=str(params)))}

    async def client(message: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def scenario() -> None:
        left, right = socket.socketpair()
        a_reader, a_writer = await asyncio.open_connection(sock=left)
        b_reader, b_writer = await asyncio.open_connection(sock=right)
        served = Connection(LineTransport(a_reader, a_writer), agent)
        calling = Connection(LineTransport(b_reader, b_writer), client)
        served.start()
        calling.start()
        try:
            assert await calling.request("echo", {"x": "é"}) == {"text": "{'x': 'é'}"}
            assert await calling.request("echo") == {"text": "None"}
            assert await calling.request("reordered", [1]) == {"order": "theirs"}
            with pytest.raises(Exception, match="no"):
                await calling.request("failing")
            await calling.notify("note", {"n": 1})
            await calling.notify("bare")
            assert await calling.request("echo", 5) == {"text": "5"}  # after the notifications
        finally:
            await calling.close()
            await served.close()
        assert [m["method"] for m in seen] == ["echo", "echo", "reordered", "failing", "note", "bare", "echo"]
        assert "params" not in seen[1] and "params" not in seen[5]
        assert seen[4] == {"jsonrpc": "2.0", "method": "note", "params": {"n": 1}}

    asyncio.run(asyncio.wait_for(scenario(), 10))
