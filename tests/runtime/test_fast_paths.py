"""The connection's one-step paths for the messages it sends most (issue 33): each writes what the
general path writes, byte for byte, whatever the ids, names and values; and over a real pipe the
peer reads what was sent."""

from __future__ import annotations

import asyncio
import importlib
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter

from acpgen.runtime.connection.connection import Connection
from acpgen.runtime.connection.dispatch import Dispatcher, Pending
from acpgen.runtime.connection.limits import Limits
from acpgen.runtime.connection.lines import LineTransport
from acpgen.runtime.wire.codec import (
    Unreadable,
    encode,
    encode_call,
    encode_model_result,
    encode_result,
)
from acpgen.runtime.wire.messages import read_message
from acpgen.runtime.wire.rpc import Deferred, Encoded, MethodSpec, RequestError, read_id


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


@pytest.mark.parametrize("request_id", [None, 0, 7, 2**63 - 1])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("params", [v for v in VALUES if type(v) is Deferred])
def test_a_models_call_is_written_as_the_general_path_writes_it(
    request_id: int | None, method: str, params: Deferred
) -> None:
    """A typed sender's request or notification (the model and its serializer, no ``Deferred``)
    is the line ``encode`` writes for it: unknown members and a lone surrogate included."""
    written = encode_call(request_id, method, params.value, params.serializer)
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    assert written == encode(message)
    assert written == encode_call(request_id, method, params)


@pytest.mark.parametrize("request_id", IDS)
@pytest.mark.parametrize("result", VALUES)
def test_a_result_is_written_as_the_general_path_writes_it(request_id: Any, result: Any) -> None:
    written = encode_result(request_id, result)
    assert written == encode({"jsonrpc": "2.0", "id": request_id, "result": result})
    assert json.loads(written)["id"] == request_id
    if type(result) is Deferred:  # a dispatched request's answer, written without the Deferred
        assert encode_model_result(request_id, result.serializer, result.value, result.warnings) == written


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


class _Waiting:
    """A stdio transport without its optional ``can_send_now`` and ``send_now``: every message goes the
    general way, under the write lock (``ready`` and ``send`` awaited)."""

    def __init__(self, inner: LineTransport) -> None:
        self._inner = inner

    async def receive(self, limit: int) -> Any:
        return await self._inner.receive(limit)

    async def ready(self) -> None:
        await self._inner.ready()

    async def send(self, data: bytes) -> None:
        await self._inner.send(data)

    async def close(self) -> None:
        await self._inner.close()


class _Counting(LineTransport):
    """stdio's transport, counting the messages written at once and those read without awaiting."""

    at_once = 0
    read_at_once = 0

    def send_now(self, data: bytes) -> None:
        type(self).at_once += 1
        super().send_now(data)

    def __init__(self, reader: Any, writer: Any) -> None:
        super().__init__(reader, writer)
        read = self.received  # (the splitter's own method, set per transport)

        def received() -> Any:
            line = read()
            type(self).read_at_once += line is not None
            return line

        self.received = received


