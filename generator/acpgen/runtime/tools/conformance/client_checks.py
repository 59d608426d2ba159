"""Judging a client from what the probe agent recorded (``conformance client``): the
trace's checks for the client's side (:mod:`.trace_check`), and what only the probe
sees: permission answers (and, after the client cancelled a turn, the ones of that
turn answered ``cancelled``), its ``_`` request answered, -32700 and -32600 for its
malformed lines, each stress point survived, ids echoed, notifications unanswered,
``mcpServers`` listed, the checks the probe made itself (files, terminals) and the
version-mismatch run."""

from __future__ import annotations

import json
from typing import Any

from .judge import Judge
from .kit import Kit
from .probe_agent import BAD_LINE, EXT_METHOD, MISMATCH_VERSION, UNKNOWN_KIND
from .registry import CheckSpec
from .requirements import Finding
from .trace_check import Entry, check_trace

CHECKS = (
    CheckSpec(
        "client.permission",
        ("client",),
        judges=("ACP-CLIENT-PERM-001", "ACP-CLIENT-PERM-002"),
    ),
    CheckSpec(
        "client.permission-pending-cancel",
        ("client",),
        judges=("ACP-CLIENT-CANCEL-001",),
    ),
    CheckSpec("client.version-mismatch", ("client",), judges=("ACP-CLIENT-INIT-005",)),
    CheckSpec("client.unknown-update", ("client",), judges=("ACP-CLIENT-EXT-001",)),
    CheckSpec("client.session", ("client",), judges=("ACP-CLIENT-SESSION-002",)),
    CheckSpec("client.probe-notifications", ("client",), judges=("ACP-PEER-RPC-004",)),
    CheckSpec(
        "client.probe-unknown-methods",
        ("client",),
        judges=("ACP-PEER-EXT-001", "ACP-PEER-RPC-006"),
    ),
    CheckSpec(
        "client.probe-malformed",
        ("client",),
        judges=(
            "ACP-PEER-RPC-007",
            "ACP-PEER-RPC-008",
            "ACP-PEER-RPC-009",
            "ACP-PEER-RPC-010",
        ),
    ),
    CheckSpec("client.probe-meta", ("client",), judges=("ACP-PEER-EXT-003",)),
)
MALFORMED = {-32700: "ACP-PEER-RPC-007", -32600: "ACP-PEER-RPC-008"}


def client_checks(kit: Kit) -> tuple[str, ...]:
    """The names of the build's checks of the client mode."""
    return tuple(
        c.name
        for c in kit.checks
        if "client" in c.modes and c.name.startswith("client.")
    )


def judge_client(
    kit: Kit,
    entries: list[Entry],
    probe_checks: list[dict[str, Any]],
    *,
    remote: bool,
    disagreements: list[dict[str, Any]] | None = None,
) -> list[Finding]:
    """The findings of a client run, from the probe's record and its own checks."""
    findings = check_trace(kit, entries, only="client", disagreements=disagreements)
    judge = Judge(kit, "client")
    judge.begin("client", client_checks(kit))
    sent = [e.message for e in entries if e.outgoing and isinstance(e.message, dict)]
    got = [e.message for e in entries if not e.outgoing and isinstance(e.message, dict)]
    _answers(judge, sent, got)
    _permissions(judge, entries)
    _sessions(judge, got)
    if remote:
        framed = "over a remote transport every message is framed: no malformed line"
        for rid in (
            "ACP-PEER-RPC-007",
            "ACP-PEER-RPC-008",
            "ACP-PEER-RPC-009",
            "ACP-PEER-RPC-010",
        ):
            judge.record(rid, "SKIPPED", framed)
    else:
        _malformed(judge, entries)
    _survived(judge, entries)
    _honored(kit, judge, entries)
    for item in probe_checks:
        judge.record(item["requirement"], item["status"], item.get("message", ""))
    return findings + judge.findings


