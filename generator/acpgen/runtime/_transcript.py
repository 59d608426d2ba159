"""Readable transcripts of folded sessions: how the records read, and the text view for
terminals (the HTML page is ``_transcript_html``, the command ``_trace_cli``).

Schema-independent: it reads the folded wire records (``_fold``). What it knows of the
protocol's shapes (text and image blocks, diffs, terminals, plan entries, permission
options) only makes them easier to read; anything else is shown as its JSON, so that
nothing a peer sent is hidden.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import json
from collections.abc import Mapping
from typing import Any

from ._fold import Call, Entry, Folded, Unknown

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


def terminals(state: Folded) -> dict[str, str]:
    """Terminal id -> its latest output, from ``terminal/output`` answers and
    ``terminal/wait_for_exit``, and from agents' ``_meta`` terminal output."""
    found: dict[str, str] = {}
    for call in state.calls:
        params = call.params if isinstance(call.params, Mapping) else {}
        result = call.result if isinstance(call.result, Mapping) else {}
        terminal = params.get("terminalId")
        if isinstance(terminal, str) and isinstance(result.get("output"), str):
            found[terminal] = result["output"]
            status = result.get("exitStatus")
            if status:
                found[terminal] += f"\n[exit {as_json(status)}]"
    return found


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


def transcript(state: Folded) -> list[Entry | Call | Unknown]:
    """The timeline as a reader follows it: a call is folded when its answer comes, so a
    turn's prompt (a call with a ``prompt``) is moved before what the agent sent during
    it (from the first update after the previous prompt; calls between turns stay
    before)."""
    items: list[Entry | Call | Unknown] = []
    start = 0
    for item in state.timeline():
        params = item.params if isinstance(item, Call) else None
        if isinstance(params, Mapping) and isinstance(params.get("prompt"), list):
            first = next(
                (i for i in range(start, len(items)) if not isinstance(items[i], Call)),
                len(items),
            )
            items.insert(first, item)
            start = len(items)
        else:
            items.append(item)
    return items


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


def text_session(state: Folded) -> str:
    """One session as plain text."""
    lines = [f"== session {state.session_id}"]
    for record in records(state):
        lines += _text_record(record)
    outputs = terminals(state)
    for item in transcript(state):
        lines.append("")
        if isinstance(item, Call):
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
        lines = ["> user"] + [
            "  " + line for b in params["prompt"] for line in block_text(b).splitlines()
        ]
        result = call.result if isinstance(call.result, Mapping) else {}
        lines.append(
            f"  (turn ended: "
            f"{result.get('stopReason') or ('error' if call.error else 'no answer')})"
        )
        return lines
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


def _text_tool(entry: Entry, outputs: Mapping[str, str]) -> list[str]:
    fields = entry.fields
    kind = f" [{fields['kind']}]" if fields.get("kind") else ""
    status = fields.get("status", "pending")
    lines = [f"* tool {fields.get('title') or entry.key}{kind}: {status}"]
    for item in fields.get("content") or []:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "diff":
            lines += ["  " + line for line in diff_lines(item)]
        elif item.get("type") == "terminal":
            terminal = str(item.get("terminalId"))
            lines += [f"  $ terminal {terminal}"] + [
                "  " + s for s in outputs.get(terminal, "").splitlines()
            ]
        else:
            lines += ["  " + line for line in block_text(item).splitlines()]
    for location in fields.get("locations") or []:
        if isinstance(location, Mapping):
            lines.append(
                f"  @ {location.get('path')}:{location.get('line', '')}".rstrip(":")
            )
    return lines


def skipped_text(skipped: list[int]) -> str:
    return (
        f"({len(skipped)} trace line(s) hold no message: {skipped[:10]})\n"
        if skipped
        else ""
    )


# -- html
# ---------------------------------------------------------------------
