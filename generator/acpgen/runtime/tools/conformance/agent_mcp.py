"""Agent scenario of the MCP servers a client names in ``session/new``: the kit's
probe over stdio (and over HTTP where the agent advertised ``mcpCapabilities.http``).
The session must not be refused for naming them (MANDATORY); the agent SHOULD connect
to them (ADVISORY): the probe records MCP's ``initialize`` (and ``tools/list``) by
the end of a prompt turn on the session, plus the kit's quiet period."""

from __future__ import annotations

import time
from pathlib import Path

from .mcp_probe import HttpProbe, http_server, recorded, stdio_server
from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, result_of

ORDER = 35
CHECKS = (
    CheckSpec(
        "agent.mcp-stdio",
        ("agent",),
        judges=(
            "ACP-AGENT-SESSION-004",
            "ACP-AGENT-SESSION-005",
            "ACP-AGENT-SESSION-006",
        ),
    ),
)
HTTP_CAPABILITY = "mcpCapabilities.http"


def mcp_servers(s: Scenario) -> None:
    s.handshake()
    stdio_record = Path(s.cwd) / ".acp-conformance-mcp-stdio.jsonl"
    http_record = Path(s.cwd) / ".acp-conformance-mcp-http.jsonl"
    servers = [stdio_server("acp-conformance-stdio", stdio_record)]
    probe = None
    if s.applies("ACP-AGENT-SESSION-006"):
        probe = HttpProbe(http_record)
        servers.append(http_server("acp-conformance-http", probe.url))
    try:
        _session(s, servers, stdio_record, http_record if probe else None)
    finally:
        if probe is not None:
            probe.close()


def _session(
    s: Scenario, servers: list[dict[str, object]], stdio: Path, http: Path | None
) -> None:
    s.step("ACP-AGENT-SESSION-004")
    answer = s.driver.request("session/new", {"cwd": s.cwd, "mcpServers": servers})
    session = (result_of(answer) or {}).get("sessionId")
    named = "a stdio MCP server" + (" and an HTTP one" if http else "")
    s.check(
        "ACP-AGENT-SESSION-004",
        isinstance(session, str),
        f"session/new naming {named}: {describe(answer)}",
        f"session/new naming {named} answered with a session",
    )
    if not isinstance(session, str):
        return
    s.step()
    s.prompt(session, [{"type": "text", "text": "Which tools do you have?"}])
    deadline = time.monotonic() + s.quiet
    while time.monotonic() < deadline and not _connected(stdio, http):
        s.driver.pump(0.1)
    _judge(s, "ACP-AGENT-SESSION-005", "stdio", recorded(stdio))
    if http is not None:
        _judge(s, "ACP-AGENT-SESSION-006", "HTTP", recorded(http))


def _connected(stdio: Path, http: Path | None) -> bool:
    done = "initialize" in recorded(stdio)
    return done and (http is None or "initialize" in recorded(http))


def _judge(s: Scenario, rid: str, transport: str, methods: list[str]) -> None:
    listed = "tools/list" in methods
    s.check(
        rid,
        "initialize" in methods,
        f"the {transport} MCP server named in session/new got no MCP initialize by the "
        f"end of a prompt turn (+{s.quiet:.1f} s)",
        f"connected over {transport}: {', '.join(dict.fromkeys(methods))}"
        + ("" if listed else " (no tools/list)"),
    )


SCENARIOS = (
    ScenarioSpec(
        "mcp-servers",
        ("agent.mcp-stdio",),
        mcp_servers,
        ("initialize", "session/new", "session/prompt"),
    ),
)