def _answers(
    judge: Judge, sent: list[dict[str, Any]], got: list[dict[str, Any]]
) -> None:
    ours = {json.dumps(m.get("id")): m for m in sent if "method" in m and "id" in m}
    answers = {json.dumps(m.get("id")): m for m in got if "method" not in m}
    for key, request in ours.items():
        answer = answers.get(key)
        if request["method"] == EXT_METHOD:
            judge.record(
                "ACP-PEER-EXT-001",
                "PASS" if answer is not None else "FAIL",
                "a `_` request answered"
                if answer is not None
                else "a `_` request was not answered",
            )
            if answer is not None:
                code = _code(answer)
                judge.record(
                    "ACP-PEER-RPC-006",
                    "PASS" if code == -32601 else "FAIL",
                    "answered -32601"
                    if code == -32601
                    else f"a `_` request it does not know answered {answer}",
                )
    strays = [
        m
        for m in got
        if "method" not in m
        and json.dumps(m.get("id")) not in ours
        and _code(m) not in MALFORMED
    ]
    if strays:
        judge.record(
            "ACP-PEER-RPC-004", "FAIL", f"an answer to no request: {strays[0]}"
        )
    elif any("method" in m and "id" not in m for m in sent):
        judge.record("ACP-PEER-RPC-004", "PASS", "no notification was answered")


def _sessions(judge: Judge, got: list[dict[str, Any]]) -> None:
    for m in got:
        if m.get("method") != "session/new":
            continue
        params = m.get("params") if isinstance(m.get("params"), dict) else {}
        listed = isinstance((params or {}).get("mcpServers"), list)
        judge.record(
            "ACP-CLIENT-SESSION-002",
            "PASS" if listed else "FAIL",
            "mcpServers listed" if listed else "session/new without an mcpServers list",
        )


def _turns(entries: list[Entry]) -> list[tuple[Any, int, int]]:
    """Each prompt turn the probe saw: (session, index of the prompt, index of its
    answer, or the end)."""
    found = []
    for at, e in enumerate(entries):
        m = e.message
        if e.outgoing or not isinstance(m, dict) or m.get("method") != "session/prompt":
            continue
        session = (m.get("params") or {}).get("sessionId")
        end = next(
            (
                i
                for i in range(at + 1, len(entries))
                if entries[i].outgoing
                and isinstance(entries[i].message, dict)
                and "method" not in entries[i].message
                and entries[i].message.get("id") == m.get("id")
            ),
            len(entries),
        )
        found.append((session, at, end))
    return found


def _permissions(judge: Judge, entries: list[Entry]) -> None:
    """Each permission request answered with an offered option or ``cancelled``;
    ``cancelled`` only in a turn the client cancelled; after a cancel, the pending
    ones of that turn answered ``cancelled`` (a cancel's scope is its turn)."""
    turns = _turns(entries)
    in_scope = 0
    for at, e in enumerate(entries):
        m = e.message
        if not (
            e.outgoing
            and isinstance(m, dict)
            and m.get("method") == "session/request_permission"
        ):
            continue
        session = (m.get("params") or {}).get("sessionId")
        answered = next(
            (
                i
                for i in range(at + 1, len(entries))
                if _answers_to(entries[i], m.get("id"))
            ),
            None,
        )
        if answered is None:
            judge.record(
                "ACP-CLIENT-PERM-001", "FAIL", "a permission request was never answered"
            )
            continue
        answer = entries[answered].message
        turn = next(((p, q) for s, p, q in turns if s == session and p < at < q), None)
        span = range(turn[0], turn[1]) if turn is not None else range(0)
        cancels = [i for i in span if _cancels(entries[i], session)]
        outcome = _outcome(answer)
        _permission_answer(judge, m, answer, outcome, bool(cancels))
        before = [c for c in cancels if c < answered]
        if before:
            in_scope += 1
            good = outcome.get("outcome") == "cancelled"
            judge.record(
                "ACP-CLIENT-CANCEL-001",
                "PASS" if good else "FAIL",
                "answered cancelled after the client cancelled its turn"
                if good
                else "after the client cancelled the turn, its pending permission "
                f"request was answered {answer}",
            )
    if not in_scope:
        judge.record(
            "ACP-CLIENT-CANCEL-001",
            "SKIPPED",
            "the client did not cancel a turn while a permission request of it was "
            "pending",
        )


