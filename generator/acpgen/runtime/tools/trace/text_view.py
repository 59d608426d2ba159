"""Views of a trace: how the folded sessions' records read, and the text view for
terminals (the HTML view is ``html_view``, the command ``show``).

Schema-independent: it reads the folded wire records (``session.fold``). What it knows
of the protocol's shapes (text and image blocks, diffs, terminals, plan entries,
permission options, ``initialize``'s names) and of the terminal output agents stream in
a tool call's ``_meta`` (``terminal_output`` / ``terminal_output_delta`` chunks of
``data``, ``terminal_exit``, as claude-agent-acp and codex-acp send them) only makes
them easier to read; anything else is shown as its JSON, so that nothing a peer sent is
hidden.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...session.fold import Call, Entry, Folded, TraceCall, Unknown

META = "_meta"
OUTPUT_MEMBERS = ("terminal_output", "terminal_output_delta")
"""Members of a tool call's ``_meta`` that carry a chunk of a terminal's output."""
TERMINAL_MEMBERS = ("terminal_info", *OUTPUT_MEMBERS, "terminal_exit")

# -- reading the records
# ---------------------------------------------------------------------


def label(kind: str) -> str:
    """``agent_message_chunk`` -> ``agent message``."""
    return kind.removesuffix("_chunk").removesuffix("_update").replace("_", " ")


def block_text(block: Any) -> str:
    """A content block in words: its text, or what it is."""
    if not isinstance(block, Mapping):
        return as_json(block)
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind == "content":
        return block_text(block.get("content"))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '')}]"
    if kind == "resource_link":
        return f"[link {block.get('name') or ''} {block.get('uri', '')}]".replace(
            "  ", " "
        )
    if kind == "resource":
        inner = block.get("resource")
        if isinstance(inner, Mapping) and isinstance(inner.get("text"), str):
            return f"[resource {inner.get('uri', '')}]\n{inner['text']}"
        return (
            f"[resource {inner.get('uri', '') if isinstance(inner, Mapping) else ''}]"
        )
    return as_json(block)


def content_of(entry: Entry) -> list[Any]:
    """The blocks of a message-like thing (what chunks appended, or its ``content``)."""
    for member in ("content", "summary", "data"):
        value = entry.fields.get(member)
        if isinstance(value, list):
            return value
    return []


def is_tool_call(entry: Entry) -> bool:
    return "toolCallId" in entry.fields or entry.slot == "tool_calls"


@dataclass
class Terminal:
    """What is known of a terminal: its output and how it exited."""

    output: str = ""
    exit: str | None = None
    """How it exited, in words (``exit code 0``, ``signal SIGTERM``)."""
    cwd: str | None = None


def terminals(state: Folded) -> dict[str, Terminal]:
    """Terminal id -> its latest output, from the client's ``terminal/output`` answers
    (and how it exited, from them and ``terminal/wait_for_exit``)."""
    found: dict[str, Terminal] = {}
    for call in state.calls:
        params = call.params if isinstance(call.params, Mapping) else {}
        result = call.result if isinstance(call.result, Mapping) else {}
        terminal = params.get("terminalId")
        if not isinstance(terminal, str):
            continue
        if isinstance(result.get("output"), str):
            found.setdefault(terminal, Terminal()).output = result["output"]
        status = result.get("exitStatus", result if "exitCode" in result else None)
        if isinstance(status, Mapping):
            found.setdefault(terminal, Terminal()).exit = exit_text(status)
    return found


def meta_terminals(entry: Entry) -> dict[str, Terminal]:
    """Terminal id -> what the agent streamed of it in the tool call's ``_meta``: each
    ``terminal_output`` (or ``terminal_output_delta``) chunk's ``data``, joined in the
    order sent, and the latest ``terminal_exit``."""
    found: dict[str, Terminal] = {}
    for sent in entry.history.get(META, ()):
        for name in TERMINAL_MEMBERS:
            value = sent.get(name)
            if not isinstance(value, Mapping):
                continue
            terminal = found.setdefault(_terminal_id(value, entry), Terminal())
            if name in OUTPUT_MEMBERS and isinstance(value.get("data"), str):
                terminal.output += value["data"]
            elif name == "terminal_exit":
                terminal.exit = exit_text(value)
            elif name == "terminal_info" and isinstance(value.get("cwd"), str):
                terminal.cwd = value["cwd"]
    return found


def _terminal_id(value: Mapping[str, Any], entry: Entry) -> str:
    found = value.get("terminal_id", value.get("terminalId"))
    return found if isinstance(found, str) else str(entry.key)


def exit_text(status: Mapping[str, Any]) -> str:
    """An exit status (ACP's ``exitCode`` / ``signal``, or ``_meta``'s ``exit_code``)
    in words."""
    code = status.get("exitCode", status.get("exit_code"))
    signal = status.get("signal")
    parts = []
    if code is not None:
        parts.append(f"exit code {as_json(code)}")
    if signal is not None:
        parts.append(f"signal {signal if isinstance(signal, str) else as_json(signal)}")
    return ", ".join(parts) or "exited"


def other_meta(entry: Entry) -> dict[str, Any]:
    """The members of a thing's ``_meta`` besides those shown as a terminal."""
    meta = entry.fields.get(META)
    if not isinstance(meta, Mapping):
        return {}
    return {k: v for k, v in meta.items() if k not in TERMINAL_MEMBERS}


