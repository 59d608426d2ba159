"""The kit's probe MCP servers: what an agent is handed in ``session/new`` to show
whether it connects to the MCP servers a client names (the spec: agents SHOULD).

Both answer MCP's ``initialize`` (the version the client asked for), ``tools/list``
(one tool) and ``tools/call`` (it echoes), ignore notifications, and record each
method they are called with, one JSON line each, in a file the kit reads:

- :func:`stdio_server`: an ``McpServerStdio`` entry running this interpreter on a
  small self-contained script (no import of the package: any agent can start it);
- :class:`HttpProbe`: an MCP server over HTTP on a loopback port (a POST of one
  JSON-RPC message answered with one JSON answer, as MCP's Streamable HTTP allows),
  for an agent that advertised ``mcpCapabilities.http``."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOL = {
    "name": "acp_conformance_echo",
    "description": "Echoes its text (the ACP conformance kit's probe).",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}
SERVER_INFO = {"name": "acp-conformance-probe", "version": "1"}
SCRIPT = """\
import json, sys, time
record = open(sys.argv[1], "a", encoding="utf-8")
tool = json.loads(sys.argv[2])
info = json.loads(sys.argv[3])
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if not isinstance(m, dict) or not isinstance(m.get("method"), str):
        continue
    record.write(json.dumps({"method": m["method"], "t": time.time()}) + "\\n")
    record.flush()
    if "id" not in m:
        continue
    p = m.get("params") or {}
    if m["method"] == "initialize":
        r = {"protocolVersion": p.get("protocolVersion", "2025-06-18"),
             "capabilities": {"tools": {}}, "serverInfo": info}
    elif m["method"] == "tools/list":
        r = {"tools": [tool]}
    elif m["method"] == "tools/call":
        text = str((p.get("arguments") or {}).get("text", ""))
        r = {"content": [{"type": "text", "text": text}]}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
"""


def stdio_server(name: str, record: Path) -> dict[str, Any]:
    """An ``McpServerStdio`` entry of the probe, recording to ``record``."""
    return {
        "name": name,
        "command": sys.executable,
        "args": ["-c", SCRIPT, str(record), json.dumps(TOOL), json.dumps(SERVER_INFO)],
        "env": [],
    }


def recorded(record: Path) -> list[str]:
    """The methods the probe was called with, in order."""
    try:
        text = record.read_text(encoding="utf-8")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        try:
            found.append(str(json.loads(line)["method"]))
        except (ValueError, KeyError, TypeError):
            continue
    return found


def _answer(message: dict[str, Any]) -> dict[str, Any] | None:
    if "id" not in message:
        return None
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    method = message.get("method")
    if method == "initialize":
        version = (params or {}).get("protocolVersion", "2025-06-18")
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


class HttpProbe:
    """The probe over HTTP at :attr:`url`, recording to ``record``; stop with
    :meth:`close`."""

    def __init__(self, record: Path) -> None:
        self.record = record
        lock = threading.Lock()
        probe = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                try:
                    message = json.loads(self.rfile.read(min(size, 1 << 20)))
                except ValueError:
                    message = None
                if isinstance(message, dict) and isinstance(message.get("method"), str):
                    with lock, open(probe.record, "a", encoding="utf-8") as file:
                        file.write(json.dumps({"method": message["method"]}) + "\n")
                answer = _answer(message) if isinstance(message, dict) else None
                if answer is None:
                    self.send_response(202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self.send_response(405)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{port}/mcp"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def http_server(name: str, url: str) -> dict[str, Any]:
    """An ``McpServerHttp`` entry of the probe at ``url``."""
    return {"type": "http", "name": name, "url": url, "headers": []}


def cleanup(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.remove(path)
