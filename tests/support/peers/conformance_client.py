"""A small ACP client in plain JSON lines (standard library only) for the conformance kit's tests:
it conforms as it is, and ``--defect NAME`` breaks exactly one thing (:data:`DEFECTS`: the
requirement the kit must then report FAIL).

    python tests/support/peers/conformance_client.py [--defect NAME] -- AGENT COMMAND...
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

DEFECTS = {
    "relative-cwd": "ACP-CLIENT-SESSION-001",  # session/new with a relative cwd
    "unoffered-option": "ACP-CLIENT-PERM-001",  # a permission answered with an option not offered
    "unknown-session": "ACP-CLIENT-PROMPT-001",  # a prompt for a session it was never handed
    "load-unadvertised": "ACP-CAP-SESSION-LOAD-GATE",  # session/load although loadSession was not advertised
    "prompt-first": "ACP-CLIENT-INIT-001",  # a prompt before initialize
    "ext-unanswered": "ACP-PEER-EXT-001",  # a `_` request left unanswered
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--defect", choices=sorted(DEFECTS))
    parser.add_argument("agent", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    ids = iter(range(1, 1000))

    def send(message: dict[str, Any]) -> None:
        agent.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        agent.stdin.flush()  # type: ignore[union-attr]

    def call(method: str, params: dict[str, Any]) -> Any:
        rid = next(ids)
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        for line in agent.stdout:  # type: ignore[union-attr]
            message = json.loads(line)
            if message.get("id") == rid and "method" not in message:
                return message.get("result")
            if "method" in message and "id" in message:
                answer(message)
        return None

    def answer(message: dict[str, Any]) -> None:
        if message["method"] == "session/request_permission":
            options = message["params"]["options"]
            chosen = "not-offered" if args.defect == "unoffered-option" else options[0]["optionId"]
            outcome = {"outcome": "selected", "optionId": chosen}
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})
        elif not (message["method"].startswith("_") and args.defect == "ext-unanswered"):
            error = {"code": -32601, "message": "Method not found"}
            send({"jsonrpc": "2.0", "id": message["id"], "error": error})

    if args.defect == "prompt-first":
        call("session/prompt", {"sessionId": "nope", "prompt": []})
    info = {"name": "conformance-client", "version": "1"}
    call("initialize", {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": info})
    cwd = "relative/folder" if args.defect == "relative-cwd" else os.getcwd()
    session = (call("session/new", {"cwd": cwd, "mcpServers": []}) or {}).get("sessionId")
    if args.defect == "load-unadvertised":
        call("session/load", {"sessionId": session, "cwd": os.getcwd(), "mcpServers": []})
    if args.defect == "unknown-session":
        session = "a-session-nobody-handed-out"
    call("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]})
    agent.stdin.close()
    agent.wait(10)
    sys.exit(0)


if __name__ == "__main__":
    main()