def tool_terminals(
    entry: Entry, outputs: Mapping[str, Terminal]
) -> list[tuple[str, Terminal]]:
    """The terminals of a tool call, in the order shown: those its content names (with
    the client's output, else what the agent streamed), then any other the agent
    streamed output of."""
    streamed = meta_terminals(entry)
    named = [
        str(item.get("terminalId"))
        for item in entry.fields.get("content") or []
        if isinstance(item, Mapping) and item.get("type") == "terminal"
    ]
    shown = []
    for terminal in dict.fromkeys([*named, *streamed]):
        client, agent = outputs.get(terminal), streamed.get(terminal)
        if client is not None and (client.output or agent is None):
            shown.append((terminal, client))
        else:
            shown.append((terminal, agent or Terminal()))
    return shown


def permission(call: Call) -> tuple[str, list[str], str]:
    """A permission request in words: the tool call, the options, the decision."""
    params = call.params if isinstance(call.params, Mapping) else {}
    found = params.get("toolCall")
    tool: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    title = str(tool.get("title") or tool.get("toolCallId") or "a tool call")
    options = [o for o in params.get("options") or [] if isinstance(o, Mapping)]
    names = [f"{o.get('name', '')} ({o.get('kind', '')})" for o in options]
    outcome = call.result.get("outcome") if isinstance(call.result, Mapping) else None
    if call.error is not None:
        decision = f"error: {as_json(call.error)}"
    elif not call.answered:
        decision = "no answer"
    elif isinstance(outcome, Mapping) and outcome.get("outcome") == "selected":
        chosen = next(
            (o for o in options if o.get("optionId") == outcome.get("optionId")), None
        )
        decision = (
            f"{chosen.get('name')} ({chosen.get('kind')})"
            if chosen
            else f"option {outcome.get('optionId')}"
        )
    else:
        decision = (
            str(outcome.get("outcome"))
            if isinstance(outcome, Mapping)
            else as_json(outcome)
        )
    return title, names, decision


def diff_lines(item: Mapping[str, Any]) -> list[str]:
    """A diff content item as unified diff lines."""
    old = item.get("oldText") if isinstance(item.get("oldText"), str) else ""
    new = item.get("newText") if isinstance(item.get("newText"), str) else ""
    path = str(item.get("path", ""))
    return list(
        difflib.unified_diff(
            str(old).splitlines(), str(new).splitlines(), path, path, lineterm=""
        )
    )


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """Where a turn ended: the answer to its prompt, after what the agent sent during
    it."""

    call: Call

    @property
    def reason(self) -> str:
        result = self.call.result if isinstance(self.call.result, Mapping) else {}
        reason = result.get("stopReason")
        if reason is not None:
            return reason if isinstance(reason, str) else as_json(reason)
        return "error" if self.call.error is not None else "no answer"


Item = Entry | Call | Unknown | TurnEnd


def is_prompt(item: Item) -> bool:
    params = item.params if isinstance(item, Call) else None
    return isinstance(params, Mapping) and isinstance(params.get("prompt"), list)


def conversation(state: Folded) -> list[Item]:
    """The timeline as a reader follows it: a call is folded when its answer comes, so a
    turn's prompt (a call with a ``prompt``) is moved before what the agent sent during
    it (from the first update after the previous prompt; calls between turns stay
    before), and the turn's end stays where the answer came."""
    items: list[Item] = []
    start = 0
    for item in state.timeline():
        if isinstance(item, Call) and is_prompt(item):
            first = next(
                (i for i in range(start, len(items)) if not isinstance(items[i], Call)),
                len(items),
            )
            items.insert(first, item)
            items.append(TurnEnd(item))
            start = len(items)
        else:
            items.append(item)
    return items


