"""A small ACP agent in plain JSON lines (standard library only, so it starts at once) for the
conformance kit's tests: it conforms as it is, and ``--defect NAME`` breaks exactly one thing
(:data:`DEFECTS`: the requirement the kit must then report FAIL).

    python tests/support/peers/conformance_agent.py [--defect NAME] [--load] [--auth] [--modes] [--sessions]
        [--quiet-malformed] [--commands-after-load] [--turn SECONDS] [--mcp-http]

``--load`` advertises ``loadSession`` and replays a session's turns on ``session/load``;
``--auth`` advertises one agent-handled auth method (:data:`AUTH_METHOD`) and refuses
``session/new`` with ``auth_required`` until ``authenticate`` named it; ``--modes`` offers two session
modes and a config option (a select; a boolean too where the client advertised them) with each
session; ``--sessions`` advertises session/list, resume, close and delete, and image, audio and
embedded resources in prompts. Every turn announces a
tool call (with an absolute location) before it updates it, and it connects to the stdio MCP
servers ``session/new`` names (MCP's ``initialize`` and ``tools/list``), as the spec says agents
should. Conforming variants the kit must not fault: ``--quiet-malformed`` leaves malformed lines
unanswered (JSON-RPC only says SHOULD); ``--commands-after-load`` sends an
``available_commands_update`` after answering ``session/load`` (session state, no conversation
entry); ``--turn SECONDS`` streams each turn for that long (a short turn the kit must still cancel);
``--mcp-http`` advertises ``mcpCapabilities.http`` and connects to the HTTP MCP servers too.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any

AUTH_METHOD = "conformance-login"
DEFECTS = {
    # initialize
    "echo-version": "ACP-AGENT-INIT-003",  # an unsupported version is echoed
    "unspoken-version": "ACP-AGENT-INIT-003",  # an unsupported version answered with 2, which it does not speak
    "no-protocol-version": "ACP-AGENT-INIT-001",  # the initialize answer lacks protocolVersion
    "string-version": "ACP-AGENT-INIT-001",  # protocolVersion "1", a string
    "no-agent-info": "ACP-AGENT-INIT-004",  # no agentInfo (ADVISORY: the verdict stays CONFORMANT)
    "minimal-init-refused": "ACP-AGENT-INIT-005",  # initialize without clientCapabilities refused -32602
    # authentication (these advertise AUTH_METHOD, as --auth does)
    "auth-refused": "ACP-AGENT-AUTH-002",  # authenticate with the advertised id answered -32601
    "auth-ignored": "ACP-AGENT-AUTH-002",  # authenticate succeeds, session/new still says auth_required
    "auth-any-id": "ACP-AGENT-AUTH-005",  # authenticate with an id never advertised succeeds
    "duplicate-auth-ids": "ACP-AGENT-AUTH-001",  # two authMethods share one id
    # sessions
    "same-session-id": "ACP-AGENT-SESSION-002",  # every session/new answers one id
    "no-session-id": "ACP-AGENT-SESSION-001",  # session/new answers {}
    "mcp-refused": "ACP-AGENT-SESSION-004",  # session/new naming a stdio MCP server refused -32602
    # modes and config options (these offer them, as --modes does)
    "unoffered-current-mode": "ACP-AGENT-MODES-001",  # currentModeId is none of availableModes
    "mode-update-unoffered": "ACP-AGENT-MODES-002",  # set_mode answered by a current_mode_update naming no offered mode
    "unoffered-config-value": "ACP-AGENT-CONFIG-001",  # a select's currentValue is none of its options
    "partial-config-answer": "ACP-AGENT-CONFIG-002",  # set_config_option answers without the changed option
    # session families and prompt content (these advertise them, as --sessions does)
    "list-ignores-cwd": "ACP-AGENT-LIST-002",  # session/list filtered by a cwd answers every session
    "unknown-cursor-accepted": "ACP-AGENT-LIST-003",  # session/list with a cursor never issued answers a page
    "resume-replays": "ACP-AGENT-RESUME-002",  # session/resume replays the conversation
    "close-keeps-turn": "ACP-AGENT-CLOSE-002",  # session/close leaves the session's turn running
    "delete-keeps-listing": "ACP-AGENT-DELETE-003",  # a deleted session is still listed
    "image-refused": "ACP-CAP-CONTENT-BLOCK-IMAGE-HONOR",  # image advertised, an image prompt refused -32602
    # prompt turns
    "bad-stop-reason": "ACP-AGENT-PROMPT-001",  # a stop reason the schema does not list
    "crash-on-prompt": "ACP-AGENT-PROMPT-001",  # the process dies in a turn
    "update-after-answer": "ACP-AGENT-PROMPT-004",  # a message chunk after the turn's answer
    "unannounced-tool-update": "ACP-AGENT-PROMPT-005",  # tool_call_update of a call no tool_call announced
    "other-session-update": "ACP-AGENT-PROMPT-002",  # a turn's update names another session
    "invalid-update": "ACP-AGENT-PROMPT-002",  # an agent_message_chunk without content
    "relative-path": "ACP-AGENT-PROMPT-006",  # a tool call location that is not absolute
    "zero-line": "ACP-AGENT-PROMPT-007",  # a tool call location at line 0
    "meta-refused": "ACP-PEER-EXT-003",  # a prompt carrying _meta refused -32602
    "resource-link-refused": "ACP-AGENT-PROMPT-003",  # a prompt with a resource_link refused -32602
    "fs-unadvertised": "ACP-CAP-FS-READ-TEXT-FILE-GATE",  # calls fs/read_text_file unasked
    # cancellation
    "ignore-cancel": "ACP-AGENT-CANCEL-001",  # a cancelled turn ends end_turn
    "update-after-cancel": "ACP-AGENT-CANCEL-002",  # an update after the cancelled answer
    "cancel-request-unanswered": "ACP-PEER-CANCELREQ-001",  # a prompt named by $/cancel_request never answered
    # load
    "no-replay": "ACP-AGENT-LOAD-002",  # session/load (advertised) replays nothing
    # unknown methods and notifications
    "ext-unanswered": "ACP-PEER-EXT-001",  # a `_` request gets no answer
    "unknown-not-32601": "ACP-PEER-RPC-006",  # unknown requests answered -32603
    "answer-notification": "ACP-PEER-RPC-004",  # an idle session/cancel is answered
    "answer-unknown-notification": "ACP-PEER-RPC-004",  # unknown notifications answered -32601
    # JSON-RPC hygiene
    "wrong-id": "ACP-PEER-RPC-001",  # string ids answered as numbers
    "zero-id-null": "ACP-PEER-RPC-001",  # id 0 answered with id null
    "null-id-as-notification": "ACP-PEER-RPC-002",  # a request with id null taken for a notification
    "large-id-as-float": "ACP-PEER-RPC-001",  # ids beyond 32 bits answered as floats: 9007199254740991.0
    "parse-error-id": "ACP-PEER-RPC-009",  # a parse error answered -32700 with id 0
    "silent-parse-error": "ACP-PEER-RPC-007",  # a line that is not JSON gets no answer
    "invalid-request-as-parse-error": "ACP-PEER-RPC-008",  # an invalid request answered -32700
    "string-error-code": "ACP-PEER-RPC-003",  # error codes written as strings
    "traceback-error": "ACP-PEER-RPC-011",  # error messages carry a multi-line traceback
    "answer-twice": "ACP-PEER-RPC-005",  # session/new answered twice
    "banner": "ACP-PEER-TRANSPORT-001",  # a log line on stdout
    "blank-line": "ACP-PEER-TRANSPORT-001",  # an empty line after each answer
    "pretty-updates": "ACP-PEER-TRANSPORT-001",  # session/update written over several lines
    "latin1-output": "ACP-PEER-TRANSPORT-002",  # stdout encoded Latin-1, not UTF-8
    # shutdown
    "linger": "ACP-AGENT-PROC-001",  # still running after its stdin closed
    # what a lenient reader forgives, the schema does not (issue 48)
    "load-session-yes": "ACP-MSG-AGENT-INITIALIZE-RESULT-OPTIONAL",  # agentCapabilities.loadSession "yes"
    "status-done": "ACP-MSG-CLIENT-SESSION-UPDATE-PARAMS-OPTIONAL",  # a tool_call_update with status "done"
    "kind-bogus": "ACP-MSG-CLIENT-SESSION-UPDATE-PARAMS-OPTIONAL",  # a tool call of kind "bogus"
    "session-id-number": "ACP-MSG-AGENT-SESSION-NEW-RESULT",  # session/new answers sessionId 7, a number
    # cancellation, on any agent (issue 48): short turns
    "end-turn-after-cancel": "ACP-AGENT-CANCEL-001",  # a cancel is read, the turn ends end_turn anyway
    "end-turn-on-cancel": "ACP-AGENT-CANCEL-001",  # a cancel ends the turn at once, answered end_turn
    "silent-after-cancel": "ACP-AGENT-CANCEL-001",  # a cancelled prompt is never answered
    # invalid params (issue 48)
    "crash-on-invalid-params": "ACP-AGENT-INVALID-001",  # exits on a session/prompt without sessionId
    "invalid-params-as-result": "ACP-AGENT-INVALID-002",  # session/new without cwd answered with a session
    # broken answers, judged fast (issue 43)
    "no-jsonrpc": "ACP-PEER-TRANSPORT-001",  # answers lack "jsonrpc": "2.0"
    "string-ids": "ACP-PEER-RPC-001",  # integer ids answered as strings ("2" for 2)
    "negative-id-no-id": "ACP-PEER-RPC-001",  # a negative id answered by an error without an id
}

MODE_DEFECTS = ("unoffered-current-mode", "mode-update-unoffered", "unoffered-config-value", "partial-config-answer")
MODES = [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]

SESSION_DEFECTS = (
    "list-ignores-cwd",
    "unknown-cursor-accepted",
    "resume-replays",
    "close-keeps-turn",
    "delete-keeps-listing",
    "image-refused",
)
FAMILY = ("list", "resume", "close", "delete")

lock = threading.Lock()
defect: str | None = None
quiet_malformed = False
commands_after_load = False
turn_seconds: float | None = None
mcp_http = False
SHORT_TURN = ("end-turn-after-cancel", "end-turn-on-cancel", "silent-after-cancel")
"""Defects shown on turns of about 0.4 s, which end on their own soon after the kit cancels."""


def write(message: dict[str, Any]) -> None:
    if defect == "no-jsonrpc" and "method" not in message:
        message = {k: v for k, v in message.items() if k != "jsonrpc"}
    if defect == "string-ids" and "method" not in message and type(message.get("id")) is int:
        message = {**message, "id": str(message["id"])}
    rid = message.get("id")
    if defect == "negative-id-no-id" and "method" not in message and type(rid) is int and rid < 0:
        message = {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"}}
    indent = 2 if defect == "pretty-updates" and message.get("method") == "session/update" else None
    text = json.dumps(message, ensure_ascii=False, indent=indent) + "\n"
    if defect == "blank-line" and "method" not in message:
        text += "\n"
    data = text.encode("latin-1", "replace") if defect == "latin1-output" else text.encode("utf-8")
    with lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def answer(rid: Any, result: Any) -> None:
    write({"jsonrpc": "2.0", "id": rid, "result": result})


def error(rid: Any, code: int, message: str) -> None:
    if defect == "traceback-error":
        message += '\nTraceback (most recent call last):\n  File "agent.py", line 1, in handle'
    write(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": str(code) if defect == "string-error-code" else code, "message": message},
        }
    )


class Agent:
    def __init__(self, load: bool, auth: bool, modes: bool, sessions: bool) -> None:
        self.sessions = sessions or defect in SESSION_DEFECTS
        self.deleted: set[str] = set()
        self.load = load or defect == "no-replay"
        self.auth = auth or (defect or "").startswith("auth-") or defect == "duplicate-auth-ids"
        self.authenticated = False
        self.modes = modes or defect in MODE_DEFECTS
        self.config: dict[str, list[dict[str, Any]]] = {}
        self.booleans = False
        self.ids = itertools.count(1)
        self.calls = itertools.count(1)
        self.turns: dict[str, threading.Event] = {}
        self.history: dict[str, list[str]] = {}
        self.requests: dict[str, threading.Event] = {}
        self.dropped: set[str] = set()
        self.cwd: dict[str, str] = {}

    def update(self, session: str, update: dict[str, Any]) -> None:
        write({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})

    def chunk(self, session: str, kind: str, text: str) -> None:
        self.update(session, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})

    def notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "$/cancel_request":  # a turn cancelled this way ends as session/cancel ends it
            key = json.dumps(params.get("requestId"))
            turn = self.requests.get(key)
            if turn is not None:
                if defect == "cancel-request-unanswered":
                    self.dropped.add(key)
                turn.set()
        elif method == "session/cancel":
            if defect == "answer-notification":
                answer(None, {})
            turn = self.turns.get(params.get("sessionId"))
            if turn is not None and defect not in ("ignore-cancel", "end-turn-after-cancel"):
                turn.set()
        elif defect == "answer-unknown-notification":
            error(None, -32601, f"Method not found: {method}")

    def handle(self, message: dict[str, Any]) -> None:
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is None:
            return  # an answer to a request of ours (fs/read_text_file)
        if "id" not in message or (defect == "null-id-as-notification" and message["id"] is None):
            self.notification(method, params)
            return
        if defect == "wrong-id" and isinstance(rid, str):
            rid = len(rid)
        elif defect == "zero-id-null" and rid == 0:
            rid = None
        elif defect == "large-id-as-float" and type(rid) is int and abs(rid) >= 2**31:
            rid = float(rid)
        if method == "initialize":
            self.initialize(rid, params)
        elif method == "authenticate" and self.auth:
            if defect == "auth-refused":
                error(rid, -32601, f"Method not found: {method}")
            elif params.get("methodId") == AUTH_METHOD or defect == "auth-any-id":
                self.authenticated = defect != "auth-ignored"
                answer(rid, {})
            else:
                error(rid, -32602, f"Invalid params: no auth method {params.get('methodId')!r}")
        elif method == "session/new":
            if not isinstance(params.get("cwd"), str) and defect != "invalid-params-as-result":
                error(rid, -32602, "Invalid params: cwd is required")
            elif self.auth and not self.authenticated:
                error(rid, -32000, "Authentication required")
            elif defect == "mcp-refused" and params.get("mcpServers"):
                error(rid, -32602, "Invalid params: MCP servers are not supported")
            else:
                session = "s-1" if defect == "same-session-id" else f"s-{next(self.ids)}"
                self.history[session] = []
                self.cwd[session] = params.get("cwd") or "/"
                result: dict[str, Any] = {"sessionId": session}
                if self.modes:
                    current = "plan" if defect == "unoffered-current-mode" else "ask"
                    result["modes"] = {"currentModeId": current, "availableModes": MODES}
                    result["configOptions"] = self.config[session] = self.options()
                if defect == "session-id-number":
                    result["sessionId"] = 7
                answer(rid, {} if defect == "no-session-id" else result)
                if defect == "answer-twice":
                    answer(rid, {"sessionId": session})
                for server in params.get("mcpServers") or []:
                    if isinstance(server, dict) and "command" in server:
                        threading.Thread(target=connect_mcp, args=(server,), daemon=True).start()
                    elif isinstance(server, dict) and server.get("type") == "http" and mcp_http:
                        threading.Thread(target=connect_mcp_http, args=(server,), daemon=True).start()
        elif method == "session/set_mode" and self.modes:
            mode = params.get("modeId")
            if mode not in [m["id"] for m in MODES]:
                error(rid, -32602, f"Invalid params: no mode {mode!r}")
                return
            if defect == "mode-update-unoffered":
                mode = "turbo"
            self.update(params.get("sessionId"), {"sessionUpdate": "current_mode_update", "currentModeId": mode})
            answer(rid, {})
        elif method == "session/set_config_option" and self.modes:
            options = self.config.get(params.get("sessionId"), [])
            option = next((o for o in options if o["id"] == params.get("configId")), None)
            if option is None:
                error(rid, -32602, f"Invalid params: no config option {params.get('configId')!r}")
                return
            option["currentValue"] = params.get("value")
            others = [o for o in options if o is not option]
            answer(rid, {"configOptions": others if defect == "partial-config-answer" else options})
        elif self.sessions and method.removeprefix("session/") in FAMILY:
            self.family(rid, method.removeprefix("session/"), params)
        elif method == "session/load" and self.load:
            session = params.get("sessionId")
            if defect != "no-replay":
                for text in self.history.get(session, []):
                    self.chunk(session, "user_message_chunk", text)
            answer(rid, {})
            if commands_after_load:  # session state, after the answer: allowed
                command = {"name": "help", "description": "Show help"}
                self.update(session, {"sessionUpdate": "available_commands_update", "availableCommands": [command]})
        elif method == "session/prompt":
            if not isinstance(params.get("sessionId"), str):
                if defect == "crash-on-invalid-params":
                    os._exit(3)
                error(rid, -32602, "Invalid params: sessionId must be a string")
                return
            if params["sessionId"] not in self.history:
                error(rid, -32002, f"Resource not found: no session {params['sessionId']!r}")
                return
            if defect == "meta-refused" and "_meta" in params:
                error(rid, -32602, "Invalid params: unknown field _meta")
                return
            if defect == "image-refused" and any(b.get("type") == "image" for b in params.get("prompt", [])):
                error(rid, -32602, "Invalid params: unsupported content")
                return
            if defect == "resource-link-refused" and any(
                b.get("type") == "resource_link" for b in params.get("prompt", [])
            ):
                error(rid, -32602, "Invalid params: unsupported content")
                return
            self.turns[params.get("sessionId")] = self.requests[json.dumps(rid)] = threading.Event()
            threading.Thread(target=self.prompt, args=(rid, params), daemon=True).start()
        elif method.startswith("_") and defect == "ext-unanswered":
            return
        else:
            error(rid, -32603 if defect == "unknown-not-32601" else -32601, f"Method not found: {method}")

    def family(self, rid: Any, name: str, params: dict[str, Any]) -> None:
        session = params.get("sessionId")
        if name == "list":
            if params.get("cursor") is not None and defect != "unknown-cursor-accepted":
                error(rid, -32602, "Invalid params: unknown cursor")
                return
            cwd = None if defect == "list-ignores-cwd" else params.get("cwd")
            gone = set() if defect == "delete-keeps-listing" else self.deleted
            listed = [s for s in self.history if s not in gone and cwd in (None, self.cwd.get(s))]
            answer(rid, {"sessions": [{"sessionId": s, "cwd": self.cwd.get(s, "/")} for s in listed]})
        elif name == "resume":
            if defect == "resume-replays":
                for text in self.history.get(session, []):
                    self.chunk(session, "user_message_chunk", text)
            answer(rid, {})
        elif name == "close":
            turn = self.turns.get(session)
            if turn is not None and defect != "close-keeps-turn":
                turn.set()
            answer(rid, {})
        else:  # delete: silently, also a session that never was
            self.deleted.add(session)
            answer(rid, {})

    def initialize(self, rid: Any, params: dict[str, Any]) -> None:
        if defect == "minimal-init-refused" and "clientCapabilities" not in params:
            error(rid, -32602, "Invalid params: clientCapabilities is required")
            return
        sessions = (params.get("clientCapabilities") or {}).get("session") or {}
        self.booleans = ((sessions.get("configOptions") or {}).get("boolean")) is not None
        version = params.get("protocolVersion")
        chosen: Any = version if defect == "echo-version" or version == 1 else 1
        if defect == "unspoken-version" and version not in (1, 2):
            chosen = 2  # and asked for 2, it answers 1
        if defect == "string-version":
            chosen = str(chosen)
        caps: dict[str, Any] = {"loadSession": True} if self.load else {}
        if defect == "load-session-yes":
            caps["loadSession"] = "yes"
        if mcp_http:
            caps["mcpCapabilities"] = {"http": True}
        if self.sessions:
            caps["sessionCapabilities"] = {"list": {}, "resume": {}, "close": {}, "delete": {}}
            caps["promptCapabilities"] = {"image": True, "audio": True, "embeddedContext": True}
        result: dict[str, Any] = {"protocolVersion": chosen, "agentCapabilities": caps}
        if defect == "no-protocol-version":
            del result["protocolVersion"]
        if defect != "no-agent-info":
            result["agentInfo"] = {"name": "conformance-agent", "version": "1"}
        if self.auth:
            login = {"id": AUTH_METHOD, "name": "Conformance login"}
            result["authMethods"] = [login, {**login, "name": "Again"}] if defect == "duplicate-auth-ids" else [login]
        answer(rid, result)

    def options(self) -> list[dict[str, Any]]:
        sizes = [{"value": "small", "name": "Small"}, {"value": "large", "name": "Large"}]
        model = {"id": "model", "name": "Model", "type": "select", "options": sizes}
        model["currentValue"] = "huge" if defect == "unoffered-config-value" else "small"
        if self.booleans:  # only to a client that advertised them
            return [model, {"id": "verbose", "name": "Verbose", "type": "boolean", "currentValue": False}]
        return [model]

    def tool_call(self, session: str) -> None:
        call = f"call-{next(self.calls)}"
        if defect != "unannounced-tool-update":
            path = (
                "src/prompt.txt"
                if defect == "relative-path"
                else os.path.join(self.cwd.get(session, "/"), "prompt.txt")
            )
            kind = "bogus" if defect == "kind-bogus" else "read"
            announce = {"sessionUpdate": "tool_call", "toolCallId": call, "title": "Read the prompt", "kind": kind}
            location = {"path": path, "line": 0 if defect == "zero-line" else 1}
            self.update(session, {**announce, "status": "pending", "locations": [location]})
        status = "done" if defect == "status-done" else "completed"
        self.update(session, {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": status})

    def prompt(self, rid: Any, params: dict[str, Any]) -> None:
        session = params.get("sessionId")
        if defect == "crash-on-prompt":
            sys.stdout.flush()
            os._exit(3)
        cancelled = self.turns[session]
        words = " ".join(b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text").split()
        self.history.setdefault(session, []).append(" ".join(words))
        if defect == "fs-unadvertised":
            read = {"sessionId": session, "path": "/etc/hostname"}
            write({"jsonrpc": "2.0", "id": "fs-1", "method": "fs/read_text_file", "params": read})
        self.tool_call(session)
        if defect == "other-session-update":
            self.chunk("s-elsewhere", "agent_message_chunk", "not yours")
        if defect == "invalid-update":
            self.update(session, {"sessionUpdate": "agent_message_chunk"})
        seconds = turn_seconds if turn_seconds is not None else 0.4 if defect in SHORT_TURN else None
        if seconds is not None:  # a turn of that length, whatever the prompt
            words = ["word"] * max(int(seconds / 0.02), 1)
        for word in words:
            if cancelled.is_set():
                break
            self.chunk(session, "agent_message_chunk", word + " ")
            time.sleep(0.02 if seconds is not None else 0.002)
        reason = "cancelled" if cancelled.is_set() else "end_turn"
        if defect == "end-turn-on-cancel":
            reason = "end_turn"
        if defect == "silent-after-cancel" and cancelled.is_set():
            return
        if defect == "bad-stop-reason":
            reason = "finished"
        if json.dumps(rid) not in self.dropped:
            answer(rid, {"stopReason": reason})
        if defect == "update-after-cancel" and cancelled.is_set():
            self.chunk(session, "agent_message_chunk", "one more thing")
        if defect == "update-after-answer":
            self.chunk(session, "agent_message_chunk", "and another thing")


def connect_mcp(server: dict[str, Any]) -> None:
    """Connect to a stdio MCP server as an agent should: ``initialize``, ``initialized``,
    ``tools/list``, then leave it running until this process ends."""
    try:
        process = subprocess.Popen(
            [server["command"], *(server.get("args") or [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return
    assert process.stdin is not None and process.stdout is not None
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "conformance-agent", "version": "1"},
    }
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ):
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()
        if "id" in message:
            process.stdout.readline()


def connect_mcp_http(server: dict[str, Any]) -> None:
    """The same over MCP's Streamable HTTP: one JSON-RPC message per POST."""
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "conformance-agent", "version": "1"},
    }
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ):
        data = json.dumps(message).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        request = urllib.request.Request(server["url"], data=data, headers=headers, method="POST")
        with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=5) as answer:
            answer.read()