def _permission_answer(
    judge: Judge,
    request: dict[str, Any],
    answer: Any,
    outcome: dict[str, Any],
    cancelled: bool,
) -> None:
    options = (request.get("params") or {}).get("options") or []
    offered = {o.get("optionId") for o in options if isinstance(o, dict)}
    kind = outcome.get("outcome")
    ok = kind == "cancelled" or (
        kind == "selected" and outcome.get("optionId") in offered
    )
    judge.record(
        "ACP-CLIENT-PERM-001",
        "PASS" if ok else "FAIL",
        f"answered {kind} {outcome.get('optionId', '')}".rstrip()
        if ok
        else f"answered {answer}",
    )
    if kind == "cancelled":
        judge.record(
            "ACP-CLIENT-PERM-002",
            "PASS" if cancelled else "FAIL",
            "cancelled, in a turn the client cancelled"
            if cancelled
            else "answered cancelled in a turn the client did not cancel",
        )
    elif ok:
        judge.record("ACP-CLIENT-PERM-002", "PASS", f"answered {kind}")


def _cancels(e: Entry, session: Any) -> bool:
    m = e.message
    return (
        not e.outgoing
        and isinstance(m, dict)
        and m.get("method") == "session/cancel"
        and (m.get("params") or {}).get("sessionId") == session
    )


def _answers_to(e: Entry, rid: Any) -> bool:
    m = e.message
    return (
        not e.outgoing
        and isinstance(m, dict)
        and "method" not in m
        and m.get("id") == rid
    )


def _outcome(answer: Any) -> dict[str, Any]:
    result = answer.get("result") if isinstance(answer, dict) else None
    outcome = result.get("outcome") if isinstance(result, dict) else None
    return outcome if isinstance(outcome, dict) else {}


def _code(message: dict[str, Any]) -> Any:
    error = message.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _rpc(message: Any) -> bool:
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0"


def _malformed(judge: Judge, entries: list[Entry]) -> None:
    """The client's answers to the probe's line that is no JSON and its JSON value
    that is no request: JSON-RPC's SHOULDs (-32700, -32600, each with id null)."""
    sent = [
        e
        for e in entries
        if e.outgoing and not _rpc(e.message) and e.message is not None
    ]
    if not sent:
        return  # no turn reached the malformed lines: NOT_TESTED
    answers = [
        e.message
        for e in entries
        if not e.outgoing and _rpc(e.message) and "method" not in e.message
    ]
    ids_judged = False
    for code, rid in MALFORMED.items():
        found = [m for m in answers if _code(m) == code]
        what = (
            "a line that is no JSON"
            if code == -32700
            else "a JSON value that is no request"
        )
        judge.record(
            rid,
            "PASS" if found else "FAIL",
            f"{what}: answered {code}"
            if found
            else f"{what} was not answered with error {code}",
        )
        for m in found:
            ids_judged = True
            ok = m.get("id") is None
            judge.record(
                "ACP-PEER-RPC-009",
                "PASS" if ok else "FAIL",
                "answered with id null"
                if ok
                else f"error {code} answered with id {m.get('id')!r}, not null",
            )
    if not ids_judged:
        judge.record(
            "ACP-PEER-RPC-009",
            "SKIPPED",
            "the client answered no malformed message (allowed)",
        )


