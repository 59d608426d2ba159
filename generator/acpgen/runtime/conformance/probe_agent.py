"""The probe agent of ``conformance client``: the agent a client under test spawns.

Plain JSON lines on its stdin and stdout, threads for its turns, and every message in
and out recorded (one JSON line each, flushed: the record is the trace the kit judges
when the client leaves). It advertises only what ``--agent-capabilities`` says
(nothing by default, so that gating can be observed). Each prompt turn sends a text
chunk with ``_meta``, an update of a kind the schema does not name, a permission
request with two options, and a ``_``-prefixed request, then answers ``end_turn``
(``cancelled`` once the client cancelled the turn)."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
from collections.abc import Sequence
from typing import Any, TextIO

UNKNOWN_KIND = "acp_conformance_unknown_kind"
PERMISSION_ID = "perm-é"
EXT_METHOD = "_acp_conformance/probe"
WAIT = 10.0


class Probe:
    def __init__(
        self, record: TextIO, capabilities: dict[str, Any], version: int
    ) -> None:
        self.record = record
        self.capabilities = capabilities
        self.version = version
        self.lock = threading.Lock()
        self.sessions = itertools.count(1)
        self.ids = itertools.count(1)
        self.answers: dict[str, threading.Event] = {}
        self.cancelled: set[str] = set()

    def log(self, direction: str, message: Any) -> None:
        with self.lock:
            self.record.write(
                json.dumps({"direction": direction, "message": message}) + "\n"
            )
            self.record.flush()

    def write(self, message: dict[str, Any]) -> None:
        self.log("out", message)
        with self.lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def request(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        """Send a request and wait (a while) for its answer."""
        done = self.answers[json.dumps(rid)] = threading.Event()
        self.write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        done.wait(WAIT)

    def update(self, session: str, update: dict[str, Any], meta: Any = None) -> None:
        params: dict[str, Any] = {"sessionId": session, "update": update}
        if meta is not None:
            params["_meta"] = meta
        self.write({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def handle(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        method, rid = message.get("method"), message.get("id")
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if method is None:
            event = self.answers.get(json.dumps(rid))
            if event is not None:
                event.set()
            return
        if "id" not in message:
            if method == "session/cancel":
                self.cancelled.add(str(params.get("sessionId")))
            return
        if method == "initialize":
            info = {"name": "acp-conformance-probe-agent", "version": "1"}
            result = {
                "protocolVersion": self.version,
                "agentCapabilities": self.capabilities,
                "agentInfo": info,
            }
            self.write({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "session/new":
            session = f"probe-session-{next(self.sessions)}"
            self.write({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": session}})
        elif method == "session/prompt":
            threading.Thread(target=self.turn, args=(rid, params), daemon=True).start()
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            self.write({"jsonrpc": "2.0", "id": rid, "error": error})

    def turn(self, rid: Any, params: dict[str, Any]) -> None:
        session = str(params.get("sessionId"))
        self.cancelled.discard(session)
        text = {"type": "text", "text": "The conformance probe agent is here. "}
        chunk = {"sessionUpdate": "agent_message_chunk", "content": text}
        self.update(session, chunk, meta={"acp-conformance": {"probe": True}})
        self.update(
            session, {"sessionUpdate": UNKNOWN_KIND, "note": "a kind of no schema"}
        )
        call = {"toolCallId": "probe-call-1", "title": "Probe", "kind": "other"}
        self.update(
            session, {"sessionUpdate": "tool_call", **call, "status": "pending"}
        )
        options = [
            {"optionId": "probe-allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "probe-reject", "name": "Reject", "kind": "reject_once"},
        ]
        permission = {"sessionId": session, "toolCall": call, "options": options}
        asking = f"{PERMISSION_ID}-{next(self.ids)}"  # a non-ASCII string id
        self.request(asking, "session/request_permission", permission)
        self.request(next(self.ids), EXT_METHOD, {"sessionId": session})
        reason = "cancelled" if session in self.cancelled else "end_turn"
        self.write({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": reason}})


def main(argv: Sequence[str], version: int) -> int:
    parser = argparse.ArgumentParser(prog="conformance probe-agent")
    parser.add_argument("--record", required=True)
    parser.add_argument("--agent-capabilities", default="{}")
    args = parser.parse_args(argv)
    with open(args.record, "a", encoding="utf-8") as record:
        probe = Probe(record, json.loads(args.agent_capabilities), version)
        for line in sys.stdin:
            try:
                message = json.loads(line)
            except ValueError:
                probe.log("in", line.rstrip("\n"))
                error = {"code": -32700, "message": "Parse error"}
                probe.write({"jsonrpc": "2.0", "id": None, "error": error})
                continue
            probe.log("in", message)
            probe.handle(message)
    return 0
