"""One stdio agent process carried over one remote connection: its stdin and stdout
are the connection's messages, its stderr goes to the log, tagged by connection.

Support code: it knows no method of the protocol. The relay is a JSON-RPC peer of the
agent on its pipes and a carrier of messages for the remote client: every message
passes through byte for byte, in order, whatever its method or members; the relay reads
only what it needs, the ids of the client's requests (so that they can be answered when
the agent cannot answer them any more). What cannot be carried is answered the way the
JSON-RPC specification names, by the relay, to the side that sent it:

- a line of the agent that is not JSON gets -32700 (nested deeper than the limit:
  -32600), as the agent's client over stdio would answer it; it reaches nobody else;
- a line longer than the message limit is never held whole: the agent gets -32600
  ``Message too large`` (with its id), unless it answers a request of the client, which
  then gets -32603 (``data.reason``) instead of waiting for an answer that cannot come;
- a client message longer than the limit gets -32600 ``Message too large``;
- when the agent ends (exits, or closes its stdout), the client's requests still waiting
  get -32603 with ``data.exitCode``, then the connection closes.

Two bytes are framing, not message: a line break inside a client message (JSON
whitespace there) becomes a space, or the agent would read two lines; a carriage return
in an agent line (JSON whitespace, or the end of a CRLF line) becomes a space or is
dropped, as a server-sent event cannot carry it. The agent runs in a process group of
its own, ended whole (``connection.process.stop``) when the connection ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic_core import to_json

from ..connection import telemetry
from ..connection.lines import split_lines
from ..connection.log_ids import CONNECTION, logger
from ..connection.process import AgentStartError, spawn, stop
from ..connection.transport import Oversized, Transport
from ..wire.codec import Unreadable, decode, find_id, has_member
from ..wire.messages import glance, id_key
from ..wire.rpc import INTERNAL_ERROR, INVALID_REQUEST, RequestError, read_id
from .spans import RelaySpans

__all__ = ["AgentPipe", "Spawn"]

_log = logger(__name__)

STDERR_LINE = 16 * 1024
"""The longest stderr line logged whole (a longer one is logged by its head)."""


class Spawn:
    """How the relay starts its agent: the command and its surroundings."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        grace: float = 5.0,
    ) -> None:
        if isinstance(command, str | bytes) or not command:
            raise ValueError(
                "command is a non-empty list of arguments, e.g. ['my-agent', '--stdio']"
            )
        self.command = list(command)
        self.cwd = cwd
        self.env = env
        self.grace = grace
        """Seconds the agent has to exit after its stdin closes (then SIGTERM, then
        SIGKILL, to its whole process group, each after as long)."""


