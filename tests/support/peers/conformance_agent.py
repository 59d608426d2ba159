"""A small ACP agent in plain JSON lines (standard library only, so it starts at once) for the
conformance kit's tests: it conforms as it is, and ``--defect NAME`` breaks exactly one thing
(:data:`DEFECTS`: the requirement the kit must then report FAIL).

    python tests/support/peers/conformance_agent.py [--defect NAME] [--load]

``--load`` advertises ``loadSession`` and replays a session's turns on ``session/load``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from typing import Any

DEFECTS = {
    "banner": "ACP-PEER-TRANSPORT-001",  # a log line on stdout
    "same-session-id": "ACP-AGENT-SESSION-002",  # every session/new answers one id
    "echo-version": "ACP-AGENT-INIT-003",  # an unsupported version is echoed
    "ignore-cancel": "ACP-AGENT-CANCEL-001",  # a cancelled turn ends end_turn
    "update-after-cancel": "ACP-AGENT-CANCEL-002",  # an update after the cancelled answer
    "bad-stop-reason": "ACP-AGENT-PROMPT-001",  # a stop reason the schema does not list
    "answer-notification": "ACP-PEER-RPC-004",  # an idle session/cancel is answered
    "ext-unanswered": "ACP-PEER-EXT-001",  # a `_` request gets no answer
    "wrong-id": "ACP-PEER-RPC-001",  # string ids answered as numbers
    "no-replay": "ACP-AGENT-LOAD-002",  # session/load (advertised) replays nothing
    "crash-on-prompt": "ACP-AGENT-PROMPT-001",  # the process dies in a turn
    "fs-unadvertised": "ACP-CAP-FS-READ-TEXT-FILE-GATE",  # calls fs/read_text_file unasked
}

lock = threading.Lock()


def write(message: dict[str, Any]) -> None:
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def answer(rid: Any, result: Any) -> None:
    write({"jsonrpc": "2.0", "id": rid, "result": result})


def error(rid: Any, code: int, message: str) -> None:
    write({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


class Agent:
    def __init__(self, defect: str | None, load: bool) -> None:
        self.defect = defect
        self.load = load
        self.ids = itertools.count(1)
        self.turns: dict[str, threading.Event] = {}
        self.history: dict[str, list[str]] = {}
        self.requests: dict[str, threading.Event] = {}

    def update(self, session: str, kind: str, text: str) -> None:
        content = {"type": "text", "text": text}
        update = {"sessionUpdate": kind, "content": content}
        write({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})

    def handle(self, message: dict[str, Any]) -> None:
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is None:
            return  # an answer to a request of ours (fs/read_text_file)
        if "id" not in message:
            if method == "$/cancel_request":  # a turn cancelled this way ends as session/cancel ends it
                turn = self.requests.get(json.dumps(params.get("requestId")))
                if turn is not None:
                    turn.set()
            if method == "session/cancel":
                if self.defect == "answer-notification":
                    answer(None, {})
                turn = self.turns.get(params.get("sessionId"))
                if turn is not None and self.defect != "ignore-cancel":
                    turn.set()
            return
        if self.defect == "wrong-id" and isinstance(rid, str):
            rid = len(rid)
        if method == "initialize":
            version = params.get("protocolVersion")
            chosen = version if self.defect == "echo-version" or version == 1 else 1
            caps = {"loadSession": True} if self.load or self.defect == "no-replay" else {}
            info = {"name": "conformance-agent", "version": "1"}
            answer(rid, {"protocolVersion": chosen, "agentCapabilities": caps, "agentInfo": info})
        elif method == "session/new":
            session = "s-1" if self.defect == "same-session-id" else f"s-{next(self.ids)}"
            self.history[session] = []
            answer(rid, {"sessionId": session})
        elif method == "session/load" and (self.load or self.defect == "no-replay"):
            session = params.get("sessionId")
            if self.defect != "no-replay":
                for text in self.history.get(session, []):
                    self.update(session, "user_message_chunk", text)
            answer(rid, {})
        elif method == "session/prompt":
            self.turns[params.get("sessionId")] = self.requests[json.dumps(rid)] = threading.Event()
            threading.Thread(target=self.prompt, args=(rid, params), daemon=True).start()
        elif method.startswith("_") and self.defect == "ext-unanswered":
            return
        else:
            error(rid, -32601, f"Method not found: {method}")

    def prompt(self, rid: Any, params: dict[str, Any]) -> None:
        session = params.get("sessionId")
        if self.defect == "crash-on-prompt":
            sys.stdout.flush()
            import os

            os._exit(3)
        cancelled = self.turns[session]
        words = " ".join(b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text").split()
        self.history.setdefault(session, []).append(" ".join(words))
        if self.defect == "fs-unadvertised":
            read = {"sessionId": session, "path": "/etc/hostname"}
            write({"jsonrpc": "2.0", "id": "fs-1", "method": "fs/read_text_file", "params": read})
        for word in words:
            if cancelled.is_set():
                break
            self.update(session, "agent_message_chunk", word + " ")
            time.sleep(0.002)
        reason = "cancelled" if cancelled.is_set() else "end_turn"
        if self.defect == "bad-stop-reason":
            reason = "finished"
        answer(rid, {"stopReason": reason})
        if self.defect == "update-after-cancel" and cancelled.is_set():
            self.update(session, "agent_message_chunk", "one more thing")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--defect", choices=sorted(DEFECTS))
    parser.add_argument("--load", action="store_true")
    args = parser.parse_args()
    if args.defect == "banner":
        print("conformance-agent starting up", flush=True)
    agent = Agent(args.defect, args.load)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            error(None, -32700, "Parse error")
            continue
        known = isinstance(message, dict) and ("method" in message or "result" in message or "error" in message)
        if not known or not isinstance(message.get("method", ""), str):
            error(None, -32600, "Invalid request")
            continue
        agent.handle(message)


if __name__ == "__main__":
    main()