async def _conversation(at_once: bool, trace: Any) -> bytes:
    """What a raw peer on a real socket reads from a connection that sends requests (with params,
    without, of every id kind the peer echoes back), notifications and answers (the common shape,
    another key order, an error, a result that is not JSON), given, in one write, requests and
    what is refused (not JSON, not an object, too long, too deep, an id in use), blank lines and
    cancellations."""

    async def handler(message: dict[str, Any]) -> dict[str, Any] | None:
        if "id" not in message:
            return None
        request_id, method = message["id"], message["method"]
        if method == "reordered":
            return {"result": {"order": "theirs"}, "id": request_id, "jsonrpc": "2.0"}
        if method == "failing":
            return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": "no"}}
        if method == "nan":
            return {"jsonrpc": "2.0", "id": request_id, "result": {"x": float("nan")}}
        if method == "slow":
            await asyncio.Event().wait()  # until cancelled
        return {"jsonrpc": "2.0", "id": request_id, "result": Deferred(NOTE.serializer, Note(text=method))}

    left, right = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=left)
    peer_reader, peer_writer = await asyncio.open_connection(sock=right)
    inner = _Counting(reader, writer)
    limits = Limits(max_message_bytes=4096, max_depth=8)
    connection = Connection(inner if at_once else _Waiting(inner), handler, trace=trace, limits=limits)
    connection.start()
    calls = [
        asyncio.ensure_future(connection.request("echo", {"x": "é"})),
        asyncio.ensure_future(connection.request("bare")),
    ]
    await asyncio.sleep(0)  # both written: ids 1 and 2
    await connection.notify("note", Deferred(NOTE.serializer, Note(text="lone \ud800")))
    with pytest.raises(ValueError):
        await connection.request("bad", {"x": float("nan")})  # refused before anything is written
    for n, method in enumerate(("echo", "reordered", "failing", "nan")):
        for request_id in (n, f"abc{n}", f"é{n}", -3 - n, None if n == 0 else 2**63 - 1 - n):
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}) + "\n"
            peer_writer.write(line.encode())
    peer_writer.write(
        b"not json\n[1]\n  \n\n"
        b'{"jsonrpc":"2.0","id":70,"method":"echo","params":"' + b"x" * 5000 + b'"}\n'
        b'{"jsonrpc":"2.0","id":71,"method":"echo","params":' + b"[" * 9 + b"]" * 9 + b"}\n"
        b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"none"}}\n'
        b'{"jsonrpc":"2.0","id":72,"method":"slow"}\n{"jsonrpc":"2.0","id":72,"method":"echo"}\n'
        b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":72}}\n'
    )
    peer_writer.write(  # answers: an id that is no id (true: not 1), one too large, 2 as 2.0
        b'{"jsonrpc":"2.0","id":true,"result":"not 1"}\n{"jsonrpc":"2.0","id":18446744073709551617,"result":"x"}\n'
        b'{"jsonrpc":"2.0","id":1,"result":{"a":1}}\n{"jsonrpc":"2.0","id":2.0,"result":null}\n'
    )
    await peer_writer.drain()
    assert await asyncio.gather(*calls) == [{"a": 1}, None]
    received = b""
    while received.count(b"\n") < 3 + 5 * 4 + 6:
        received += await peer_reader.read(65536)
    await connection.close()
    peer_writer.close()
    return received


def test_a_message_written_at_once_is_the_message_written_in_turn(tmp_path: Any) -> None:
    """Over a real socket, the connection writes the same bytes, in the same order, and traces the
    same messages, whether it writes without awaiting (stdio's ``send_now``) or under its write lock;
    and it does write at once when it can."""
    written, traced = [], []
    for at_once in (True, False):
        trace = tmp_path / f"{at_once}.jsonl"
        _Counting.at_once = _Counting.read_at_once = 0
        written.append(asyncio.run(asyncio.wait_for(_conversation(at_once, trace), 10)))
        assert (_Counting.at_once > 0) is at_once
        assert (_Counting.read_at_once > 0) is at_once
        entries = [json.loads(line) for line in trace.read_text().splitlines()]
        traced.append([(entry["direction"], entry.get("message", entry.get("raw"))) for entry in entries])
    assert written[0] == written[1]
    assert traced[0] == traced[1]
    sent = [json.loads(line) for line in written[0].splitlines()[:3]]
    assert [(m.get("id"), m["method"], m.get("params")) for m in sent] == [
        (1, "echo", {"x": "é"}),
        (2, "bare", None),
        (None, "note", {"text": "lone \ud800"}),
    ]
    answers = [json.loads(line) for line in written[0].splitlines()[3:]]
    by_id: dict[Any, list[Any]] = {}
    for answer in answers:
        by_id.setdefault(json.dumps(answer["id"]), []).append(answer.get("result", answer.get("error")))
    for n, expected in enumerate(({"text": "echo"}, {"order": "theirs"}, -32000, -32603)):  # NaN: -32603
        for request_id in (n, f"abc{n}", f"é{n}", -3 - n, None if n == 0 else 2**63 - 1 - n):
            found = [e if isinstance(expected, dict) else e["code"] for e in by_id.pop(json.dumps(request_id))]
            assert expected in found
            if request_id is None:  # with the refusals of what has no id (in an order eager start may change)
                found.remove(expected)
                assert sorted((e["code"], e["message"]) for e in found) == [
                    (-32700, "Parse error"),
                    (-32600, "Invalid request"),
                ]
            else:
                assert found == [expected]
    assert {key: [(e["code"], e["message"]) for e in value] for key, value in by_id.items()} == {
        "70": [(-32600, "Message too large")],
        "71": [(-32600, "Nesting too deep")],
        "72": [(-32600, "Invalid request"), (-32800, "Request cancelled")],  # the id in use; then cancelled
    }


