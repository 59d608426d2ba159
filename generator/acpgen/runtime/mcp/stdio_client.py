"""An MCP client over stdio: what an agent needs to connect to an MCP server a client
names in ``session/new`` (``McpServerStdio``), list its tools and call them.

Support code: it knows no method of ACP, and needs nothing beyond the standard library.
MCP is JSON-RPC 2.0, one message per line on the server process's stdin and stdout.
:func:`connect_stdio` starts the server, sends ``initialize`` (and the
``notifications/initialized`` that follows it), then ``tools/list`` when the server has
tools; :meth:`McpConnection.close` closes its stdin, then terminates and kills it if it
does not exit. What the server writes is bounded (a line longer than ``max_bytes`` ends
the connection); a malformed line is skipped, a request from the server answered
(``ping``, else -32601), a notification ignored; every call has a time-out.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, cast

__all__ = [
    "MCP_VERSION",
    "McpConnection",
    "McpError",
    "McpTool",
    "connect_stdio",
    "members",
]

MCP_VERSION = "2025-06-18"
"""The MCP protocol version asked for at ``initialize`` (the server answers its own)."""
_PAGES = 100
"""``tools/list`` pages read at most (a server whose cursor never ends)."""


def members(value: object) -> dict[str, Any] | None:
    """``value`` when it is a JSON object (a decoded dict), else None."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


class McpError(Exception):
    """An MCP server failed: it could not start, answered with an error, went away, or
    did not answer in time."""


@dataclass(frozen=True, slots=True)
class McpTool:
    """A tool an MCP server offers (``tools/list``)."""

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict[str, Any])


class McpConnection:
    """One running MCP server, initialized: :attr:`tools`, :meth:`call_tool`,
    :meth:`close`."""

    def __init__(
        self,
        name: str,
        process: asyncio.subprocess.Process,
        *,
        timeout: float,
        grace: float,
    ) -> None:
        self.name = name
        self.process = process
        self.timeout = timeout
        self.grace = grace
        self.server_info: Mapping[str, Any] = {}
        self.protocol_version = ""
        self.tools: tuple[McpTool, ...] = ()
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._ended: McpError | None = None
        self._reading = asyncio.create_task(self._read())

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> Any:
        """Call ``method``; its result, or :class:`McpError`."""
        if self._ended is not None:
            raise self._ended
        number = next(self._ids)
        answer = asyncio.get_running_loop().create_future()
        self._waiting[number] = answer
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": method}
        if params is not None:
            message["params"] = dict(params)
        try:
            await self._send(message)
            async with asyncio.timeout(self.timeout):
                return await answer
        except TimeoutError:
            late = f"no answer to {method} within {self.timeout:g} s"
            raise McpError(f"MCP server {self.name!r}: {late}") from None
        finally:
            self._waiting.pop(number, None)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> None:
        """Send the notification ``method``."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        await self._send(message)

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> Mapping[str, Any]:
        """Call the tool ``name``: its result (``content``, ``isError``...)."""
        result = await self.request(
            "tools/call", {"name": name, "arguments": dict(arguments or {})}
        )
        return members(result) or {}

    async def close(self) -> None:
        """Close the server's stdin; terminate it after ``grace`` seconds, then kill
        it."""
        self._end(McpError(f"MCP server {self.name!r} is closed"))
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        for stop in (None, self.process.terminate, self.process.kill):
            if stop is not None:
                with contextlib.suppress(ProcessLookupError):
                    stop()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.grace):
                    await self.process.wait()
                    break
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
        # its pipes, which an unread output (over the limit) keeps open: closed now,
        # not when the loop that owns them is gone
        pipes: Any = getattr(self.process, "_transport", None)
        if pipes is not None:
            pipes.close()

    async def _send(self, message: Mapping[str, Any]) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            raise self._ended or McpError(f"MCP server {self.name!r} is closed")
        stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        try:
            await stdin.drain()
        except (ConnectionError, OSError) as error:
            raise McpError(f"MCP server {self.name!r} went away: {error}") from None

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                await self._take(line)
            self._end(McpError(f"MCP server {self.name!r} closed its output"))
        except (ValueError, asyncio.LimitOverrunError):  # a line over the limit
            self._end(
                McpError(f"MCP server {self.name!r} wrote a line over the size limit")
            )
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    async def _take(self, line: bytes) -> None:
        try:
            message = members(json.loads(line))
        except ValueError:
            return  # not JSON: skipped
        if message is None:
            return
        if "method" in message:
            if "id" in message:  # a request of the server's: ping, else not offered
                await self._answer(message)
            return
        number = message.get("id")
        waiting = self._waiting.get(number) if isinstance(number, int) else None
        if waiting is None or waiting.done():
            return
        error = members(message.get("error"))
        if error is not None:
            said = f"{error.get('message')} ({error.get('code')})"
            waiting.set_exception(McpError(f"MCP server {self.name!r}: {said}"))
        else:
            waiting.set_result(message.get("result"))

    async def _answer(self, request: Mapping[str, Any]) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if request["method"] == "ping":
            reply["result"] = {}
        else:
            reply["error"] = {
                "code": -32601,
                "message": f"method not found: {request['method']}",
            }
        with contextlib.suppress(McpError):
            await self._send(reply)

    def _end(self, error: McpError) -> None:
        if self._ended is None:
            self._ended = error
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_exception(error)


async def connect_stdio(
    name: str,
    command: str,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    client_info: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    grace: float = 2.0,
    stderr: int | IO[Any] | None = None,
    max_bytes: int = 16 * 1024 * 1024,
) -> McpConnection:
    """Start the MCP server ``command args`` (with ``env`` added to this process's
    environment), initialize it and list its tools; :class:`McpError` when it cannot
    start or does not answer (the process is stopped then)."""
    try:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            limit=max_bytes,
        )
    except OSError as error:
        raise McpError(
            f"MCP server {name!r}: cannot start {command!r}: {error.strerror or error}"
        ) from None
    connection = McpConnection(name, process, timeout=timeout, grace=grace)
    try:
        await _initialize(
            connection, client_info or {"name": "acp-agent", "version": "0"}
        )
    except BaseException:
        await connection.close()
        raise
    return connection


async def _initialize(
    connection: McpConnection, client_info: Mapping[str, str]
) -> None:
    asked = {
        "protocolVersion": MCP_VERSION,
        "capabilities": {},
        "clientInfo": dict(client_info),
    }
    result = await connection.request("initialize", asked)
    answer = members(result)
    if answer is None:
        raise McpError(
            f"MCP server {connection.name!r}: initialize answered {result!r}"
        )
    result = answer
    connection.server_info = result.get("serverInfo") or {}
    connection.protocol_version = str(result.get("protocolVersion", ""))
    await connection.notify("notifications/initialized")
    capabilities = members(result.get("capabilities"))
    if capabilities is not None and "tools" in capabilities:
        connection.tools = await _tools(connection)


async def _tools(connection: McpConnection) -> tuple[McpTool, ...]:
    found: list[McpTool] = []
    cursor: Any = None
    for _ in range(_PAGES):
        page = await connection.request(
            "tools/list", {"cursor": cursor} if cursor is not None else {}
        )
        answer = members(page) or {}
        listed: object = answer.get("tools")
        for item in cast("list[object]", listed) if isinstance(listed, list) else []:
            tool = members(item)
            if tool is not None and isinstance(tool.get("name"), str):
                found.append(
                    McpTool(
                        str(tool["name"]),
                        str(tool.get("description") or ""),
                        members(tool.get("inputSchema")) or {},
                    )
                )
        cursor = answer.get("nextCursor")
        if not cursor:
            break
    return tuple(found)
