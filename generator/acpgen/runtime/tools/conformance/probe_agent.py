"""The probe agent of ``conformance client``: the agent a client under test spawns.

Plain JSON lines on its stdin and stdout, threads for its turns, and every message in
and out recorded (one JSON line each, flushed: the record is the trace the kit judges
when the client leaves). It advertises only what ``--agent-capabilities`` says
(nothing by default, so that gating can be observed), and answers ``initialize`` with
``--protocol-version`` when given (the kit's second run: a version the client does
not speak).

Each prompt turn, in this order (the first three are points the kit judges the client
survived: a later request of the probe's was still answered; a request follows each):

1. a text chunk carrying ``_meta`` (in the params and in the content block), then a
   ``_``-prefixed request;
2. an update of a kind the schema does not name, then a second ``_`` request;
3. a line that is no JSON and a JSON value that is no JSON-RPC request;
4. the steps of the build's client methods, where the client advertised them (and
   only there): its file system (:mod:`.probe_files`) and terminals
   (:mod:`.probe_terminals`);
5. a tool call and a permission request with two options (under a non-ASCII string
   id): last, so that a client that cancels there had everything else exercised;

then answers ``end_turn`` (``cancelled`` at once once the client cancelled the turn).
What only the probe can see (the file on disk, an answer's content) it writes to
``--checks`` as one JSON line per check."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import threading
from collections.abc import Sequence
from functools import partial
from typing import Any, TextIO

from pydantic import TypeAdapter, ValidationError

from .kit import Kit

UNKNOWN_KIND = "acp_conformance_unknown_kind"
PERMISSION_ID = "perm-é"
EXT_METHOD = "_acp_conformance/probe"
WAIT = 30.0
"""Seconds the probe waits for each answer (``--wait``: the kit's ``--timeout``)."""
BAD_LINE = "this is not json {"
"""Answered -32700, id null (ACP-PEER-RPC-007, -009)."""
BAD_REQUEST = '{"hello": "world"}'
"""JSON, but no JSON-RPC request: answered -32600, id null (ACP-PEER-RPC-008, -009)."""
MISMATCH_VERSION = 65535
"""The version the probe answers in the version-mismatch run (ACP-CLIENT-INIT-005)."""


class Probe:
    def __init__(
        self,
        record: TextIO,
        checks: TextIO | None,
        capabilities: dict[str, Any],
        version: int,
        kit: Kit | None,
    ) -> None:
        self.record = record
        self.checks = checks
        self.capabilities = capabilities
        self.version = version
        self.kit = kit
        self.framed = False
        """The client is remote (``--framed``): no malformed line is sent."""
        self.wait = WAIT
        self.lock = threading.Lock()
        self.sessions = itertools.count(1)
        self.ids = itertools.count(1)
        self.answers: dict[str, threading.Event] = {}
        self.replies: dict[str, Any] = {}
        self.cancelled: set[str] = set()
        self.client: dict[str, Any] = {}
        """The client's capabilities, as its initialize stated them."""
        self.cwds: dict[str, str] = {}

    # --- the wire

    def log(self, direction: str, message: Any, raw: bool = False) -> None:
        key = "raw" if raw else "message"
        with self.lock:
            self.record.write(json.dumps({"direction": direction, key: message}) + "\n")
            self.record.flush()

    def write(self, message: dict[str, Any]) -> None:
        self.log("out", message)
        self.send(json.dumps(message))

    def send(self, line: str) -> None:
        with self.lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def check(self, requirement: str, status: str, message: str = "") -> None:
        if self.checks is None:
            return
        with self.lock:
            self.checks.write(
                json.dumps(
                    {"requirement": requirement, "status": status, "message": message}
                )
                + "\n"
            )
            self.checks.flush()

    def request(self, rid: Any, method: str, params: dict[str, Any]) -> Any:
        """Send a request and wait (a while) for its answer; the answer, or None."""
        key = json.dumps(rid)
        done = self.answers[key] = threading.Event()
        self.write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        done.wait(self.wait)
        return self.replies.get(key)

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
            key = json.dumps(rid)
            event = self.answers.get(key)
            if event is not None:
                self.replies[key] = message
                event.set()
            return
        if "id" not in message:
            if method == "session/cancel":
                self.cancelled.add(str(params.get("sessionId")))
            return
        if method == "initialize":
            caps = params.get("clientCapabilities")
            self.client = caps if isinstance(caps, dict) else {}
            info = {"name": "acp-conformance-probe-agent", "version": "1"}
            result = {
                "protocolVersion": self.version,
                "agentCapabilities": self.capabilities,
                "agentInfo": info,
            }
            self.write({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "session/new":
            session = f"probe-session-{next(self.sessions)}"
            cwd = params.get("cwd")
            if isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd):
                self.cwds[session] = cwd
            self.write({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": session}})
        elif method == "session/prompt":
            threading.Thread(target=self.turn, args=(rid, params), daemon=True).start()
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            self.write({"jsonrpc": "2.0", "id": rid, "error": error})

    # --- a turn

    def turn(self, rid: Any, params: dict[str, Any]) -> None:
        session = str(params.get("sessionId"))
        self.cancelled.discard(session)
        steps = [self.meta, self.unknown_kind, self.malformed]
        if self.kit is not None:
            steps += [partial(step.run, self) for step in self.kit.steps]
        steps.append(self.permission)
        for step in steps:
            if session in self.cancelled:
                break
            step(session)
        reason = "cancelled" if session in self.cancelled else "end_turn"
        self.write({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": reason}})

    def meta(self, session: str) -> None:
        text = {
            "type": "text",
            "text": "The conformance probe agent is here. ",
            "_meta": {"acp-conformance": {"nested": [1, {"deep": None}]}},
        }
        chunk = {"sessionUpdate": "agent_message_chunk", "content": text}
        meta = {
            "acp-conformance": {"probe": True},
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        }
        self.update(session, chunk, meta=meta)
        self.request(next(self.ids), EXT_METHOD, {"sessionId": session})

    def permission(self, session: str) -> None:
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

    def unknown_kind(self, session: str) -> None:
        self.update(
            session, {"sessionUpdate": UNKNOWN_KIND, "note": "a kind of no schema"}
        )
        self.request(next(self.ids), EXT_METHOD, {"sessionId": session})

    def malformed(self, session: str) -> None:
        if self.framed:
            return
        for line in (BAD_LINE, BAD_REQUEST):
            self.log("out", line, raw=True)
            self.send(line)

    # --- what the steps of the build (files, terminals) call

    def read(self, method: str, answer: Any) -> tuple[Any, str]:
        """The answer's result as the models read it, or None and why not."""
        if answer is None:
            return None, f"`{method}` was not answered within {self.wait} s"
        if "error" in answer or "result" not in answer:
            return None, f"`{method}` was answered with an error: {short(answer)}"
        spec = self.kit.method(method, ("client",)) if self.kit is not None else None
        if spec is not None and spec.result is not None:
            try:
                TypeAdapter(spec.result).validate_python(answer["result"])
            except ValidationError as error:
                first = error.errors()[0]
                where = "/".join(str(p) for p in first["loc"]) or "(top)"
                return None, (
                    f"`{method}`: the models do not read the result "
                    f"{short(answer['result'])}: {first['msg']} at {where}"
                )
        return answer["result"], ""

    def call(self, session: str, method: str, params: dict[str, Any]) -> Any:
        return self.request(next(self.ids), method, {"sessionId": session, **params})


def short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:200] + "..."


def main(argv: Sequence[str], kit: Kit) -> int:
    parser = argparse.ArgumentParser(prog="conformance probe-agent")
    parser.add_argument("--record", required=True)
    parser.add_argument("--checks")
    parser.add_argument("--agent-capabilities", default="{}")
    parser.add_argument("--protocol-version", type=int, default=kit.protocol_version)
    parser.add_argument("--wait", type=float, default=WAIT)
    parser.add_argument(
        "--framed",
        action="store_true",
        help="the client is remote: every message is framed by its transport, so no "
        "malformed line is sent (the relay would answer it, not the client)",
    )
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        record = stack.enter_context(open(args.record, "a", encoding="utf-8"))
        checks = (
            stack.enter_context(open(args.checks, "a", encoding="utf-8"))
            if args.checks
            else None
        )
        capabilities = json.loads(args.agent_capabilities)
        probe = Probe(record, checks, capabilities, args.protocol_version, kit)
        probe.wait = args.wait
        probe.framed = args.framed
        try:
            for line in sys.stdin:
                try:
                    message = json.loads(line)
                except ValueError:
                    probe.log("in", line.rstrip("\n"), raw=True)
                    error = {"code": -32700, "message": "Parse error"}
                    probe.write({"jsonrpc": "2.0", "id": None, "error": error})
                    continue
                probe.log("in", message)
                probe.handle(message)
        finally:
            if checks is not None:  # the client closed the connection (or died)
                with probe.lock:
                    checks.write(json.dumps({"event": "eof"}) + "\n")
                    checks.flush()
    return 0
