"""``conformance trace TRACE``: the checks that need no driving, on a recorded trace.

A trace is a file of JSON lines, each one message with its direction: ours
(``{"direction": "in"|"out", "message": ...}``, or ``"raw"`` for a line that was no
JSON), the kit's own transcripts (``{"dir": "sent"|"received", "raw": ...}``), or any
log that says the same. The side that sent ``initialize`` is the client. Each message
is judged as the kit judges a live peer's (:mod:`.judge`: strictly against the
schema, as the models read it, capability gating against what the other side
advertised, closed enums and unions), for both sides, and: ``initialize`` first,
every request answered once, a turn's content before its answer, tool calls announced
before they are updated, prompts only for sessions handed out and one at a time. The
client mode judges the probe agent's record of a client with these checks too."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .judge import Judge
from .kit import Kit
from .registry import CheckSpec, Mode
from .requirements import Finding
from .session_updates import TURN_CONTENT

ALL: tuple[Mode, ...] = ("agent", "client", "trace")
CHECKS = (
    CheckSpec(
        "trace.initialize-first",
        ALL,
        judges=(
            "ACP-CLIENT-INIT-001",
            "ACP-CLIENT-INIT-002",
            "ACP-CLIENT-INIT-003",
            "ACP-CLIENT-INIT-004",
        ),
    ),
    CheckSpec("trace.turn-order", ("agent", "trace"), judges=("ACP-AGENT-PROMPT-004",)),
    CheckSpec(
        "trace.tool-call-announced",
        ("agent", "trace"),
        judges=("ACP-AGENT-PROMPT-005",),
    ),
    CheckSpec(
        "trace.session-known", ("client", "trace"), judges=("ACP-CLIENT-PROMPT-001",)
    ),
    CheckSpec(
        "trace.one-prompt-in-flight",
        ("client", "trace"),
        judges=("ACP-CLIENT-PROMPT-002",),
    ),
)
TRACE_CHECKS = tuple(c.name for c in CHECKS)


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


@dataclass(slots=True)
class _State:
    """What the walk through a trace keeps."""

    judges: dict[str, Judge]
    client_outgoing: bool
    pending: dict[tuple[str, str], Any] = field(default_factory=dict)
    answered: set[tuple[str, str]] = field(default_factory=set)
    prompts: dict[str, str] = field(default_factory=dict)
    """Session -> the key of its prompt in flight."""
    ended: dict[str, int] = field(default_factory=dict)
    """Session -> the line its last turn was answered on."""
    handed: set[Any] = field(default_factory=set)
    """Session ids the agent handed out."""
    announced: dict[str, set[Any]] = field(default_factory=dict)
    first: bool = True


def check_trace(
    kit: Kit,
    entries: list[Entry],
    only: str | None = None,
    disagreements: list[dict[str, Any]] | None = None,
) -> list[Finding]:
    """Every finding of the trace, for both sides (or ``only`` the side named); where
    the schema and the models read a message differently goes to ``disagreements``."""
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
        judge.begin("trace", TRACE_CHECKS)
    state = _State(judges, init.outgoing if init is not None else False)
    if init is None:
        judges["client"].record(
            "ACP-CLIENT-INIT-001", "FAIL", "the trace holds no initialize"
        )
    for e in entries:
        _entry(kit, state, e)
    for (asker, rid), method in state.pending.items():
        judges["agent" if asker == "client" else "client"].record(
            "ACP-PEER-RPC-005",
            "FAIL",
            f"request {rid} ({method}) never answered in the trace",
        )
    findings: list[Finding] = []
    for side, judge in judges.items():
        if only is not None and side != only:
            continue
        _unobserved(judge)
        judge.finish()
        findings += [f for f in judge.findings if _judges(kit, f.requirement, side)]
        if disagreements is not None:
            disagreements += judge.disagreements
    return findings


def _entry(kit: Kit, state: _State, e: Entry) -> None:
    sender = "client" if e.outgoing == state.client_outgoing else "agent"
    judge = state.judges[sender]
    message = e.message
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        judge.record(
            "ACP-PEER-TRANSPORT-001", "FAIL", f"line {e.line}: no JSON-RPC message"
        )
        return
    judge.read += 1
    judge.record("ACP-PEER-TRANSPORT-001", "PASS")
    if "method" in message:
        _call(kit, state, e, sender, message)
    else:
        _answer(kit, state, e, sender, message)


def _call(
    kit: Kit, state: _State, e: Entry, sender: str, message: dict[str, Any]
) -> None:
    judge = state.judges[sender]
    if state.first and sender == "client":
        _initialize_first(kit, state, e, message)
    judge.call(message)
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    if sender == "client":
        _client_call(state, e, message, params or {})
    if "id" in message:
        key = (sender, json.dumps(message["id"], sort_keys=True))
        state.pending[key] = message["method"]
        if message["method"] == "session/prompt":
            state.prompts[str((params or {}).get("sessionId"))] = key[1]
    elif message["method"] == "session/update" and sender == "agent":
        _update(state, e, params or {})


def _initialize_first(
    kit: Kit, state: _State, e: Entry, message: dict[str, Any]
) -> None:
    client = state.judges["client"]
    ok = message["method"] == "initialize"
    client.record(
        "ACP-CLIENT-INIT-001",
        "PASS" if ok else "FAIL",
        "initialize came first"
        if ok
        else f"line {e.line}: {message['method']} before initialize",
    )
    state.first = False
    if not ok:
        return
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    version = (params or {}).get("protocolVersion")
    good = type(version) is int
    client.record(
        "ACP-CLIENT-INIT-002",
        "PASS" if good else "FAIL",
        f"protocolVersion {version}" if good else f"protocolVersion {version!r}",
    )
    info = (params or {}).get(kit.wire.client_info)
    if isinstance(info, dict) and info.get("name") and info.get("version"):
        client.record(
            "ACP-CLIENT-INIT-003", "PASS", f"{info['name']} {info['version']}"
        )
    else:
        missing = f"no {kit.wire.client_info} with name and version"
        client.record("ACP-CLIENT-INIT-003", "FAIL", missing)
    caps = (params or {}).get(kit.wire.client_capabilities)
    client.record(  # INFORMATIONAL: what was seen, recorded
        "ACP-CLIENT-INIT-004",
        "PASS",
        f"{kit.wire.client_capabilities} stated"
        if isinstance(caps, dict)
        else f"no {kit.wire.client_capabilities}",
    )
    _advertise(state.judges["agent"], kit.client_capabilities, caps)


def _client_call(
    state: _State, e: Entry, message: dict[str, Any], params: dict[str, Any]
) -> None:
    client = state.judges["client"]
    if message["method"] != "session/prompt":
        return
    session = params.get("sessionId")
    known = session in state.handed
    client.record(
        "ACP-CLIENT-PROMPT-001",
        "PASS" if known else "FAIL",
        f"prompts {session!r}, handed out"
        if known
        else f"line {e.line}: a prompt for {session!r}, never handed out",
    )
    busy = str(session) in state.prompts
    client.record(
        "ACP-CLIENT-PROMPT-002",
        "FAIL" if busy else "PASS",
        f"line {e.line}: a second prompt in flight for {session!r}"
        if busy
        else "one prompt at a time",
    )


def _update(state: _State, e: Entry, params: dict[str, Any]) -> None:
    agent = state.judges["agent"]
    session = str(params.get("sessionId"))
    update = params.get("update") if isinstance(params.get("update"), dict) else {}
    kind = (update or {}).get("sessionUpdate")
    calls = state.announced.setdefault(session, set())
    if kind == "tool_call":
        calls.add((update or {}).get("toolCallId"))
    elif kind == "tool_call_update":
        call = (update or {}).get("toolCallId")
        agent.record(
            "ACP-AGENT-PROMPT-005",
            "PASS" if call in calls else "FAIL",
            "announced first"
            if call in calls
            else f"line {e.line}: tool call {call!r} updated before announced",
        )
    if kind not in TURN_CONTENT:
        return
    if session not in state.prompts and session in state.ended:
        agent.record(
            "ACP-AGENT-PROMPT-004",
            "FAIL",
            f"line {e.line}: turn content after the turn's answer (line "
            f"{state.ended[session]})",
        )
    else:
        agent.record("ACP-AGENT-PROMPT-004", "PASS", "no turn content after its answer")


def _answer(
    kit: Kit, state: _State, e: Entry, sender: str, message: dict[str, Any]
) -> None:
    judge = state.judges[sender]
    asker = "agent" if sender == "client" else "client"
    key = (asker, json.dumps(message.get("id"), sort_keys=True))
    if key in state.answered and message.get("id") is not None:
        judge.record(
            "ACP-PEER-RPC-005",
            "FAIL",
            f"line {e.line}: request {key[1]} answered twice",
        )
    method = state.pending.pop(key, None)
    if method is None:
        judge.answer(None, message)
        return
    state.answered.add(key)
    judge.record("ACP-PEER-RPC-005", "PASS")
    judge.record("ACP-PEER-RPC-001", "PASS")
    judge.answer(kit.method(method, (sender, "protocol", "both")), message)
    result = message.get("result")
    if isinstance(result, dict):
        if method == "initialize":
            caps = result.get(kit.wire.agent_capabilities)
            _advertise(state.judges["client"], kit.agent_capabilities, caps)
        if isinstance(result.get("sessionId"), str) and sender == "agent":
            state.handed.add(result["sessionId"])
    for session, prompt in list(state.prompts.items()):
        if prompt == key[1] and asker == "client":
            del state.prompts[session]
            state.ended[session] = e.line


def _unobserved(judge: Judge) -> None:
    """What the trace never showed a chance for is SKIPPED."""
    seen = {f.requirement for f in judge.findings}
    for rid, why in (
        ("ACP-AGENT-PROMPT-005", "the trace holds no tool call update"),
        ("ACP-AGENT-PROMPT-004", "the trace holds no turn content"),
        ("ACP-CLIENT-PROMPT-001", "the trace holds no prompt"),
        ("ACP-CLIENT-PROMPT-002", "the trace holds no prompt"),
    ):
        if rid not in seen and rid in judge.kit.ids:
            judge.record(rid, "SKIPPED", why)


def _judges(kit: Kit, rid: str, side: str) -> bool:
    requirement = kit.requirement(rid)
    return requirement is not None and requirement.side in (side, "both")


def _advertise(judge: Judge, model: Any, value: Any) -> None:
    """What the other side advertised, for the judge of this side's gating."""
    try:
        judge.advertised = model.model_validate(
            value if isinstance(value, dict) else {}
        )
    except ValidationError:
        judge.advertised = model()
