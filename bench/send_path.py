"""T2: the send path, from a model to the bytes written on the wire, ours against the official SDK.

The agent's side of the realistic turn: every message the client receives
(``bench/corpus/turn/agent-to-client.ndjson``) is first a model in the agent, read here once
from the corpus on both sides, then sent. Two measures:

- **serialise**: every message of the turn (notifications, requests, the prompt's answer) to
  its line of bytes, without an event loop. Ours: the params or result model held as the
  runtime holds it until it is written (a ``Deferred`` of the model's shared serializer,
  ``adapters.built``: by alias, unset fields left out, straight to JSON), the envelope, then
  the connection's ``encode``. Theirs: ``acp.utils.serialize_params`` (``model_dump`` by alias,
  in JSON mode, without None and defaults) or, for the result, the ``model_dump`` of
  ``Connection._execute_request``, the envelope, then ``json.dumps`` and ``encode`` as
  ``MessageSender.send`` does.
- **through the connection**: the turn's ``session/update`` notifications through the public
  send API of a connection in an event loop, to a transport that takes every byte at once.
  Ours: ``ClientSender.session_update`` over ``Connection``; theirs:
  ``AgentSideConnection.session_update(session_id=..., update=...)``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from functools import partial
from typing import Any

from pydantic import TypeAdapter

from bench.corpus import Transcript, load_turn
from bench.figures import Figure
from bench.generated import bindings
from bench.timing import alternate

REPEAT = 10
"""Turns sent per round and contender."""


class NullTransport(asyncio.WriteTransport):
    """A pipe whose reader takes every byte at once: counts what was written."""

    def __init__(self) -> None:
        super().__init__()
        self.written = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += len(data)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        return None

    def get_write_buffer_size(self) -> int:
        return 0


def null_writer() -> asyncio.StreamWriter:
    """A ``StreamWriter`` (what both runtimes write to) over a :class:`NullTransport`."""
    loop = asyncio.get_running_loop()
    protocol = asyncio.streams.FlowControlMixin(loop)
    return asyncio.StreamWriter(NullTransport(), protocol, None, loop)


def _messages(transcript: Transcript) -> list[dict[str, Any]]:
    return [json.loads(line) for line in transcript.received]


Step = tuple[dict[str, Any], str, Callable[[Any], Any], Any]
"""One message to send: its envelope without the payload, the payload's key, the dump, the model."""


def _writer(steps: list[Step], line: Callable[[dict[str, Any]], bytes]) -> Callable[[], None]:
    def send() -> None:
        for head, key, dump, model in steps:
            line({**head, key: dump(model)})

    return send


def _head(message: dict[str, Any]) -> dict[str, Any]:
    return {key: message[key] for key in ("jsonrpc", "id", "method") if key in message}


def ours_serialise(transcript: Transcript) -> Callable[[], None]:
    names = ("connection", "_runtime.connection.adapters", "methods", "_runtime.wire.rpc")
    connection, adapters, methods, rpc = (bindings(m) for m in names)
    by_wire = {spec.wire: spec for spec in methods.METHODS}
    read = {spec.wire: TypeAdapter(spec.params).validate_python for spec in by_wire.values()}
    pending = transcript.pending()
    steps: list[Step] = []
    for message in _messages(transcript):
        if "method" in message:
            spec = by_wire[message["method"]]
            held = partial(rpc.Deferred, adapters.built(spec.params).serializer)
            steps.append((_head(message), "params", held, read[spec.wire](message["params"])))
        else:
            spec = by_wire[pending[message["id"]]]
            model = TypeAdapter(spec.result).validate_python(message["result"])
            steps.append(
                (_head(message), "result", partial(rpc.Deferred, adapters.built(spec.result).serializer), model)
            )
    sent = [json.loads(connection.encode({**head, key: dump(model)})) for head, key, dump, model in steps]
    assert sent == _messages(transcript), "our dumps are not the wire"  # the same JSON (key order aside)
    return _writer(steps, connection.encode)


SDK_PARAMS = {  # the models acp.agent.connection.AgentSideConnection sends each method with
    "session/update": "SessionNotification",
    "session/request_permission": "RequestPermissionRequest",
    "fs/read_text_file": "ReadTextFileRequest",
    "terminal/create": "CreateTerminalRequest",
    "terminal/output": "TerminalOutputRequest",
    "terminal/wait_for_exit": "WaitForTerminalExitRequest",
    "terminal/release": "ReleaseTerminalRequest",
}