class _Held:
    """A transport whose ``ready`` waits until released while the test says so; ``can_send_now``
    is true otherwise."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.held = False
        self.release = asyncio.Event()

    async def receive(self, limit: int) -> None:
        await asyncio.Event().wait()

    async def ready(self) -> None:
        if self.held:
            await self.release.wait()

    def can_send_now(self) -> bool:
        return not self.held

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    def send_now(self, data: bytes) -> None:
        self.sent.append(data)

    async def close(self) -> None:
        return None


def test_a_message_is_never_written_at_once_ahead_of_one_waiting_for_its_turn() -> None:
    async def scenario() -> list[bytes]:
        transport = _Held()
        connection = Connection(transport, lambda message: asyncio.sleep(0))  # type: ignore[arg-type,return-value]
        transport.held = True
        first = asyncio.ensure_future(connection.notify("first"))
        await asyncio.sleep(0)  # waits in ready(), holding the write lock
        transport.held = False  # the transport could take a message now...
        second = asyncio.ensure_future(connection.notify("second"))
        await asyncio.sleep(0)
        assert transport.sent == []  # ...but not ahead of the first
        transport.release.set()
        await asyncio.gather(first, second)
        await connection.notify("third")  # at once again
        await connection.close()
        with pytest.raises(ConnectionError):
            await connection.notify("closed")
        return transport.sent

    sent = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert [json.loads(data)["method"] for data in sent] == ["first", "second", "third"]


class Greeting(BaseModel):
    model_config = ConfigDict(strict=True, serialize_by_alias=True)
    name: str


class Greeted(BaseModel):
    model_config = ConfigDict(strict=True, serialize_by_alias=True)
    greeting: str


GREETING_SPECS = (
    MethodSpec("greet", "greet", "agent", "request", Greeting, Greeted, True, None),
    MethodSpec("_vendor/greet", "greet", "agent", "request", Greeting, Greeted, True, None),  # a hook's name
    MethodSpec("absent", "absent", "agent", "request", Greeting, Greeted, True, None),
)


class Greeter:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    async def greet(self, params: Greeting) -> Any:
        self.calls.append(("greet", params))
        if params.name == "dict":
            return {"greeting": "from a dict"}
        if params.name == "wrong":
            return Greeting(name="not a result")
        if params.name == "refused":
            raise RequestError(-32001, "refused", {"why": "asked"})
        if params.name == "failing":
            raise RuntimeError("internal detail")
        if params.name == "none":
            return None
        return Greeted(greeting=f"hello {params.name}")

    async def ext_method(self, method: str, params: Any) -> Any:
        self.calls.append((method, params))
        return {"hooked": params}


_EXPECTED_ANSWERS: list[tuple[dict[str, Any], Any, list[str]]] = [
    ({"jsonrpc": "2.0", "id": 1, "method": "greet", "params": {"name": "ada"}}, {"greeting": "hello ada"}, ["greet"]),
    ({"jsonrpc": "2.0", "id": "s", "method": "greet", "params": {"name": "dict"}}, {"greeting": "from a dict"},
     ["greet"]),
    ({"jsonrpc": "2.0", "id": None, "method": "greet", "params": {"name": "wrong"}}, -32603, ["greet"]),
    ({"jsonrpc": "2.0", "id": 2, "method": "greet", "params": {"name": "refused"}}, -32001, ["greet"]),
    ({"jsonrpc": "2.0", "id": 3, "method": "greet", "params": {"name": "failing"}}, -32603, ["greet"]),
    ({"jsonrpc": "2.0", "id": 4, "method": "greet", "params": {"name": "none"}}, -32603, ["greet"]),
    ({"jsonrpc": "2.0", "id": 5, "method": "greet", "params": {"name": 5}}, -32602, []),
    ({"jsonrpc": "2.0", "id": 6, "method": "greet"}, -32602, []),
    ({"jsonrpc": "2.0", "id": 7, "method": "greet", "params": [1]}, -32602, []),
    ({"jsonrpc": "2.0", "id": 8, "method": "_vendor/greet", "params": {"name": "hook"}}, {"hooked": {"name": "hook"}},
     ["_vendor/greet"]),
    ({"jsonrpc": "2.0", "id": 9, "method": "absent", "params": {"name": "x"}}, -32601, []),
    ({"jsonrpc": "2.0", "id": 10, "method": "unknown", "params": {"name": "x"}}, -32601, []),
    ({"jsonrpc": "2.0", "id": 11, "method": ["greet"], "params": {"name": "x"}}, -32600, []),
    ({"jsonrpc": "2.0", "id": 12, "method": None}, -32600, []),
]  # fmt: skip
"""Requests of every kind a dispatcher meets, what it answers (a result, or an error's code) and the
handler methods it calls: its table, a result that does not fit, a refusal, a failure, no result,
invalid params, a hook's name, a method its handler lacks, an unknown one, no method name."""


@pytest.mark.parametrize(("message", "expected", "called"), _EXPECTED_ANSWERS)
def test_the_dispatchers_entry_point_answers_every_kind_of_request(
    message: dict[str, Any], expected: Any, called: list[str]
) -> None:
    """``handle`` gives a reply at once for what no handler runs for, else the handler's pending
    call; ``dispatch`` (the same, awaited) answers with the result or the error's code, and the
    observers see exactly the params the handler got."""
    greeter, observed = Greeter(), []
    dispatcher = Dispatcher(greeter, GREETING_SPECS, observers={"greet": observed.append})
    handled = dispatcher.handle(message)
    assert isinstance(handled, Pending) is bool(called)
    if isinstance(handled, Pending):
        handled.awaitable.close()  # type: ignore[attr-defined] # (a coroutine, never awaited here)
    greeter.calls.clear()
    observed.clear()
    answer = json.loads(encode(asyncio.run(dispatcher.dispatch(message))))
    assert answer["id"] == message["id"]
    assert answer.get("result", answer.get("error", {}).get("code")) == expected
    assert [name for name, _ in greeter.calls] == called
    assert observed == [params for name, params in greeter.calls if name == "greet"]


class _Forwarding:
    """A sender's requester that is not a ``Connection`` (its own coroutines, each awaited),
    forwarding to one."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    async def request(self, method: str, params: Any = None, *, serializer: Any = None, read: Any = None) -> Any:
        return await self._connection.request(method, params, serializer=serializer, read=read)

    async def notify(self, method: str, params: Any = None, *, serializer: Any = None) -> None:
        await self._connection.notify(method, params, serializer=serializer)


async def _bindings_over_a_socket() -> tuple[Any, Any, Any, asyncio.StreamReader, asyncio.StreamWriter]:
    """The generated bindings' ``models`` and ``senders``, and a started connection of their own
    runtime over a real socket (its handler answers nothing); the peer's streams."""
    models = importlib.import_module("acp_bindings.models")
    senders = importlib.import_module("acp_bindings.senders")
    runtime = importlib.import_module("acp_bindings.connection")  # the bindings' own runtime
    left, right = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=left)
    peer_reader, peer_writer = await asyncio.open_connection(sock=right)
    connection = runtime.Connection(runtime.LineTransport(reader, writer), lambda message: asyncio.sleep(0))
    connection.start()
    return models, senders, connection, peer_reader, peer_writer


