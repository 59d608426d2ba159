"""Readable transcripts of folded sessions: text for terminals, one self-contained HTML
page, or JSON; and the ``python -m <package>.trace`` command that prints them.

Schema-independent: it reads the folded wire records (``_fold``). What it knows of the
protocol's shapes (text and image blocks, diffs, terminals, plan entries, permission
options) only makes them easier to read; anything else is shown as its JSON, so that
nothing a peer sent is hidden.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import difflib
import html
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._fold import Call, Entry, Folded, TraceProblems, Unknown, to_json

Fold = Callable[[Iterable[str], TraceProblems], Mapping[str, Any]]
"""Reads a trace's lines into session id -> state (``SessionState.from_lines``)."""


def main(argv: Sequence[str] | None, fold: Fold, prog: str) -> int:
    """``show TRACE [--session ID] [--format text|html|json] [--output FILE]``."""
    parser = argparse.ArgumentParser(prog=prog, description="Read a wire trace of ACP.")
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser(
        "show", help="print the sessions of a trace as a transcript"
    )
    show.add_argument(
        "trace", type=Path, help="a trace written with trace= or ACP_TRACE"
    )
    show.add_argument("--session", help="only this session (by id)")
    show.add_argument("--format", choices=("text", "html", "json"), default="text")
    show.add_argument(
        "--output", type=Path, help="write to this file (default: stdout)"
    )
    args = parser.parse_args(argv)
    problems = TraceProblems()
    try:
        with args.trace.open(encoding="utf-8", errors="replace") as lines:
            states = {k: v.wire for k, v in fold(lines, problems).items()}
    except OSError as error:
        print(
            f"{prog}: error: cannot read {args.trace}: {error.strerror}",
            file=sys.stderr,
        )
        return 2
    if args.session is not None:
        if args.session not in states:
            known = ", ".join(states) or "none"
            print(
                f"{prog}: error: no session {args.session!r} in the trace "
                f"(sessions: {known})",
                file=sys.stderr,
            )
            return 2
        states = {args.session: states[args.session]}
    text = render(states, args.format, problems)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def render(
    states: Mapping[str, Folded], form: str, problems: TraceProblems | None = None
) -> str:
    """The sessions as a transcript in ``form`` (``text``, ``html`` or ``json``)."""
    skipped = list(problems.lines) if problems is not None else []
    if form == "json":
        data = {
            "sessions": [to_json(s) for s in states.values()],
            "unreadLines": skipped,
        }
        return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    if form == "html":
        return page(states, skipped)
    return "".join(text_session(s) for s in states.values()) + _skipped_text(skipped)


# -- reading the records
# ---------------------------------------------------------------------


def label(kind: str) -> str:
    """``agent_message_chunk`` -> ``agent message``."""
    return kind.removesuffix("_chunk").removesuffix("_update").replace("_", " ")


def block_text(block: Any) -> str:
    """A content block in words: its text, or what it is."""
    if not isinstance(block, Mapping):
        return _json(block)
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
    return _json(block)


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
                found[terminal] += f"\n[exit {_json(status)}]"
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
        decision = f"error: {_json(call.error)}"
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
            else _json(outcome)
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


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _records(state: Folded) -> list[Entry]:
    return [
        e for entries in state.slots.values() for e in entries.values() if e.key is None
    ]