def _error(request_id: Any, error: RequestError) -> bytes:
    return to_json({"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()})


class AgentPipe:
    """One agent process over one transport (the remote connection's, or a resumable
    host's agent side): what ``AcpApp`` runs as a connection's agent."""

    def __init__(
        self,
        spawning: Spawn,
        transport: Transport,
        *,
        tag: str,
        max_message_bytes: int,
        max_depth: int,
        max_pending: int = 1024,
        max_id_length: int = 1024,
        on_end: Callable[[AgentPipe], None] = lambda pipe: None,
        settle: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._spawn = spawning
        self.transport = transport
        self.tag = tag
        """The connection that started the agent (its ``Acp-Connection-Id``): every log
        line about this agent names it."""
        self._limit = max_message_bytes
        self._on_end = on_end
        self._settle = settle
        """Waits, when the agent ended with requests unanswered, until the client has
        their errors (Streamable HTTP: another stream's end could overtake them)."""
        self._depth = max_depth
        self.process: asyncio.subprocess.Process | None = None
        self.exit_code: int | None = None
        self._pending: dict[tuple[str, Any], Any] = {}
        """The client's requests the agent has not answered: key -> id (at most
        ``max_pending``, ids of at most ``max_id_length`` characters: beyond, a request
        is carried all the same, only not answered by the relay if the agent ends)."""
        self._max_pending = max_pending
        self._max_id = max_id_length
        self._to_client = asyncio.Lock()
        self._to_agent = asyncio.Lock()
        self._stdin: asyncio.StreamWriter | None = None
        self._closing = asyncio.Event()
        self._gone = False
        """The connection is gone: what the agent still writes is read and dropped."""
        self.ended = asyncio.Event()
        """Set once the agent's process group has ended (or never started)."""
        self._spans = RelaySpans.found(tag, transport)
        """The spans of what it carries, where the application traces."""

    # -- lifecycle

    async def run(self) -> None:
        """Start the agent and carry its messages until it or the connection ends;
        then end its process group."""
        CONNECTION.set(self.tag)  # (this task's own context, and its tasks')
        try:
            await self._run()
        finally:
            self.ended.set()
            if self._spans is not None:
                self._spans.ended()
            self._on_end(self)
            with contextlib.suppress(Exception):
                await self.transport.close()

    async def close(self) -> None:
        """End the agent (its stdin closes; its group is stopped by :meth:`run`)."""
        self._closing.set()

    async def _run(self) -> None:
        try:
            process, stdout, stdin = await spawn(
                self._spawn.command,
                cwd=self._spawn.cwd,
                env=self._spawn.env,
                stderr=asyncio.subprocess.PIPE,
            )
        except AgentStartError as error:
            _log.error("connection %s: %s", self.tag, error)
            telemetry.add("agents_started", 1, {"acp.outcome": "failed"})
            await self._refuse_start()
            return
        self.process, self._stdin = process, stdin
        telemetry.add("agents_started", 1, {"acp.outcome": "started"})
        _log.info("connection %s: agent started, pid %d", self.tag, process.pid)
        assert process.stderr is not None
        inbound = asyncio.ensure_future(self._client_to_agent())
        outbound = asyncio.ensure_future(self._agent_to_client(stdout))
        errors = asyncio.ensure_future(self._log_stderr(process.stderr))
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait(
                {inbound, outbound, closing}, return_when=asyncio.FIRST_COMPLETED
            )
            agent_ended = outbound.done()  # else the client or the server ended it
            if closing.done():
                inbound.cancel()
            await self._close_stdin()  # the agent's input ends: it may still answer
            self.exit_code = await stop(process, self._spawn.grace)
            await asyncio.wait({outbound}, timeout=1.0)  # what it wrote before it ended
            if agent_ended:
                await self._answer_pending()
        finally:
            for task in (inbound, outbound, closing):
                task.cancel()
            if self.exit_code is None:  # cancelled: the group still ends
                self.exit_code = await asyncio.shield(stop(process, 0.5))
            await asyncio.wait({errors}, timeout=1.0)
            errors.cancel()
            _log.info(
                "connection %s: agent ended, exit code %s", self.tag, self.exit_code
            )

    async def _close_stdin(self) -> None:
        if self._stdin is None:
            return
        stdin, self._stdin = self._stdin, None
        stdin.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await stdin.wait_closed()

    async def _refuse_start(self) -> None:
        """Answer the connection's first request (``initialize``): the agent could not
        be started (the details are in the log, not for the remote client)."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(10.0):
                first = await self.transport.receive(self._limit)
                request_id = (
                    find_id(first.head)
                    if isinstance(first, Oversized)
                    else glance(first or b"").get("id")
                )
                reason = {"reason": "the agent could not be started"}
                await self._send_client(
                    _error(read_id(request_id)[1], RequestError.internal_error(reason))
                )

    # -- client -> agent

    async def _client_to_agent(self) -> None:
        while (data := await self.transport.receive(self._limit)) is not None:
            if isinstance(data, Oversized):
                limit = {"limit": self._limit}
                refusal = RequestError(INVALID_REQUEST, "Message too large", limit)
                await self._send_client(_error(read_id(find_id(data.head))[1], refusal))
                continue
            message = glance(data)
            if self._spans is not None:
                self._spans.carried("client", message)
            if "method" in message and "id" in message:
                self._track(message["id"])
            if b"\n" in data:  # JSON whitespace: the line must stay one line
                data = data.replace(b"\n", b" ")
            if not await self._send_agent(data):
                return

    def _track(self, request_id: Any) -> None:
        if len(self._pending) >= self._max_pending:
            return
        if type(request_id) is str and len(request_id) > self._max_id:
            return
        key = id_key(request_id)
        if key is not None:
            self._pending[key] = request_id

    async def _send_agent(self, data: bytes) -> bool:
        """Write one line to the agent; False once its stdin is gone."""
        async with self._to_agent:
            stdin = self._stdin
            if stdin is None:
                return False
            try:
                stdin.write(data + b"\n")
                await stdin.drain()
            except (ConnectionError, OSError) as error:
                _log.debug("connection %s: agent stdin closed: %r", self.tag, error)
                return False
            return True

    # -- agent -> client

    async def _agent_to_client(self, stdout: asyncio.StreamReader) -> None:
        async for line in split_lines(stdout, self._limit):
            if isinstance(line, Oversized):
                await self._too_large(line.head)
                continue
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line or line.isspace():
                continue
            message = decode(line, self._depth)
            if type(message) is Unreadable:
                _log.warning(
                    "connection %s: the agent wrote what is not a message (%s): %.200r",
                    self.tag,
                    message.error.message,
                    line,
                )
                await self._send_agent(_error(message.request_id, message.error))
                continue
            if self._spans is not None and type(message) is dict:
                self._spans.carried("agent", message)
            if type(message) is dict and "method" not in message and "id" in message:
                key = id_key(message["id"])
                if key is not None:
                    self._pending.pop(key, None)
            if b"\r" in line:  # JSON whitespace, which an SSE stream cannot carry
                line = line.replace(b"\r", b" ")
            await self._send_client(line)  # once the client is gone: read, dropped

    async def _too_large(self, head: bytes) -> None:
        request_id = read_id(find_id(head))[1]
        key = id_key(request_id)
        limit = {"limit": self._limit}
        _log.warning(
            "connection %s: the agent wrote a message longer than %d bytes: %.200r",
            self.tag,
            self._limit,
            head,
        )
        if key in self._pending and not has_member(head, "method"):
            del self._pending[key]  # the client's request gets what the agent could not
            reason = {"reason": "the agent's answer is too large", **limit}
            error = RequestError(INTERNAL_ERROR, "Internal error", reason)
            await self._send_client(_error(request_id, error))
            return
        refusal = RequestError(INVALID_REQUEST, "Message too large", limit)
        await self._send_agent(_error(request_id, refusal))

    async def _send_client(self, data: bytes) -> bool:
        """Send one message to the client; False once the connection is gone."""
        async with self._to_client:
            if self._gone:
                return False
            try:
                await self.transport.ready()
                await self.transport.send(data)
            except (ConnectionError, OSError) as error:
                _log.debug("connection %s: the client is gone: %r", self.tag, error)
                self._gone = True
                return False
            return True

    async def _answer_pending(self) -> None:
        """The agent ended: its client's waiting requests get -32603 at once."""
        pending, self._pending = self._pending, {}
        if pending:
            _log.warning(
                "connection %s: the agent ended (exit code %s) with %d requests "
                "unanswered",
                self.tag,
                self.exit_code,
                len(pending),
            )
        reason = {"reason": "the agent ended", "exitCode": self.exit_code}
        for request_id in pending.values():
            error = RequestError(INTERNAL_ERROR, "Internal error", reason)
            if not await self._send_client(_error(request_id, error)):
                return
        if pending and self._settle is not None:
            await self._settle()

    # -- stderr

    async def _log_stderr(self, stderr: asyncio.StreamReader) -> None:
        async for line in split_lines(stderr, STDERR_LINE):
            cut = isinstance(line, Oversized)
            data = line.head[:STDERR_LINE] if isinstance(line, Oversized) else line
            text = data.decode("utf-8", "replace").rstrip("\r")
            _log.info(
                "connection %s: agent stderr: %s%s",
                self.tag,
                text,
                " [line cut]" if cut else "",
            )