async def _typed_calls(direct: bool) -> tuple[bytes, list[Any]]:
    """What a typed sender's calls give (results, or the errors raised) and what the peer reads, over
    a real socket, with the connection reading each result (direct) or the sender."""
    models, senders, connection, peer_reader, peer_writer = await _bindings_over_a_socket()
    sender = senders.AgentSender(connection if direct else _Forwarding(connection))
    sender.advertised(models.AgentCapabilities())  # no image in prompts
    mode = models.SetSessionModeRequest(session_id="s", mode_id="code")
    text = models.PromptRequest.model_validate({"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]})
    image = models.PromptRequest.model_validate(
        {"sessionId": "s", "prompt": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]}
    )
    answers = [
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b'{"jsonrpc":"2.0","id":2,"result":null}',
        b'{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"x":1}}}',
        b'{"jsonrpc":"2.0","id":4,"result":{"stopReason":"no such reason"}}',
        b'{"jsonrpc":"2.0","id":5,"error":{"code":-32001,"message":"refused","data":[1]}}',
        b'{"jsonrpc":"2.0","id":6,"result":[]}',
    ]
    calls = [
        (sender.set_session_mode, mode),
        (sender.set_session_mode, mode),
        (sender.prompt, text),
        (sender.prompt, text),
        (sender.prompt, image),  # refused before anything is written
        (sender.prompt, text),
        (sender.set_session_mode, mode),
    ]
    outcomes: list[Any] = []
    for call, params in calls:
        pending = asyncio.ensure_future(call(params))
        await asyncio.sleep(0)
        if not pending.done():
            peer_writer.write(answers.pop(0) + b"\n")
        try:
            result = await pending
            outcomes.append((type(result).__name__, result.model_dump(by_alias=True, exclude_unset=True)))
        except Exception as error:  # noqa: BLE001 - the errors are compared
            outcomes.append((type(error).__name__, str(error)))
    await connection.close()
    peer_writer.close()
    return await peer_reader.read(), outcomes


def test_a_typed_result_read_by_the_connection_is_the_one_the_sender_reads() -> None:
    """A typed sender over a ``Connection`` has the connection read each result (no coroutine of the
    sender's): the same bytes sent, the same results and the same errors (capability, invalid result,
    error answer) as the sender's own reading over any other transport."""
    direct, general = (asyncio.run(asyncio.wait_for(_typed_calls(way), 10)) for way in (True, False))
    assert direct == general
    kinds = [kind for kind, _ in direct[1]]
    assert kinds == [
        "SetSessionModeResponse",
        "SetSessionModeResponse",
        "PromptResponse",
        "ValidationError",
        "CapabilityError",
        "RequestError",
        "ValidationError",
    ]
    assert direct[1][2][1] == {"stopReason": "end_turn", "_meta": {"x": 1}}
    assert direct[0].count(b"\n") == 6 and b"image" not in direct[0]


@pytest.mark.parametrize(
    "request_id",
    [0, 1, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**70, 1.0, -3.0, 1.5, 2.0**63, True, False, "", "7", None],
)
def test_a_requests_id_is_read_as_read_id_reads_it(request_id: Any) -> None:
    """``read_message`` takes a string or a 64-bit integer id without ``read_id``: every id, at the
    edges of the range too, comes back as ``read_id`` reads it, or is refused when it refuses it."""
    valid, expected = read_id(request_id)
    for message in ({"jsonrpc": "2.0", "id": request_id, "method": "m"}, {"jsonrpc": "2.0", "method": "m"}):
        read = read_message(json.dumps(message).encode(), 64)
        if "id" not in message:
            assert read == {"jsonrpc": "2.0", "method": "m"}
        elif valid:
            assert type(read) is dict and read["id"] == expected and type(read["id"]) is type(expected)
        else:
            assert isinstance(read, Unreadable) and read.error.code == -32600


NOTE_SPECS = (
    MethodSpec("noted", "noted", "client", "notification", Greeting, None, True, None),
    MethodSpec("_vendor/noted", "noted", "client", "notification", Greeting, None, True, None),  # a hook's name
    MethodSpec("absent", "absent", "client", "notification", Greeting, None, True, None),
)


class Noter:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    async def noted(self, params: Greeting) -> None:
        self.calls.append(("noted", params))
        if params.name == "refused":
            raise RequestError(-32001, "refused")
        if params.name == "failing":
            raise RuntimeError("internal detail")

    async def ext_notification(self, method: str, params: Any) -> None:
        self.calls.append((method, params))


_NOTES: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "method": "noted", "params": {"name": "ada"}},
    {"jsonrpc": "2.0", "method": "noted", "params": {"name": "refused"}},
    {"jsonrpc": "2.0", "method": "noted", "params": {"name": "failing"}},
    {"jsonrpc": "2.0", "method": "noted", "params": {"name": 5}},
    {"jsonrpc": "2.0", "method": "noted"},
    {"jsonrpc": "2.0", "method": "_vendor/noted", "params": {"name": "hook"}},
    {"jsonrpc": "2.0", "method": "absent", "params": {"name": "x"}},
    {"jsonrpc": "2.0", "method": "unknown"},
]
"""Notifications of every kind a dispatcher meets (its table, invalid params, a refusal, a failure, a
hook's name, a method its handler lacks, an unknown one)."""