def main() -> None:
    global defect
    parser = argparse.ArgumentParser()
    parser.add_argument("--defect", choices=sorted(DEFECTS))
    parser.add_argument("--load", action="store_true")
    parser.add_argument("--auth", action="store_true")
    parser.add_argument("--modes", action="store_true")
    parser.add_argument("--sessions", action="store_true")
    parser.add_argument("--quiet-malformed", action="store_true")
    parser.add_argument("--commands-after-load", action="store_true")
    parser.add_argument("--turn", type=float)
    parser.add_argument("--mcp-http", action="store_true")
    args = parser.parse_args()
    global quiet_malformed, commands_after_load, turn_seconds, mcp_http
    quiet_malformed, commands_after_load, turn_seconds = args.quiet_malformed, args.commands_after_load, args.turn
    mcp_http = args.mcp_http
    defect = args.defect
    if defect == "banner":
        print("conformance-agent starting up", flush=True)
    agent = Agent(args.load, args.auth, args.modes, args.sessions)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            if defect != "silent-parse-error" and not quiet_malformed:
                error(0 if defect == "parse-error-id" else None, -32700, "Parse error")
            continue
        known = isinstance(message, dict) and ("method" in message or "result" in message or "error" in message)
        if not known or not isinstance(message.get("method", ""), str):
            if not quiet_malformed:
                error(None, -32700 if defect == "invalid-request-as-parse-error" else -32600, "Invalid request")
            continue
        agent.handle(message)
    if defect == "linger":
        time.sleep(60)


if __name__ == "__main__":
    main()
