"""A mock model server for the conformance panel's coding agent (tests/panel/): an ASGI app that
speaks the part of OpenAI's Responses API that codex (inside ``@zed-industries/codex-acp``) uses,
served by uvicorn on a loopback port, so that a real coding agent runs whole turns offline.

Codex calls only ``POST {base_url}/responses`` (measured: one call per model step, ``stream: true``,
the conversation so far in ``input``, its tools in ``tools``) and reads Server-Sent Events, each
``data:`` a JSON object whose ``type`` names the event: ``response.created``, then per output item
``response.output_item.added``, deltas (``response.output_text.delta``) and
``response.output_item.done``, and last ``response.completed`` with the usage. A stream that ends
without ``response.completed`` is an error to codex.

What the mock answers, decided by the request alone (so a turn is deterministic):

- the last input item is a ``function_call_output`` (codex ran the tool): a short text answer that
  quotes the tool's output; the turn ends;
- the newest user message holds ``SLOW`` (give it as the kit's ``--cancel-prompt``): nothing for
  ``SLOW_START`` seconds, then text deltas every ``SLOW_INTERVAL`` seconds for ``SLOW_SECONDS``, so
  that a cancel lands mid-turn while the whole turn, left alone, still ends well within the kit's
  ``--timeout`` (an agent that ignores ``$/cancel_request`` answers that request when the turn
  ends); the stream stops as soon as codex hangs up (an interrupted turn closes its request);
- any other prompt: one ``exec_command`` call running ``TOOL_COMMAND`` with
  ``sandbox_permissions: "require_escalated"`` and a justification, which makes codex ask the
  client's permission (``session/request_permission``) before it runs the command; in a later
  step the output comes back as a ``function_call_output``.

Every request is recorded (``MockModel.calls``: method, path, model, the newest user text, the
kind of the last input item, whether it carried the provider key), so that a test can check that
the agent's model calls all came here; any other path is answered 404 and recorded too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SLOW = "acpgen-panel-slow-turn"
"""The marker of a prompt answered by a slow stream of text (the panel's ``--cancel-prompt``)."""
SLOW_START = 1.0
SLOW_INTERVAL = 0.05
SLOW_SECONDS = 1.0
TOOL_COMMAND = "echo acpgen-panel-tool"
"""The command the mock asks the agent to run: prints a line, touches nothing."""
TOOL_OUTPUT_MARK = "acpgen-panel-tool"
API_KEY = "acpgen-panel-not-a-real-key"
"""The provider key the agent is given (``env_key`` of the provider): not a credential of anything."""


@dataclass
class Call:
    """One request the mock received."""

    method: str
    path: str
    model: str | None = None
    user_text: str = ""
    last_item: str = ""
    keyed: bool = False
    answer: str = ""


@dataclass
class MockModel:
    """The ASGI app; ``calls`` grows as requests arrive (read it from the test's thread)."""

    prefix: str = "/v1"
    calls: list[Call] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def recorded(self) -> list[Call]:
        with self._lock:
            return list(self.calls)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        body = await _body(receive)
        call = Call(method=scope["method"], path=scope["path"])
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        call.keyed = headers.get("authorization") == f"Bearer {API_KEY}"
        with self._lock:
            self.calls.append(call)
        if scope["method"] != "POST" or scope["path"] != f"{self.prefix}/responses":
            call.answer = "404"
            await _json(send, 404, {"error": {"message": f"the mock serves only POST {self.prefix}/responses"}})
            return
        try:
            request = json.loads(body)
        except ValueError:
            call.answer = "400"
            await _json(send, 400, {"error": {"message": "the body is not JSON"}})
            return
        call.model = request.get("model")
        items = request.get("input") or []
        call.user_text = _newest_user_text(items)
        call.last_item = str(items[-1].get("type", "")) if items and isinstance(items[-1], dict) else ""
        await self._answer(call, items, receive, send)

    async def _answer(self, call: Call, items: list[Any], receive: Receive, send: Send) -> None:
        stream = _Stream(send, f"resp_{next(self._ids)}")
        gone = asyncio.Event()
        watcher = asyncio.create_task(_watch_disconnect(receive, gone))
        try:
            await stream.start()
            if call.last_item == "function_call_output":
                call.answer = "text after the tool"
                await stream.text(f"The command printed: {_tool_output(items)}", gone)
            elif SLOW in call.user_text:
                call.answer = "slow text"
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(gone.wait(), SLOW_START)
                words = int(SLOW_SECONDS / SLOW_INTERVAL)
                await stream.text(" ".join(["word"] * words), gone, interval=SLOW_INTERVAL)
            else:
                call.answer = "tool call"
                await stream.tool_call(f"call_{next(self._ids)}", TOOL_COMMAND)
            if not gone.is_set():
                await stream.completed()
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher


class _Stream:
    """The Server-Sent Events of one Responses answer."""

    def __init__(self, send: Send, response_id: str) -> None:
        self.send = send
        self.id = response_id
        self.sequence = itertools.count()
        self.items = itertools.count()

    async def start(self) -> None:
        await self.send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
        )
        await self._event({"type": "response.created", "response": {"id": self.id, "status": "in_progress"}})

    async def _event(self, event: dict[str, Any], *, last: bool = False) -> None:
        event = {**event, "sequence_number": next(self.sequence)}
        frame = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
        await self.send({"type": "http.response.body", "body": frame, "more_body": not last})

    async def text(self, text: str, gone: asyncio.Event, *, interval: float = 0.0) -> None:
        index = next(self.items)
        item_id = f"msg_{self.id}_{index}"
        added = {"type": "message", "role": "assistant", "id": item_id, "status": "in_progress", "content": []}
        await self._event({"type": "response.output_item.added", "output_index": index, "item": added})
        sent: list[str] = []
        for n, word in enumerate(text.split(" ")):
            if gone.is_set():
                return
            piece = word if n == 0 else f" {word}"
            sent.append(piece)
            delta = {"item_id": item_id, "output_index": index, "content_index": 0, "delta": piece}
            await self._event({"type": "response.output_text.delta", **delta})
            if interval:
                await asyncio.sleep(interval)
        content = [{"type": "output_text", "text": "".join(sent), "annotations": []}]
        done = {**added, "status": "completed", "content": content}
        await self._event({"type": "response.output_item.done", "output_index": index, "item": done})

    async def tool_call(self, call_id: str, command: str) -> None:
        index = next(self.items)
        arguments = {
            "cmd": command,
            "sandbox_permissions": "require_escalated",
            "justification": "May the conformance panel run a harmless echo?",
        }
        item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": "exec_command"}
        await self._event(
            {"type": "response.output_item.added", "output_index": index, "item": {**item, "arguments": ""}}
        )
        done = {**item, "arguments": json.dumps(arguments), "status": "completed"}
        await self._event({"type": "response.output_item.done", "output_index": index, "item": done})

    async def completed(self) -> None:
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        response = {"id": self.id, "status": "completed", "usage": usage}
        await self._event({"type": "response.completed", "response": response}, last=True)


def _newest_user_text(items: list[Any]) -> str:
    """The text of the newest user message that is no context codex adds (``<environment_context>``...)."""
    for item in reversed(items):
        if not isinstance(item, dict) or item.get("type") != "message" or item.get("role") != "user":
            continue
        texts = [c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict)]
        text = "\n".join(t for t in texts if isinstance(t, str))
        if not text.lstrip().startswith("<"):
            return text
    return ""


def _tool_output(items: list[Any]) -> str:
    output = items[-1].get("output", "")
    if isinstance(output, list):  # content items
        output = " ".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    lines = [line for line in str(output).splitlines() if TOOL_OUTPUT_MARK in line]
    return lines[0].strip() if lines else "(nothing)"


async def _body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _watch_disconnect(receive: Receive, gone: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()


async def _json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


@contextlib.contextmanager
def serving(model: MockModel) -> Iterator[str]:
    """Serve ``model`` with uvicorn on an ephemeral loopback port in a thread; yield the base URL
    (``http://127.0.0.1:PORT/v1``)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(model, lifespan="on", log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(server.serve(sockets=[sock]),), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}{model.prefix}"
    finally:
        server.should_exit = True
        thread.join(30)
        loop.close()
        sock.close()