_EXPECTED_NOTES: list[tuple[dict[str, Any], list[str], str | None]] = [
    (_NOTES[0], ["noted"], None),
    (_NOTES[1], ["noted"], "WARNING"),  # refused: logged as such
    (_NOTES[2], ["noted"], "ERROR"),  # failed: logged with its traceback
    (_NOTES[3], [], "WARNING"),  # invalid params
    (_NOTES[4], [], "WARNING"),
    (_NOTES[5], ["_vendor/noted"], None),  # the hook, never the table's route
    (_NOTES[6], [], None),  # its handler lacks the method
    (_NOTES[7], [], None),
    ({"jsonrpc": "2.0", "method": ["noted"]}, [], None),
]
"""What a dispatcher's handler is called with for each notification above, and the worst record it
logs (above DEBUG)."""


@pytest.mark.parametrize(("message", "called", "logged"), _EXPECTED_NOTES)
def test_the_dispatchers_entry_point_handles_every_kind_of_notification(
    message: dict[str, Any], called: list[str], logged: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    """Never an answer; the handler and the observers called alike; refusals and failures logged."""
    noter, observed = Noter(), []
    dispatcher = Dispatcher(noter, NOTE_SPECS, observers={"noted": observed.append})
    with caplog.at_level("DEBUG", logger="acpgen.runtime.connection.dispatch"):
        assert asyncio.run(dispatcher.dispatch(message)) is None
    assert [name for name, _ in noter.calls] == called
    assert observed == [params for name, params in noter.calls if name == "noted"]
    levels = {r.levelname for r in caplog.records} - {"DEBUG"}
    assert levels == ({logged} if logged else set())


class _SlowGreeter(Greeter):
    """A greeter whose ``"slow"`` greeting waits until cancelled."""

    async def greet(self, params: Greeting) -> Any:
        if params.name == "slow":
            self.calls.append(("greet", params))
            await asyncio.Event().wait()
        return await super().greet(params)


async def _serving_over_a_socket(
    dispatcher: Dispatcher, prepared: bool
) -> tuple[Connection, asyncio.StreamReader, asyncio.StreamWriter]:
    """A started connection over a real socket, its handler the dispatcher's ``dispatch``
    (prepared) or a function the connection does not know (general); the peer's streams."""
    left, right = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=left)
    peer_reader, peer_writer = await asyncio.open_connection(sock=right)
    handler = dispatcher.dispatch if prepared else (lambda message: dispatcher.dispatch(message))
    connection = Connection(LineTransport(reader, writer), handler)
    connection.start()
    return connection, peer_reader, peer_writer