def _decoded(data: Any) -> str:
    if not isinstance(data, str):
        return _json(data)
    try:
        return base64.b64decode(data, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return data


# -- text
# ---------------------------------------------------------------------


def text_session(state: Folded) -> str:
    """One session as plain text."""
    lines = [f"== session {state.session_id}"]
    for record in _records(state):
        lines += _text_record(record)
    outputs = terminals(state)
    for item in transcript(state):
        lines.append("")
        if isinstance(item, Call):
            lines += _text_call(item)
        elif isinstance(item, Unknown):
            lines.append(f"? {item.kind or 'update'} (kept, not folded: {item.reason})")
            lines.append("  " + _json(item.payload))
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
    return [f"[{label(record.slot)}] {_json(dict(record.fields))}"]


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
    answer = _json(call.error) if call.error is not None else _json(call.result)
    return [f"-> {call.method} {_json(call.params)}", f"   <- {answer}"]


def _text_thing(entry: Entry) -> list[str]:
    blocks = content_of(entry)
    if blocks:
        text = "".join(
            _decoded(b) if entry.fields.get("data") is blocks else block_text(b)
            for b in blocks
        )
        return [f"{label(entry.kind)}:"] + ["  " + line for line in text.splitlines()]
    return [f"{label(entry.kind)} {entry.key}: {_json(dict(entry.fields))}"]


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


def _skipped_text(skipped: list[int]) -> str:
    return (
        f"({len(skipped)} trace line(s) hold no message: {skipped[:10]})\n"
        if skipped
        else ""
    )


# -- html
# ---------------------------------------------------------------------

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:10px 20px}
header h1{font-size:16px;margin:0}
.session{display:flex;gap:20px;padding:16px 20px;align-items:flex-start}
main{flex:3;min-width:0}aside{flex:1;min-width:220px;position:sticky;top:10px}
.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:10px 14px;
margin:0 0 10px}
.who{font-size:12px;font-weight:600;text-transform:uppercase;color:#5b6475;
margin-bottom:4px}
.user{border-left:4px solid #3b6fd8}.agent{border-left:4px solid #2f9e6a}
.thought{border-left:4px solid #b0b6c3;color:#5b6475;font-style:italic}
.text{white-space:pre-wrap;word-wrap:break-word}
details.tool>summary{cursor:pointer;font-weight:600}
.status{font-size:12px;border-radius:10px;padding:1px 8px;margin-left:6px;
background:#eef0f4}
.status.completed{background:#dff3e8}.status.failed{background:#fbe1e1}
.status.in_progress{background:#fff2cc}
pre{background:#0f1420;color:#e6e9ef;padding:8px;border-radius:6px;overflow:auto;
font-size:12px}
pre .add{color:#7ee2a8}pre .del{color:#ff9b9b}pre .hunk{color:#8fb3ff}
.permission{border-left:4px solid #d8913b}.unknown{border-left:4px solid #c0392b}
ul.plan{list-style:none;padding:0;margin:0}
ul.plan li::before{content:attr(data-mark) " "}
img{max-width:100%}table{border-collapse:collapse}td{padding:2px 6px;vertical-align:top}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
MARKS = {"completed": "\u2611", "in_progress": "\u25b6"}


def page(states: Mapping[str, Folded], skipped: list[int]) -> str:
    """A single self-contained HTML page of every session of ``states``: no script, no
    network (its content security policy forbids any)."""
    body = "".join(_html_session(s) for s in states.values())
    if not body:
        body = _tag("p", "No session in this trace.", cls="card")
    if skipped:
        body += _tag("p", f"{len(skipped)} trace line(s) hold no message.", cls="card")
    head = (
        '<meta charset=utf-8><meta name=viewport content="width=device-width">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>ACP trace</title><style>{STYLE}</style>"
    )
    title = _tag("header", _tag("h1", f"ACP trace: {len(states)} session(s)"))
    document = f"<html lang=en><head>{head}</head><body>{title}{body}</body></html>"
    return f"<!DOCTYPE html>\n{document}\n"


def _e(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else _json(value), quote=True)


def _tag(name: str, body: str, *, cls: str = "", **data: Any) -> str:
    """``<name class=... data-...>body</name>``: ``body`` is HTML, attributes are
    escaped."""
    attrs = f' class="{_e(cls)}"' if cls else ""
    attrs += "".join(f' data-{k.replace("_", "-")}="{_e(v)}"' for k, v in data.items())
    return f"<{name}{attrs}>{body}</{name}>"


def _who(text: str) -> str:
    return _tag("div", _e(text), cls="who")


def _pre(value: Any, cls: str = "") -> str:
    return _tag("pre", _e(value), cls=cls)


def _html_session(state: Folded) -> str:
    outputs = terminals(state)
    items = []
    for item in transcript(state):
        if isinstance(item, Call):
            items.append(_html_call(item))
        elif isinstance(item, Unknown):
            body = _who(f"kept, not folded: {item.reason}") + _pre(item.payload)
            items.append(_tag("div", body, cls="card unknown"))
        elif is_tool_call(item):
            items.append(_html_tool(item, outputs))
        else:
            items.append(_html_thing(item))
    main = _tag("h2", f"Session {_e(state.session_id)}") + "".join(items)
    aside = "".join(_html_record(r) for r in _records(state))
    body = _tag("main", main) + _tag("aside", aside)
    return _tag("section", body, cls="session", session=state.session_id)


def _role(kind: str) -> str:
    if "thought" in kind:
        return "thought"
    return "user" if kind.startswith("user") else "agent"


def _html_blocks(blocks: Iterable[Any], data: bool = False) -> str:
    parts: list[str] = []
    text: list[
        str
    ] = []  # consecutive text blocks read as one text (chunks of a message)
    for block in blocks:
        if isinstance(block, Mapping) and _safe_image(block) and not data:
            if text:
                parts.append(_tag("div", _e("".join(text)), cls="text"))
            text = []
            source = f"data:{block['mimeType']};base64,{block['data']}"
            parts.append(f'<img alt="image" src="{_e(source)}">')
        else:
            text.append(_decoded(block) if data else block_text(block))
    if text:
        parts.append(_tag("div", _e("".join(text)), cls="text"))
    return "".join(parts)


def _safe_image(block: Mapping[str, Any]) -> bool:
    mime, data = block.get("mimeType"), block.get("data")
    if block.get("type") != "image" or not isinstance(data, str):
        return False
    return mime in IMAGE_TYPES and set(data) <= BASE64


def _html_thing(entry: Entry) -> str:
    blocks = content_of(entry)
    if blocks:
        body = _html_blocks(blocks, data=entry.fields.get("data") is blocks)
    else:
        body = _pre(dict(entry.fields))
    role = _role(entry.kind)
    return _tag(
        "div",
        _who(label(entry.kind)) + body,
        cls=f"card message {role}",
        kind=entry.kind,
    )


def _html_tool(entry: Entry, outputs: Mapping[str, str]) -> str:
    fields = entry.fields
    status = str(fields.get("status", "pending"))
    parts = []
    for item in fields.get("content") or []:
        kind = item.get("type") if isinstance(item, Mapping) else None
        if kind == "diff":
            parts.append(_who(str(item.get("path", ""))) + _html_diff(item))
        elif kind == "terminal":
            terminal = str(item.get("terminalId"))
            parts.append(
                _who(f"terminal {terminal}")
                + _pre(outputs.get(terminal, ""), "terminal")
            )
        else:
            parts.append(_html_blocks([item]))
    for name in ("locations", "rawInput", "rawOutput"):
        if fields.get(name) is not None:
            parts.append(_who(name) + _pre(fields[name]))
    summary = _e(fields.get("title") or entry.key)
    if fields.get("kind"):
        summary += _tag("span", _e(fields["kind"]), cls="status")
    summary += _tag("span", _e(status), cls=f"status {status}")
    body = _tag("summary", summary) + "".join(parts)
    return _tag("details", body, cls="card tool", tool_call=entry.key, status=status)


def _html_diff(item: Mapping[str, Any]) -> str:
    rows = []
    for line in diff_lines(item):
        css = {"@": "hunk", "+": "add", "-": "del"}.get(line[:1], "")
        rows.append(_tag("span", _e(line), cls=css) if css else _e(line))
    return _tag("pre", "\n".join(rows), cls="diff")


def _html_call(call: Call) -> str:
    if call.method.endswith("request_permission"):
        title, options, decision = permission(call)
        listed = _tag("ul", "".join(_tag("li", _e(o)) for o in options))
        verdict = _tag("div", "decision: " + _tag("b", _e(decision)), cls="decision")
        body = _who(f"permission for {title}") + listed + verdict
        return _tag("div", body, cls="card permission")
    params = call.params if isinstance(call.params, Mapping) else {}
    if isinstance(params.get("prompt"), list):
        result = call.result if isinstance(call.result, Mapping) else {}
        end = result.get("stopReason") or ("error" if call.error else "no answer")
        body = (
            _who("user") + _html_blocks(params["prompt"]) + _who(f"turn ended: {end}")
        )
        return _tag("div", body, cls="card message user", kind="prompt")
    answer = call.error if call.error is not None else call.result
    body = _tag("summary", _e(call.method)) + _pre(call.params) + _pre(answer)
    return _tag("details", body, cls="card call")


def _html_record(record: Entry) -> str:
    entries = record.fields.get("entries")
    if isinstance(entries, list):
        rows = [
            _tag(
                "li",
                _e(e.get("content", "")),
                status=e.get("status", ""),
                mark=_mark_of(e),
            )
            for e in entries
            if isinstance(e, Mapping)
        ]
        body = _tag("ul", "".join(rows), cls="plan")
    else:
        rows = [
            _tag("tr", _tag("td", _e(k)) + _tag("td", _e(v)))
            for k, v in record.fields.items()
        ]
        body = _tag("table", "".join(rows))
    return _tag(
        "div", _who(label(record.slot)) + body, cls="card record", slot=record.slot
    )


def _mark_of(entry: Mapping[str, Any]) -> str:
    return MARKS.get(str(entry.get("status")), "\u2610")
