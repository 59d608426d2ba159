"""The runtime's MCP client for agents (issue 45): ``mcp.connect_stdio`` and ``mcp.McpServers``
against real MCP server processes over real pipes: the conformance kit's probe (what
ACP-AGENT-SESSION-005 records), and small servers that misbehave (garbage, silence, an endless
line, a request of their own, a server that ignores its closed stdin)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_bindings import models
from acp_bindings.mcp import McpConnection, McpError, McpServers, McpTool, connect_stdio

from acpgen.runtime.tools.conformance.mcp_probe import TOOL, recorded, stdio_server

LIMIT = 60.0


def _run(work: Any) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(work, LIMIT)

    return asyncio.run(bounded())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_probe_is_initialized_listed_called_and_closed(tmp_path: Path) -> None:
    record = tmp_path / "probe.jsonl"
    entry = stdio_server("probe", record)

    async def scenario() -> tuple[McpConnection, Any]:
        connection = await connect_stdio("probe", entry["command"], entry["args"], cwd=tmp_path)
        called = await connection.call_tool(TOOL["name"], {"text": "hello"})
        await connection.close()
        return connection, called

    connection, called = _run(scenario())
    assert connection.tools == (McpTool(TOOL["name"], TOOL["description"], TOOL["inputSchema"]),)
    assert connection.server_info == {"name": "acp-conformance-probe", "version": "1"}
    assert called == {"content": [{"type": "text", "text": "hello"}]}
    assert recorded(record) == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    assert connection.process.returncode is not None  # it exited once its stdin closed


def test_a_sessions_servers_are_kept_for_it_and_closed_with_it(tmp_path: Path) -> None:
    """The session's ``mcpServers`` as the models read them: the stdio one is connected; an HTTP one
    and a command that cannot start are left out and named, and the session still starts."""
    record = tmp_path / "probe.jsonl"
    servers = [
        models.McpServerStdio.model_validate(stdio_server("probe", record)),
        models.McpServerStdio(name="missing", command=str(tmp_path / "no-such-server"), args=[], env=[]),
        {"type": "http", "name": "remote", "url": "http://127.0.0.1:9/mcp", "headers": []},
    ]

    async def scenario() -> tuple[tuple[McpConnection, ...], dict[str, list[tuple[str, str]]], int]:
        async with McpServers(client_info={"name": "my-agent", "version": "1"}) as mcp:
            opened = await mcp.open("s1", servers, cwd=tmp_path)
            assert mcp.of("s1") == opened and mcp.of("other") == ()
            failures = dict(mcp.failures)
            pid = opened[0].process.pid
            await mcp.close("s1")
            assert mcp.of("s1") == () and opened[0].process.returncode is not None
        return opened, failures, pid

    opened, failures, _ = _run(scenario())
    assert [c.name for c in opened] == ["probe"] and opened[0].process.returncode is not None
    reasons = dict(failures["s1"])
    assert "cannot start" in reasons["missing"] and "stdio only" in reasons["remote"], reasons
    assert recorded(record)[:3] == ["initialize", "notifications/initialized", "tools/list"]


GARBAGE_THEN_ANSWERS = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    sys.stdout.write("not json\\n[1,2]\\n" + json.dumps({"jsonrpc": "2.0", "method": "ping", "id": "s1"}) + "\\n")
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}) + "\\n")
    r = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "g", "version": "1"}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
    if m["method"] == "initialize":
        reply = json.loads(sys.stdin.readline())  # the answer to its ping comes first
        sys.stderr.write(json.dumps(reply) + "\\n")
        sys.stderr.flush()
"""


def test_garbage_notifications_and_the_servers_own_requests_do_not_break_the_client(tmp_path: Path) -> None:
    log = tmp_path / "stderr.txt"

    async def scenario() -> McpConnection:
        with log.open("w") as stderr:
            connection = await connect_stdio("g", sys.executable, ["-c", GARBAGE_THEN_ANSWERS], stderr=stderr)
            await connection.close()
        return connection

    connection = _run(scenario())
    assert connection.server_info == {"name": "g", "version": "1"} and connection.tools == ()
    assert '{"jsonrpc": "2.0", "id": "s1", "result": {}}' in log.read_text()


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("import sys, time\nfor line in sys.stdin: time.sleep(60)", "no answer to initialize within 0.5 s"),
        (
            "import sys, time\nsys.stdin.readline()\nsys.stdout.write('x' * 100000)\n"
            "sys.stdout.flush()\ntime.sleep(60)",
            "over the size limit",
        ),
        ("import sys\nsys.stdin.readline()", "closed its output"),
        (
            "import json, sys\nm = json.loads(sys.stdin.readline())\n"
            "e = {'code': -32602, 'message': 'no'}\n"
            "print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': e}), flush=True)\n"
            "sys.stdin.read()",
            "no (-32602)",
        ),
    ],
    ids=["silent", "endless-line", "exits", "error"],
)
def test_a_server_that_fails_is_an_mcp_error_and_is_stopped(code: str, says: str) -> None:
    async def scenario() -> None:
        await connect_stdio("bad", sys.executable, ["-c", code], timeout=0.5, grace=0.5, max_bytes=4096)

    with pytest.raises(McpError, match="bad") as caught:
        _run(scenario())
    assert says in str(caught.value)


def test_a_server_that_ignores_its_closed_stdin_is_terminated() -> None:
    code = (
        "import json, signal, sys, time\n"
        "m = json.loads(sys.stdin.readline())\n"
        "r = {'protocolVersion': '2025-06-18', 'capabilities': {}, 'serverInfo': {}}\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "time.sleep(120)\n"
    )

    async def scenario() -> McpConnection:
        connection = await connect_stdio("stubborn", sys.executable, ["-c", code], grace=0.5)
        await connection.close()
        return connection

    connection = _run(scenario())
    assert connection.process.returncode is not None and not _alive(connection.process.pid)