async def _answers_over_a_socket(prepared: bool) -> tuple[bytes, list[Any], list[Any], bool]:
    """What the peer reads, over a real socket, when it sends the requests of
    ``test_the_dispatchers_entry_point_answers_every_kind_of_request`` (and one it cancels) to a
    connection whose handler is its dispatcher's ``dispatch`` (prepared) or a function the
    connection does not know (general)."""
    requests: list[dict[str, Any]] = [dict(m, id=n) for n, m in enumerate(_DISPATCHED)]
    requests.append({"jsonrpc": "2.0", "id": "slow", "method": "greet", "params": {"name": "slow"}})
    greeter, observed = _SlowGreeter(), []
    dispatcher = Dispatcher(greeter, GREETING_SPECS, observers={"greet": observed.append})
    connection, peer_reader, peer_writer = await _serving_over_a_socket(dispatcher, prepared)
    for request in requests:
        peer_writer.write(json.dumps(request).encode() + b"\n")
    answers = [await peer_reader.readline() for _ in requests[:-1]]  # all but the slow one
    peer_writer.write(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"slow"}}\n')
    answers.append(await peer_reader.readline())
    await connection.close()
    peer_writer.close()
    return b"".join(answers), greeter.calls, observed, _takes_it(connection, dispatcher)