def _survived(judge: Judge, entries: list[Entry]) -> None:
    """Each of the probe's stress points in a turn (an update with ``_meta``, one of
    a kind the schema does not name, the malformed lines) is survived when a later
    request of the probe's is answered; once the client stopped answering, the later
    points are SKIPPED (the first one FAILs)."""
    answered = {
        json.dumps(e.message.get("id"))
        for e in entries
        if not e.outgoing and isinstance(e.message, dict) and "method" not in e.message
    }
    points = (
        ("ACP-PEER-EXT-003", "a session/update carrying _meta", _has_meta),
        ("ACP-CLIENT-EXT-001", f"an update of kind {UNKNOWN_KIND}", _unknown_kind),
        ("ACP-PEER-RPC-010", "the malformed lines", lambda m: m == BAD_LINE),
    )
    cancelled = any(
        not e.outgoing
        and isinstance(e.message, dict)
        and e.message.get("method") == "session/cancel"
        for e in entries
    )
    stopped = ""
    for rid, what, matches in points:
        at = next(
            (i for i, e in enumerate(entries) if e.outgoing and matches(e.message)),
            None,
        )
        if at is None:
            continue
        later = [
            json.dumps(e.message.get("id"))
            for e in entries[at + 1 :]
            if e.outgoing
            and isinstance(e.message, dict)
            and "method" in e.message
            and "id" in e.message
        ]
        if any(key in answered for key in later):
            judge.record(rid, "PASS", f"a later request was answered after {what}")
        elif stopped:
            judge.record(
                rid, "SKIPPED", f"the client had stopped answering after {stopped}"
            )
        elif not later and cancelled:
            judge.record(rid, "SKIPPED", f"the client cancelled the turn before {what}")
        else:
            stopped = what
            judge.record(
                rid,
                "FAIL",
                f"after {what}, the client answered none of the probe's {len(later)} "
                "later requests"
                if later
                else f"the client closed the connection after {what}",
            )


def _has_meta(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("method") == "session/update"
        and "_meta" in (message.get("params") or {})
    )


def _unknown_kind(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("method") != "session/update":
        return False
    update = (message.get("params") or {}).get("update") or {}
    return isinstance(update, dict) and update.get("sessionUpdate") == UNKNOWN_KIND


def _honored(kit: Kit, judge: Judge, entries: list[Entry]) -> None:
    """A client method the probe called (only where advertised) is not answered
    "method not found" or "invalid params"."""
    asked: dict[str, str] = {}
    answers: dict[str, dict[str, Any]] = {}
    for e in entries:
        m = e.message
        if not isinstance(m, dict):
            continue
        if e.outgoing and "method" in m and "id" in m:
            asked[json.dumps(m["id"])] = m["method"]
        elif not e.outgoing and "method" not in m:
            answers[json.dumps(m.get("id"))] = m
    subjects = {h for c in kit.checks if c.name in judge.active for h in c.honors}
    for r in kit.requirements:
        if (
            r.family != "capability-honor"
            or r.side != "client"
            or r.subject not in subjects
        ):
            continue
        keys = [k for k, method in asked.items() if method == r.subject]
        if not keys:
            judge.record(
                r.id,
                "SKIPPED",
                f"the probe did not call `{r.subject}` (not advertised, or no turn)",
            )
        for key in keys:
            code = _code(answers.get(key) or {})
            ok = code not in (-32601, -32602)
            judge.record(
                r.id,
                "PASS" if ok else "FAIL",
                f"`{r.subject}` answered"
                if ok
                else f"`{r.subject}` answered error {code} although advertised",
            )


def mismatch(
    judge: Judge, entries: list[Entry], closed: bool, exit_code: int | None
) -> None:
    """ACP-CLIENT-INIT-005: after the probe answered ``initialize`` with a version
    the client does not speak, the client sends nothing more and closes the
    connection."""
    rid = "ACP-CLIENT-INIT-005"
    answer = next(
        (
            i
            for i, e in enumerate(entries)
            if e.outgoing
            and isinstance(e.message, dict)
            and isinstance(e.message.get("result"), dict)
            and e.message["result"].get("protocolVersion") == MISMATCH_VERSION
        ),
        None,
    )
    if answer is None:
        judge.record(rid, "SKIPPED", "the client sent no initialize in the second run")
        return
    went_on = [
        e.message["method"]
        for e in entries[answer + 1 :]
        if not e.outgoing and isinstance(e.message, dict) and "method" in e.message
    ]
    if went_on:
        judge.record(
            rid,
            "FAIL",
            f"the probe answered protocolVersion {MISMATCH_VERSION}; the client went "
            "on with " + ", ".join(f"`{m}`" for m in went_on[:3]),
        )
    elif closed or exit_code is not None:
        judge.record(
            rid, "PASS", "the client sent nothing more and closed the connection"
        )
    else:
        judge.record(
            rid,
            "FAIL",
            f"the probe answered protocolVersion {MISMATCH_VERSION}; the client "
            "neither "
            "closed the connection nor left",
        )
