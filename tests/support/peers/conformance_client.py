"""A small ACP client in plain JSON lines (standard library only) for the conformance kit's tests:
it conforms as it is, and ``--defect NAME`` breaks exactly one thing (:data:`DEFECTS`: the
requirement the kit must then report FAIL). ``--fs-terminal`` makes it advertise (and serve) the
file system and terminals; the defects of those areas advertise them by themselves. ``--cancel``
makes it cancel the turn when the permission request comes (a ``session/cancel`` notification,
then the outcome ``cancelled``). Conforming variants the kit must not fault (issue 43):
``--cancel-later`` allows the tool in a first turn and cancels a second one; ``--late-cancel``
allows the tool, and sends ``session/cancel`` only after the turn has ended.

    python tests/support/peers/conformance_client.py [--fs-terminal] [--cancel] [--defect NAME] -- AGENT...
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

DEFECTS = {
    "relative-cwd": "ACP-CLIENT-SESSION-001",  # session/new with a relative cwd
    "unoffered-option": "ACP-CLIENT-PERM-001",  # a permission answered with an option not offered
    "unknown-session": "ACP-CLIENT-PROMPT-001",  # a prompt for a session it was never handed
    "load-unadvertised": "ACP-CAP-SESSION-LOAD-GATE",  # session/load although loadSession was not advertised
    "prompt-first": "ACP-CLIENT-INIT-001",  # a prompt before initialize
    "ext-unanswered": "ACP-PEER-EXT-001",  # a `_` request left unanswered
    "fs-read-error": "ACP-CLIENT-FS-001",  # fs.readTextFile advertised, fs/read_text_file answered an error
    "fs-write-ignored": "ACP-CLIENT-FS-002",  # fs/write_text_file answered success, the file not written
    "terminal-output-shape": "ACP-CLIENT-TERM-001",  # terminal/output answered {"output": 42}
    "crash-unknown-update": "ACP-CLIENT-EXT-001",  # exits on a session/update kind it does not know
    "crash-meta": "ACP-PEER-EXT-003",  # exits on a message carrying _meta
    "parse-error-unanswered": "ACP-PEER-RPC-007",  # a line that is no JSON skipped, no -32700
    "invalid-request-id": "ACP-PEER-RPC-009",  # -32600 answered with id 0, not null
    "cancel-as-request": "ACP-MSG-AGENT-SESSION-CANCEL-FORM",  # session/cancel sent with an id
    "two-prompts": "ACP-CLIENT-PROMPT-002",  # a second prompt before the first was answered
    "version-string": "ACP-CLIENT-INIT-002",  # protocolVersion "1"
    "no-mcp-servers": "ACP-CLIENT-SESSION-002",  # session/new without mcpServers
    "version-mismatch-ignored": "ACP-CLIENT-INIT-005",  # goes on after the agent chose another version
    "selected-after-cancel": "ACP-CLIENT-CANCEL-001",  # cancels, then answers the permission "selected"
}
FS_TERMINAL = {"fs-read-error", "fs-write-ignored", "terminal-output-shape"}
KNOWN_UPDATES = {
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
}
VERSION = 1


class Terminal:
    """A command the agent asked for: its output kept within the byte limit, cut from the start
    at a character boundary."""

    def __init__(self, params: dict[str, Any]) -> None:
        env = {**os.environ, **{v["name"]: v["value"] for v in params.get("env") or []}}
        self.limit = params.get("outputByteLimit")
        self.output = bytearray()
        self.truncated = False
        self.process = subprocess.Popen(
            [params["command"], *(params.get("args") or [])],
            cwd=params.get("cwd"),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for chunk in iter(lambda: self.process.stdout.read1(4096), b""):  # type: ignore[union-attr]
            self.output += chunk
            if self.limit is not None and len(self.output) > self.limit:
                cut = len(self.output) - self.limit
                while cut < len(self.output) and self.output[cut] & 0xC0 == 0x80:
                    cut += 1  # never inside a character
                del self.output[:cut]
                self.truncated = True

    def status(self) -> dict[str, Any]:
        code = self.process.returncode
        if code is not None and code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}

    def wait(self) -> dict[str, Any]:
        self.process.wait()
        self.reader.join()
        return self.status()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--defect", choices=sorted(DEFECTS))
    parser.add_argument("--fs-terminal", action="store_true")
    parser.add_argument("--cancel", action="store_true")
    parser.add_argument("--cancel-later", action="store_true")
    parser.add_argument("--late-cancel", action="store_true")
    parser.add_argument("agent", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    defect = args.defect
    serve = args.fs_terminal or defect in FS_TERMINAL
    command = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    ids = iter(range(1, 1000))
    terminals: dict[str, Terminal] = {}
    cancelled: set[str] = set()
    turns = [0]

    def send(message: dict[str, Any]) -> None:
        agent.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        agent.stdin.flush()  # type: ignore[union-attr]

    def error(rid: Any, code: int, message: str) -> None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    def pump(waiting: set[int]) -> dict[int, Any]:
        """Read the agent until every id of ``waiting`` is answered; their answers."""
        found: dict[int, Any] = {}
        for line in agent.stdout:  # type: ignore[union-attr]
            try:
                message = json.loads(line)
            except ValueError:
                if defect != "parse-error-unanswered":
                    error(None, -32700, "Parse error")
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                error(0 if defect == "invalid-request-id" else None, -32600, "Invalid request")
                continue
            if "method" not in message:
                if message.get("id") in waiting:
                    found[message["id"]] = message
                    if set(found) == waiting:
                        return found
                continue
            if "_meta" in (message.get("params") or {}) and defect == "crash-meta":
                os._exit(3)
            if "id" in message:
                answer(message)
            elif message["method"] == "session/update":
                kind = message["params"]["update"].get("sessionUpdate")
                if kind not in KNOWN_UPDATES and defect == "crash-unknown-update":
                    os._exit(3)
        return found

    def call(method: str, params: dict[str, Any]) -> Any:
        rid = next(ids)
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return pump({rid}).get(rid, {}).get("result")

    def answer(message: dict[str, Any]) -> None:
        method, rid, params = message["method"], message["id"], message.get("params") or {}
        try:
            result = serve_request(method, params)
        except LookupError:
            if not (method.startswith("_") and defect == "ext-unanswered"):
                error(rid, -32601, "Method not found")
            return
        except (OSError, ValueError) as problem:
            error(rid, -32603, f"Internal error: {problem}")
            return
        send({"jsonrpc": "2.0", "id": rid, "result": result})

    def serve_request(method: str, params: dict[str, Any]) -> Any:
        if method == "session/request_permission":
            session = params["sessionId"]
            if defect == "cancel-as-request" and session not in cancelled:
                cancelled.add(session)  # cancels the turn, but with an id
                send({"jsonrpc": "2.0", "id": next(ids), "method": "session/cancel", "params": params})
            cancelling = args.cancel or defect == "selected-after-cancel" or (args.cancel_later and turns[0] == 2)
            if cancelling and session not in cancelled:
                cancelled.add(session)
                send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
            if session in cancelled and defect != "selected-after-cancel":
                return {"outcome": {"outcome": "cancelled"}}
            options = params["options"]
            chosen = "not-offered" if defect == "unoffered-option" else options[0]["optionId"]
            return {"outcome": {"outcome": "selected", "optionId": chosen}}
        if not serve or not (method.startswith("fs/") or method.startswith("terminal/")):
            raise LookupError(method)
        if method == "fs/read_text_file":
            if defect == "fs-read-error":
                raise ValueError("refused")
            with open(params["path"], encoding="utf-8", newline="") as file:
                lines = file.read().splitlines(keepends=True)
            start = max((params.get("line") or 1) - 1, 0)
            limit = params.get("limit")
            return {"content": "".join(lines[start : None if limit is None else start + limit])}
        if method == "fs/write_text_file":
            if defect != "fs-write-ignored":
                with open(params["path"], "w", encoding="utf-8", newline="") as file:
                    file.write(params["content"])
            return {}
        if method == "terminal/create":
            terminal_id = f"term-{len(terminals) + 1}"
            terminals[terminal_id] = Terminal(params)
            return {"terminalId": terminal_id}
        terminal = terminals[params["terminalId"]]
        if method == "terminal/output":
            if defect == "terminal-output-shape":
                return {"output": 42}
            result: dict[str, Any] = {
                "output": terminal.output.decode("utf-8", "replace"),
                "truncated": terminal.truncated,
            }
            if terminal.process.poll() is not None:
                terminal.reader.join()
                result["exitStatus"] = terminal.status()
            return result
        if method == "terminal/wait_for_exit":
            return terminal.wait()
        if method in ("terminal/kill", "terminal/release"):
            if terminal.process.poll() is None:
                terminal.process.kill()
            if method == "terminal/release":
                terminal.wait()
                del terminals[params["terminalId"]]
            return {}
        raise LookupError(method)

    if defect == "prompt-first":
        call("session/prompt", {"sessionId": "nope", "prompt": []})
    info = {"name": "conformance-client", "version": "1"}
    capabilities: dict[str, Any] = {}
    if serve:
        capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
    version: Any = "1" if defect == "version-string" else VERSION
    init = call("initialize", {"protocolVersion": version, "clientCapabilities": capabilities, "clientInfo": info})
    chosen = (init or {}).get("protocolVersion")
    if chosen != VERSION and defect != "version-mismatch-ignored":
        print(f"conformance-client: the agent chose protocol version {chosen!r}; this client speaks {VERSION}")
        agent.stdin.close()
        agent.wait(10)
        sys.exit(1)
    cwd = "relative/folder" if defect == "relative-cwd" else os.getcwd()
    new: dict[str, Any] = {"cwd": cwd} if defect == "no-mcp-servers" else {"cwd": cwd, "mcpServers": []}
    session = (call("session/new", new) or {}).get("sessionId")
    if defect == "load-unadvertised":
        call("session/load", {"sessionId": session, "cwd": os.getcwd(), "mcpServers": []})
    if defect == "unknown-session":
        session = "a-session-nobody-handed-out"
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}
    if defect == "two-prompts":
        first, second = next(ids), next(ids)
        for rid in (first, second):
            send({"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": prompt})
        pump({first, second})
    else:
        turns[0] += 1
        call("session/prompt", prompt)
        if args.cancel_later:  # the first turn allowed the tool; this one cancels at the permission
            turns[0] += 1
            call("session/prompt", prompt)
        if args.late_cancel:  # after the turn ended: changes nothing
            send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
    agent.stdin.close()
    agent.wait(10)
    sys.exit(0)


if __name__ == "__main__":
    main()