_DISPATCHED: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "method": "greet", "params": {"name": "ada"}},
    {"jsonrpc": "2.0", "method": "greet", "params": {"name": "dict"}},
    {"jsonrpc": "2.0", "method": "greet", "params": {"name": "wrong"}},
    {"jsonrpc": "2.0", "method": "greet", "params": {"name": "refused"}},
    {"jsonrpc": "2.0", "method": "greet", "params": {"name": "failing"}},
    {"jsonrpc": "2.0", "method": "greet", "params": {"name": "none"}},
    {"jsonrpc": "2.0", "method": "greet", "params": {"name": 5}},
    {"jsonrpc": "2.0", "method": "greet"},
    {"jsonrpc": "2.0", "method": "greet", "params": [1]},
    {"jsonrpc": "2.0", "method": "_vendor/greet", "params": {"name": "hook"}},
    {"jsonrpc": "2.0", "method": "absent", "params": {"name": "x"}},
    {"jsonrpc": "2.0", "method": "unknown", "params": {"name": "x"}},
]


def _takes_it(connection: Connection, dispatcher: Dispatcher) -> bool:
    """Whether the connection hands each message to the dispatcher's entry point itself."""
    return connection._reader._handle == dispatcher.handle


def _both_ways(
    scenario: Callable[[bool], Awaitable[tuple[bytes, list[Any], list[Any], bool]]],
    caplog: pytest.LogCaptureFixture,
) -> list[tuple[bytes, list[Any], list[Any], list[Any]]]:
    """What the peer reads, the handler's calls, the observers' and the connection's log records,
    by the prepared path and by the general one (each checked to be the one meant)."""
    found = []
    for prepared in (True, False):
        caplog.clear()
        with caplog.at_level("DEBUG"):
            written, calls, observed, took_it = asyncio.run(asyncio.wait_for(scenario(prepared), 10))
        assert took_it is prepared
        logged = [
            (r.name, r.levelname, r.getMessage(), r.exc_info[0] if r.exc_info else None)
            for r in caplog.records
            if r.name.startswith("acpgen.runtime.connection")
        ]
        found.append((written, calls, observed, logged))
    return found


def test_a_connection_answers_its_dispatchers_requests_as_dispatch_answers_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A connection whose handler is a dispatcher's ``dispatch`` handles a request of the
    dispatcher's table in the request's task without ``dispatch``'s coroutine
    (``Dispatcher.handle``): over a real socket the peer reads the same answers, byte for byte and
    in the same order, the handler and the observers are called alike and the same records are
    logged (logger, level, message and exception), cancelled requests included."""
    found = _both_ways(_answers_over_a_socket, caplog)
    assert found[0] == found[1]
    answers = [json.loads(line) for line in found[0][0].splitlines()]
    assert [a.get("error", {}).get("code") for a in answers] == [
        None, None, -32603, -32001, -32603, -32603, -32602, -32602, -32602, None, -32601, -32601, -32800,
    ]  # fmt: skip
    assert any(entry[3] is RuntimeError for entry in found[0][3])  # the failing handler, logged


async def _notified_over_a_socket(prepared: bool) -> tuple[bytes, list[Any], list[Any], bool]:
    """What a connection's handler and observers see, and what the peer reads (nothing), when the
    peer sends the notifications above over a real socket to a connection whose handler is its
    dispatcher's ``dispatch`` (prepared) or a function the connection does not know (general)."""
    noter, observed = Noter(), []
    dispatcher = Dispatcher(noter, NOTE_SPECS, observers={"noted": observed.append})
    connection, peer_reader, peer_writer = await _serving_over_a_socket(dispatcher, prepared)
    for notification in [*_NOTES, {"jsonrpc": "2.0", "method": "noted", "params": {"name": "last"}}]:
        peer_writer.write(json.dumps(notification).encode() + b"\n")
    while not noter.calls or noter.calls[-1][1] != Greeting(name="last"):  # handled in order: the last
        await asyncio.sleep(0.01)
    await connection.close()
    peer_writer.close()
    return await peer_reader.read(), noter.calls, observed, _takes_it(connection, dispatcher)