# -- times
# ---------------------------------------------------------------------


def moment(at: str | None) -> datetime.datetime | None:
    """A trace's time (ISO 8601, as the trace writer writes it), if it reads as one."""
    if not isinstance(at, str):
        return None
    try:
        found = datetime.datetime.fromisoformat(at)
    except ValueError:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Clock:
    """Times of a trace, told relative to its first (``+1.250 s``)."""

    start: datetime.datetime | None

    @classmethod
    def of(cls, states: Iterable[Folded], others: Sequence[TraceCall] = ()) -> Clock:
        """The clock of a trace: it starts at the earliest time the trace records."""
        times = [c.asked_at for c in others] + [c.at for c in others]
        for state in states:
            times += [c.asked_at for c in state.calls] + [c.at for c in state.calls]
            times += [u.at for u in state.unknown]
            times += [e.made_at for s in state.slots.values() for e in s.values()]
        known = [t for t in map(moment, times) if t is not None]
        return cls(min(known) if known else None)

    def since_start(self, at: str | None) -> str | None:
        """``+1.250 s``: how long after the trace's start ``at`` was."""
        found = moment(at)
        if found is None or self.start is None:
            return None
        return "+" + seconds((found - self.start).total_seconds())


def seconds(value: float) -> str:
    """A span of time in words (``0.250 s``, ``2 min 5.000 s``)."""
    if value < 60:
        return f"{value:.3f} s"
    minutes, rest = divmod(value, 60)
    return f"{int(minutes)} min {rest:.3f} s"


def duration(since: str | None, until: str | None) -> str | None:
    """How long from ``since`` to ``until``, if both are known."""
    start, end = moment(since), moment(until)
    if start is None or end is None:
        return None
    return seconds(max((end - start).total_seconds(), 0.0))


def started(state: Folded) -> str | None:
    """When the session's first call or thing was written, as the trace records it."""
    times = [(moment(c.asked_at), c.asked_at) for c in state.calls]
    times += [
        (moment(e.made_at), e.made_at) for s in state.slots.values() for e in s.values()
    ]
    known = sorted((t, at) for t, at in times if t is not None and at is not None)
    return known[0][1] if known else None


# -- who spoke
# ---------------------------------------------------------------------


@dataclass(frozen=True)
class Peers:
    """What one ``initialize`` says of both ends: their names and versions, the protocol
    version."""

    agent: str | None
    client: str | None
    protocol: str | None
    at: str | None
    extra: dict[str, Any] = field(default_factory=dict)
    """The rest of what they advertised (capabilities, auth methods), as sent."""


def peers(others: Sequence[TraceCall]) -> list[Peers]:
    """The ``initialize`` calls of a trace, in words."""
    found = []
    for call in others:
        if call.method != "initialize":
            continue
        params = call.params if isinstance(call.params, Mapping) else {}
        result = call.result if isinstance(call.result, Mapping) else {}
        version = result.get("protocolVersion", params.get("protocolVersion"))
        extra = {
            f"{side}.{k}": v
            for side, values in (("client", params), ("agent", result))
            for k, v in values.items()
            if k not in ("protocolVersion", "clientInfo", "agentInfo")
        }
        found.append(
            Peers(
                _named(result.get("agentInfo")),
                _named(params.get("clientInfo")),
                None if version is None else as_json(version),
                call.asked_at,
                extra,
            )
        )
    return found


def _named(info: Any) -> str | None:
    """An ``Implementation`` (``name``, ``title``, ``version``) in words."""
    if not isinstance(info, Mapping):
        return None
    name = info.get("title") or info.get("name")
    words = [str(name)] if name else []
    if info.get("title") and info.get("name") and info["title"] != info["name"]:
        words.append(f"({info['name']})")
    if info.get("version"):
        words.append(str(info["version"]))
    return " ".join(words) or as_json(info)


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def records(state: Folded) -> list[Entry]:
    return [
        e for entries in state.slots.values() for e in entries.values() if e.key is None
    ]


