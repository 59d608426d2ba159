"""The HTML view of a transcript: one self-contained page (no script, no network), the
conversation with collapsible tool calls, their diffs and terminal output, the plan and
the permission decisions.

Schema-independent, as ``_transcript`` is: what it cannot read it shows as JSON.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

from ._fold import Call, Entry, Folded, Unknown
from ._transcript import (
    as_json,
    block_text,
    content_of,
    decoded,
    diff_lines,
    is_tool_call,
    label,
    permission,
    records,
    terminals,
    transcript,
)

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
    return html.escape(value if isinstance(value, str) else as_json(value), quote=True)


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
    aside = "".join(_html_record(r) for r in records(state))
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
            text.append(decoded(block) if data else block_text(block))
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