def test_a_connection_handles_its_dispatchers_notifications_as_dispatch_handles_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A connection whose handler is a dispatcher's ``dispatch`` hands a notification of the
    dispatcher's table to the handler without ``dispatch``'s coroutine
    (``Dispatcher.handle``): over a real socket, the handler and the observers are
    called alike, the same records are logged (a refusal, a failure, invalid params) and nothing is
    answered."""
    found = _both_ways(_notified_over_a_socket, caplog)
    assert found[0] == found[1]
    assert found[0][0] == b""  # never an answer
    levels = [entry[1] for entry in found[0][3]]
    assert "WARNING" in levels and "ERROR" in levels  # the refusal and the failure, logged


async def _typed_notifications(direct: bool) -> tuple[bytes, list[Any]]:
    """What a typed sender's notifications give (None, or the error raised) and what the peer
    reads, over a real socket, with the sender writing each at once through its connection
    (direct) or awaiting the connection's ``notify`` (a transport that is not a ``Connection``)."""
    models, senders, connection, peer_reader, peer_writer = await _bindings_over_a_socket()
    client = senders.ClientSender(connection if direct else _Forwarding(connection))
    client.advertised(models.ClientCapabilities())
    agent = senders.AgentSender(connection if direct else _Forwarding(connection))
    notify, written = connection.notify, importlib.import_module("acp_bindings._runtime.connection.connection").SENT
    at_once: list[bool] = []

    def recorded(*args: Any, **options: Any) -> Any:
        sent = notify(*args, **options)
        at_once.append(sent is written)
        return sent

    connection.notify = recorded
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "é \ud800"}}
    notice = {"sessionUpdate": "notice", "severity": "info", "title": "t"}  # gated towards the client
    outcomes: list[Any] = []
    for call, params in [
        (client.session_update, models.SessionNotification.model_validate({"sessionId": "s", "update": chunk})),
        (agent.cancel, models.CancelNotification(session_id="s")),
        (client.session_update, models.SessionNotification.model_validate({"sessionId": "s", "update": notice})),
        (client.session_update, models.SessionNotification.model_validate({"sessionId": "s", "update": chunk})),
    ]:
        try:
            outcomes.append(await call(params))
        except Exception as error:  # noqa: BLE001 - the errors are compared
            outcomes.append((type(error).__name__, str(error)))
    assert at_once == [True, True, True]  # each written at once, the refused never
    await connection.close()
    peer_writer.close()
    return await peer_reader.read(), outcomes


def test_a_typed_notification_written_at_once_is_the_one_notify_writes() -> None:
    """A typed sender over a ``Connection`` has a notification written at once where the connection
    can (``Connection.notify`` gives ``SENT``, nothing to await): the peer reads the same bytes, in the
    same order, and the same refusals are raised as through another requester's coroutine."""
    direct, general = (asyncio.run(asyncio.wait_for(_typed_notifications(way), 10)) for way in (True, False))
    assert direct == general
    assert direct[1][:2] == [None, None] and direct[1][3] is None
    assert direct[1][2][0] == "CapabilityError"
    assert [json.loads(line)["method"] for line in direct[0].splitlines()] == [
        "session/update",
        "session/cancel",
        "session/update",
    ]