def decoded(data: Any) -> str:
    if not isinstance(data, str):
        return as_json(data)
    try:
        return base64.b64decode(data, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return data


# -- text
# ---------------------------------------------------------------------


def text_peers(found: Sequence[Peers]) -> str:
    """Who spoke, from each ``initialize`` of the trace."""
    lines = [
        f"== agent {p.agent or '(unnamed)'}, client {p.client or '(unnamed)'}, "
        f"protocol {p.protocol or '?'}"
        for p in found
    ]
    return "".join(line + "\n" for line in lines) + ("\n" if lines else "")


def text_session(state: Folded) -> str:
    """One session as plain text."""
    begun = started(state)
    lines = [f"== session {state.session_id}" + (f" (from {begun})" if begun else "")]
    for record in records(state):
        lines += _text_record(record)
    outputs = terminals(state)
    for item in conversation(state):
        lines.append("")
        if isinstance(item, TurnEnd):
            took = duration(item.call.asked_at, item.call.at)
            lines.append(
                f"(turn ended: {item.reason}" + (f", {took})" if took else ")")
            )
        elif isinstance(item, Call):
            lines += _text_call(item)
        elif isinstance(item, Unknown):
            lines.append(f"? {item.kind or 'update'} (kept, not folded: {item.reason})")
            lines.append("  " + as_json(item.payload))
        elif is_tool_call(item):
            lines += _text_tool(item, outputs)
        else:
            lines += _text_thing(item)
    return "\n".join(lines) + "\n\n"


def _text_record(record: Entry) -> list[str]:
    entries = record.fields.get("entries")
    if isinstance(entries, list):
        lines = [f"[{label(record.slot)}]"]
        for e in entries:
            if isinstance(e, Mapping):
                lines.append(
                    f"  [{_mark(e.get('status'))}] {e.get('content', '')} "
                    f"({e.get('priority', '')})"
                )
        return lines
    return [f"[{label(record.slot)}] {as_json(dict(record.fields))}"]


def _mark(status: Any) -> str:
    return {"completed": "x", "in_progress": ">", "pending": " "}.get(str(status), "?")


def _text_call(call: Call) -> list[str]:
    if call.method.endswith("request_permission"):
        title, options, decision = permission(call)
        return [
            f"! permission for {title}: {', '.join(options)}",
            f"  decision: {decision}",
        ]
    params = call.params if isinstance(call.params, Mapping) else {}
    if isinstance(params.get("prompt"), list):
        return ["> user"] + [
            "  " + line for b in params["prompt"] for line in block_text(b).splitlines()
        ]
    answer = as_json(call.error) if call.error is not None else as_json(call.result)
    return [f"-> {call.method} {as_json(call.params)}", f"   <- {answer}"]


def _text_thing(entry: Entry) -> list[str]:
    blocks = content_of(entry)
    if blocks:
        text = "".join(
            decoded(b) if entry.fields.get("data") is blocks else block_text(b)
            for b in blocks
        )
        return [f"{label(entry.kind)}:"] + ["  " + line for line in text.splitlines()]
    return [f"{label(entry.kind)} {entry.key}: {as_json(dict(entry.fields))}"]


def _text_tool(entry: Entry, outputs: Mapping[str, Terminal]) -> list[str]:
    fields = entry.fields
    kind = f" [{fields['kind']}]" if fields.get("kind") else ""
    status = fields.get("status", "pending")
    lines = [f"* tool {fields.get('title') or entry.key}{kind}: {status}"]
    for item in fields.get("content") or []:
        if not isinstance(item, Mapping) or item.get("type") == "terminal":
            continue
        if item.get("type") == "diff":
            lines += ["  " + line for line in diff_lines(item)]
        else:
            lines += ["  " + line for line in block_text(item).splitlines()]
    for terminal, shown in tool_terminals(entry, outputs):
        lines.append(
            f"  $ terminal {terminal}" + (f" in {shown.cwd}" if shown.cwd else "")
        )
        lines += ["  " + s for s in shown.output.splitlines()]
        if shown.exit:
            lines.append(f"  [{shown.exit}]")
    for location in fields.get("locations") or []:
        if isinstance(location, Mapping):
            lines.append(
                f"  @ {location.get('path')}:{location.get('line', '')}".rstrip(":")
            )
    meta = other_meta(entry)
    if meta:
        lines.append(f"  _meta {as_json(meta)}")
    return lines


def skipped_text(skipped: list[int]) -> str:
    return (
        f"({len(skipped)} trace line(s) hold no message: {skipped[:10]})\n"
        if skipped
        else ""
    )


# -- html
# ---------------------------------------------------------------------