def sdk_line(payload: dict[str, Any]) -> bytes:
    """What ``acp.task.sender.MessageSender.send`` writes for a message."""
    return (json.dumps(payload, separators=(",", ":")) + "\n").encode("utf-8")


def _sdk_result(result: Any) -> Any:  # acp.connection.Connection._execute_request
    return result.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)


def theirs_serialise(transcript: Transcript) -> Callable[[], None]:
    import acp.schema as sdk
    from acp.utils import serialize_params

    steps: list[Step] = []
    for message in _messages(transcript):
        if "method" in message:
            model = getattr(sdk, SDK_PARAMS[message["method"]]).model_validate(message["params"])
            steps.append((_head(message), "params", serialize_params, model))
        else:
            result = sdk.PromptResponse.model_validate(message["result"])
            steps.append((_head(message), "result", _sdk_result, result))
    return _writer(steps, sdk_line)


Closers = list[Callable[[], Any]]
"""Coroutine functions that close what a contender opened, run before the loop closes."""


def ours_connection(transcript: Transcript, loop: asyncio.AbstractEventLoop, closers: Closers) -> Callable[[], None]:
    connection, models, senders = (bindings(m) for m in ("connection", "models", "senders"))
    read = models.SessionNotification.model_validate
    notifications = [read(m["params"]) for m in _messages(transcript) if m.get("method") == "session/update"]

    async def start() -> Any:
        return connection.Connection(connection.LineTransport(asyncio.StreamReader(), null_writer()), _ignore)

    opened = loop.run_until_complete(start())
    closers.append(opened.close)
    sender = senders.ClientSender(opened)

    async def send_all() -> None:
        for notification in notifications:
            await sender.session_update(notification)

    return lambda: loop.run_until_complete(send_all())


def theirs_connection(transcript: Transcript, loop: asyncio.AbstractEventLoop, closers: Closers) -> Callable[[], None]:
    import acp.schema as sdk
    from acp import AgentSideConnection

    read = sdk.SessionNotification.model_validate
    notifications = [read(m["params"]) for m in _messages(transcript) if m.get("method") == "session/update"]

    async def start() -> Any:
        return AgentSideConnection(_NoAgent(), null_writer(), asyncio.StreamReader())

    agent = loop.run_until_complete(start())
    closers.append(agent.close)

    async def send_all() -> None:
        for notification in notifications:
            await agent.session_update(session_id=notification.session_id, update=notification.update)

    return lambda: loop.run_until_complete(send_all())


async def _ignore(message: Any) -> None:
    return None


class _NoAgent:
    """An agent that is never called (the client sends nothing here)."""


def t2(rounds: int) -> list[Figure]:
    """Messages per second sending the turn: serialised alone, and through the connection."""
    transcript = load_turn()
    loop = asyncio.new_event_loop()
    closers: Closers = []
    try:
        contenders = {
            "ours-serialise": ours_serialise(transcript),
            "theirs-serialise": theirs_serialise(transcript),
            "ours-connection": ours_connection(transcript, loop, closers),
            "theirs-connection": theirs_connection(transcript, loop, closers),
        }
        medians = alternate(contenders, rounds, REPEAT)
    finally:
        for close in closers:
            loop.run_until_complete(close())
        loop.close()
    updates = sum(b'"method":"session/update"' in line for line in transcript.received)
    counts = {"serialise": len(transcript.received), "connection": updates}
    rate = {name: counts[name.split("-")[1]] * REPEAT / seconds for name, seconds in medians.items()}
    ms = {name: seconds / REPEAT * 1000 for name, seconds in medians.items()}
    figures = []
    for way, label in (("serialise", "serialise every message"), ("connection", "session/update via connection")):
        ours, theirs = rate[f"ours-{way}"], rate[f"theirs-{way}"]
        note = f"{ms[f'ours-{way}']:.1f} vs {ms[f'theirs-{way}']:.1f} ms per turn"
        figures.append(Figure(f"T2 send the turn: {label} ({counts[way]})", ours, theirs, "msg/s", ">= 1.5x",
                              ours / theirs >= 1.5, note))  # fmt: skip
    return figures
