"""``conformance trace TRACE``: the checks that need no driving, on a recorded trace.

A trace is a file of JSON lines, each one message with its direction: ours
(``{"direction": "in"|"out", "message": ...}``, or ``"raw"`` for a line that was
no JSON), the kit's own transcripts (``{"dir": "sent"|"received", "raw": ...}``), or any
log that says the same. The side that sent ``initialize`` is the client. Each message is
judged as the kit judges a live peer's, for both sides: read with the models, capability
gating against what the other side advertised in the trace's ``initialize``, closed
enums and unions, ids paired (every request answered once), and a turn's updates before
its answer. Only those requirements are reported: the others need a driven peer."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .judge import Judge, Kit
from .requirements import Check

TRACE_FAMILIES = (
    "message-form",
    "message-params",
    "message-result",
    "capability-gate",
    "closed-enum",
    "closed-union",
)
"""The derived requirements a trace can judge (and the curated ones below)."""
TURN_CONTENT = frozenset(
    {
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
    }
)
"""The update kinds of a turn: none may follow its answer (a mode update may)."""
TRACE_CURATED = (
    "ACP-PEER-RPC-003",
    "ACP-PEER-RPC-005",
    "ACP-AGENT-PROMPT-004",
    "ACP-AGENT-PROMPT-005",
    "ACP-AGENT-PROMPT-006",
    "ACP-CLIENT-INIT-001",
    "ACP-CLIENT-INIT-002",
)


@dataclass(frozen=True, slots=True)
class Entry:
    line: int
    outgoing: bool
    """Written by the side that recorded the trace (``out``, ``sent``)."""
    message: Any


class TraceError(Exception):
    """The trace cannot be read (not JSON lines with directions)."""


def read_trace(lines: Iterable[str]) -> list[Entry]:
    entries = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except ValueError:
            raise TraceError(f"line {number} is not JSON") from None
        if not isinstance(record, dict):
            raise TraceError(f"line {number} is not an object")
        way = record.get("direction", record.get("dir"))
        if way not in ("in", "out", "sent", "received"):
            raise TraceError(f"line {number} has no direction (in/out, sent/received)")
        message = record.get("message")
        if message is None and isinstance(record.get("raw"), str):
            try:
                message = json.loads(record["raw"])
            except ValueError:
                message = record["raw"]
        entries.append(Entry(number, way in ("out", "sent"), message))
    return entries


def judged_requirements(kit: Kit) -> list[str]:
    return [
        r.id
        for r in kit.requirements
        if r.family in TRACE_FAMILIES or r.id in TRACE_CURATED
    ]


def check_trace(
    kit: Kit,
    entries: list[Entry],
    agent_capabilities: type[BaseModel],
    only: str | None = None,
) -> list[Check]:
    """Every check of the trace, for both sides (or ``only`` the side named)."""
    init = next(
        (
            e
            for e in entries
            if isinstance(e.message, dict) and e.message.get("method") == "initialize"
        ),
        None,
    )
    judges = {"agent": Judge(kit, "agent"), "client": Judge(kit, "client")}
    for judge in judges.values():
        judge.scenario = "trace"
    client_outgoing = init.outgoing if init is not None else False
    client, agent = judges["client"], judges["agent"]
    if init is None:
        client.record("ACP-CLIENT-INIT-001", "FAIL", "the trace holds no initialize")
    pending: dict[tuple[str, str], Any] = {}
    answered: set[tuple[str, str]] = set()
    prompts: dict[str, str] = {}
    """Session -> the key of its prompt in flight."""
    ended: dict[str, int] = {}
    """Session -> the line its last turn was answered on."""
    first = True
    for e in entries:
        sender = "client" if e.outgoing == client_outgoing else "agent"
        judge = judges[sender]
        message = e.message
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            judge.record(
                "ACP-PEER-TRANSPORT-001", "FAIL", f"line {e.line}: no JSON-RPC message"
            )
            continue
        judge.read += 1
        judge.record("ACP-PEER-TRANSPORT-001", "PASS")
        if "method" in message:
            if first and sender == "client":
                ok = message["method"] == "initialize"
                client.record(
                    "ACP-CLIENT-INIT-001",
                    "PASS" if ok else "FAIL",
                    ""
                    if ok
                    else f"line {e.line}: {message['method']} before initialize",
                )
                version = (
                    (message.get("params") or {}).get("protocolVersion") if ok else None
                )
                if ok:
                    good = type(version) is int
                    client.record(
                        "ACP-CLIENT-INIT-002",
                        "PASS" if good else "FAIL",
                        "" if good else f"protocolVersion {version!r}",
                    )
                    _advertise(
                        agent,
                        kit.client_capabilities,
                        (message.get("params") or {}).get("clientCapabilities"),
                    )
                first = False
            judge.call(message)
            if "id" in message:
                key = (sender, json.dumps(message["id"], sort_keys=True))
                pending[key] = message["method"]
                if message["method"] == "session/prompt":
                    prompts[str((message.get("params") or {}).get("sessionId"))] = key[
                        1
                    ]
            elif message["method"] == "session/update" and sender == "agent":
                params = message.get("params") or {}
                session = str(params.get("sessionId"))
                kind = (params.get("update") or {}).get("sessionUpdate")
                if kind not in TURN_CONTENT:
                    continue
                if session not in prompts and session in ended:
                    agent.record(
                        "ACP-AGENT-PROMPT-004",
                        "FAIL",
                        f"line {e.line}: an update after the turn's answer "
                        f"(line {ended[session]})",
                    )
                else:
                    agent.record("ACP-AGENT-PROMPT-004", "PASS")
            continue
        asker = "agent" if sender == "client" else "client"
        key = (asker, json.dumps(message.get("id"), sort_keys=True))
        if key in answered and message.get("id") is not None:
            judge.record(
                "ACP-PEER-RPC-005",
                "FAIL",
                f"line {e.line}: request {key[1]} answered twice",
            )
        method = pending.pop(key, None)
        if method is None:
            continue
        answered.add(key)
        judge.record("ACP-PEER-RPC-005", "PASS")
        spec = kit.method(method, (sender, "protocol", "both"))
        judge.answer(spec, message)
        if method == "initialize" and isinstance(message.get("result"), dict):
            _advertise(
                client, agent_capabilities, message["result"].get("agentCapabilities")
            )
        for session, prompt in list(prompts.items()):
            if prompt == key[1] and asker == "client":
                del prompts[session]
                ended[session] = e.line
    for (asker, rid), method in pending.items():
        judges["agent" if asker == "client" else "client"].record(
            "ACP-PEER-RPC-005",
            "FAIL",
            f"request {rid} ({method}) never answered in the trace",
        )
    checks: list[Check] = []
    for side, judge in judges.items():
        if only is not None and side != only:
            continue
        judge.finish_gates()
        checks += [c for c in judge.checks if _judges(kit, c.requirement, side)]
    return checks


def _judges(kit: Kit, rid: str, side: str) -> bool:
    requirement = next((r for r in kit.requirements if r.id == rid), None)
    return requirement is not None and requirement.side in (side, "both")


def _advertise(judge: Judge, model: type[BaseModel], value: Any) -> None:
    """What the other side advertised, for the judge of this side's gating."""
    try:
        judge.advertised = model.model_validate(
            value if isinstance(value, dict) else {}
        )
    except ValidationError:
        judge.advertised = model()
