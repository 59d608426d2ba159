"""The HTML view of a trace: one self-contained page (no script, no network), who
spoke (``initialize``), each session's state as tables, the conversation with times,
collapsible tool calls with their diffs and terminal output, the plan and the permission
decisions.

Schema-independent, as ``text_view`` is: what it cannot read it shows as JSON. A trace
is written by a peer: every text and attribute of the page is escaped, and the page's
content security policy forbids any script and any request.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...session.fold import Call, Entry, Folded, TraceCall, Unknown
from .text_view import (
    Clock,
    Item,
    Peers,
    Terminal,
    TurnEnd,
    as_json,
    block_text,
    content_of,
    conversation,
    decoded,
    diff_lines,
    duration,
    is_prompt,
    is_tool_call,
    label,
    other_meta,
    peers,
    permission,
    records,
    started,
    terminals,
    tool_terminals,
)

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:10px 20px}
header h1{font-size:16px;margin:0}
h2{font-size:15px;margin:0 0 8px}
.session{padding:16px 20px}
.columns{display:flex;gap:20px;align-items:flex-start}
main{flex:3;min-width:0}aside{flex:1;min-width:240px;max-width:360px;position:sticky;top:10px}
aside:empty{display:none}
.state{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-start;margin-bottom:10px}
.state .card{flex:0 1 auto;max-width:100%;margin:0;overflow:auto;box-sizing:border-box}
.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:10px 14px;
margin:0 0 10px}
.head{display:flex;gap:8px;align-items:baseline;margin-bottom:4px}
.role{font-size:12px;font-weight:600;text-transform:uppercase;color:#5b6475}
.label{font-size:12px;font-weight:600;color:#5b6475;margin:6px 0 2px}
time.at{margin-left:auto;font-size:12px;color:#7a8294;white-space:nowrap}
.path,.title{text-transform:none}
.path{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
.user{border-left:4px solid #3b6fd8}.agent{border-left:4px solid #2f9e6a}
.thought{border-left:4px solid #b0b6c3;color:#5b6475;font-style:italic}
.text{white-space:pre-wrap;word-wrap:break-word}
details>summary{cursor:pointer}
details.tool>summary{font-weight:600;display:flex;gap:6px;align-items:baseline}
.status{font-size:12px;font-weight:400;border-radius:10px;padding:1px 8px;
background:#eef0f4}
.status.completed{background:#dff3e8}.status.failed{background:#fbe1e1}
.status.in_progress{background:#fff2cc}
.turn-end{font-size:12px;color:#5b6475;margin:-4px 0 14px 4px;display:flex;gap:8px}
pre{background:#0f1420;color:#e6e9ef;padding:8px;border-radius:6px;overflow:auto;
font-size:12px;margin:2px 0 6px;white-space:pre-wrap;word-wrap:break-word}
pre .add{color:#7ee2a8}pre .del{color:#ff9b9b}pre .hunk{color:#8fb3ff}
.permission{border-left:4px solid #d8913b}.unknown{border-left:4px solid #c0392b}
ul.plan{list-style:none;padding:0;margin:0}
ul.plan li::before{content:attr(data-mark) " "}
ul.locations{margin:0;padding-left:18px}
img{max-width:100%}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 8px;vertical-align:top;text-align:left;
border-bottom:1px solid #eef0f4}
th{color:#5b6475;font-weight:600}
table.rows thead th{border-bottom:1px solid #dde1e8}
tr.current td{background:#eef5ff;font-weight:600}
tr.current td:first-child::before{content:"\\25b6  "}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
.peers{display:flex;flex-wrap:wrap;gap:6px 18px;align-items:baseline}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
MARKS = {"completed": "\u2611", "in_progress": "\u25b6"}
DEPTH = 4
"""Nesting shown as tables; deeper values are shown as JSON."""


def page(
    states: Mapping[str, Folded],
    skipped: list[int],
    others: Sequence[TraceCall] = (),
) -> str:
    """A single self-contained HTML page of every session of ``states`` (and who spoke,
    from the ``initialize`` among ``others``): no script, no network (its content
    security policy forbids any)."""
    clock = Clock.of(states.values(), others)
    body = "".join(_html_peers(p, clock) for p in peers(others))
    body += "".join(_html_session(s, clock) for s in states.values())
    if not states:
        body += _tag("p", "No session in this trace.", cls="card")
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


def _role(text: str) -> str:
    return _tag("span", _e(text), cls="role")


def _label(text: str) -> str:
    return _tag("div", _e(text), cls="label")


def _pre(value: Any, cls: str = "") -> str:
    # a parser drops one newline right after <pre>: this one, not the text's own
    return _tag("pre", "\n" + _e(value), cls=cls)


def _time(at: str | None, clock: Clock) -> str:
    """When something was written: relative to the trace's start, the time itself in
    the ``datetime`` and ``title`` attributes."""
    relative = clock.since_start(at)
    if relative is None or at is None:
        return ""
    return (
        f'<time class="at" datetime="{_e(at)}" title="{_e(at)}">{_e(relative)}</time>'
    )


def _head(parts: str, at: str | None, clock: Clock) -> str:
    return _tag("div", parts + _time(at, clock), cls="head")


# -- who spoke
# ---------------------------------------------------------------------


def _html_peers(found: Peers, clock: Clock) -> str:
    named = [
        ("agent", found.agent or "(unnamed)"),
        ("client", found.client or "(unnamed)"),
        ("protocol", found.protocol or "?"),
    ]
    line = "".join(
        _tag("span", _role(side) + " " + _tag("b", _e(name)), cls="peer", side=side)
        for side, name in named
    )
    body = _head(_tag("div", line, cls="peers"), found.at, clock)
    if found.extra:
        advertised = _tag("summary", "what they advertised") + _value(found.extra)
        body += _tag("details", advertised)
    return _tag("section", body, cls="card connection")


# -- a session
# ---------------------------------------------------------------------


def _html_session(state: Folded, clock: Clock) -> str:
    outputs = terminals(state)
    items = [_html_item(item, outputs, clock) for item in conversation(state)]
    turns = sum(1 for c in state.calls if is_prompt(c))
    begun = started(state)
    when = [f"{turns} turn(s)"]
    if begun is not None:
        when.insert(0, f"from {begun}")
    title = _tag("h2", "Session " + _tag("code", _e(state.session_id)))
    head = _head(title + _tag("span", _e(", ".join(when)), cls="when"), begun, clock)
    shown = records(state)
    plan = [r for r in shown if isinstance(r.fields.get("entries"), list)]
    tables = "".join(_html_record(r) for r in shown if r not in plan)
    columns = _tag("main", "".join(items)) + _tag(
        "aside", "".join(_html_record(r) for r in plan)
    )
    body = head + _tag("div", tables, cls="state") + _tag("div", columns, cls="columns")
    return _tag("section", body, cls="session", session=state.session_id)


def _html_item(item: Item, outputs: Mapping[str, Terminal], clock: Clock) -> str:
    if isinstance(item, TurnEnd):
        return _html_turn_end(item, clock)
    if isinstance(item, Call):
        return _html_call(item, clock)
    if isinstance(item, Unknown):
        parts = _role(f"kept, not folded: {item.reason}")
        body = _head(parts, item.at, clock) + _pre(item.payload)
        return _tag("div", body, cls="card unknown")
    if is_tool_call(item):
        return _html_tool(item, outputs, clock)
    return _html_thing(item, clock)


def _kind_class(kind: str) -> str:
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


def _html_thing(entry: Entry, clock: Clock) -> str:
    blocks = content_of(entry)
    if blocks:
        body = _html_blocks(blocks, data=entry.fields.get("data") is blocks)
    else:
        body = _pre(dict(entry.fields))
    return _tag(
        "div",
        _head(_role(label(entry.kind)), entry.made_at, clock) + body,
        cls=f"card message {_kind_class(entry.kind)}",
        kind=entry.kind,
    )


def _html_tool(entry: Entry, outputs: Mapping[str, Terminal], clock: Clock) -> str:
    fields = entry.fields
    status = str(fields.get("status", "pending"))
    parts = []
    for item in fields.get("content") or []:
        kind = item.get("type") if isinstance(item, Mapping) else None
        if kind == "diff":
            path = _tag("div", _e(str(item.get("path", ""))), cls="path")
            parts.append(path + _html_diff(item))
        elif kind != "terminal":
            parts.append(_html_blocks([item]))
    exits = []
    for terminal, shown in tool_terminals(entry, outputs):
        if shown.exit:
            exits.append(_tag("span", _e(shown.exit), cls="status exit"))
        words = "terminal " + _tag("code", _e(terminal))
        if shown.cwd:
            words += " in " + _tag("span", _e(shown.cwd), cls="path")
        if shown.exit:
            words += " \u00b7 " + _tag("span", _e(shown.exit), cls="exit")
        parts.append(_tag("div", words, cls="label") + _pre(shown.output, "terminal"))
    locations = [
        _tag("li", _e(f"{loc.get('path')}:{loc.get('line', '')}".rstrip(":")))
        for loc in fields.get("locations") or []
        if isinstance(loc, Mapping)
    ]
    if locations:
        parts.append(
            _label("locations") + _tag("ul", "".join(locations), cls="path locations")
        )
    for name in ("rawInput", "rawOutput"):
        if fields.get(name) is not None:
            parts.append(_label(name) + _pre(fields[name]))
    meta = other_meta(entry)
    if meta:
        parts.append(_label("_meta") + _pre(meta))
    summary = _tag("span", _e(fields.get("title") or entry.key), cls="title")
    if fields.get("kind"):
        summary += _tag("span", _e(fields["kind"]), cls="status")
    summary += _tag("span", _e(status), cls=f"status {status}") + "".join(exits)
    summary += _time(entry.made_at, clock)
    body = _tag("summary", summary) + "".join(parts)
    return _tag("details", body, cls="card tool", tool_call=entry.key, status=status)


def _html_diff(item: Mapping[str, Any]) -> str:
    rows = []
    for line in diff_lines(item):
        css = {"@": "hunk", "+": "add", "-": "del"}.get(line[:1], "")
        rows.append(_tag("span", _e(line), cls=css) if css else _e(line))
    return _tag("pre", "\n".join(rows), cls="diff")


def _html_call(call: Call, clock: Clock) -> str:
    if call.method.endswith("request_permission"):
        title, options, decision = permission(call)
        about = _role("permission") + " for " + _tag("span", _e(title), cls="title")
        listed = _tag("ul", "".join(_tag("li", _e(o)) for o in options))
        verdict = _tag("div", "decision: " + _tag("b", _e(decision)), cls="decision")
        body = _head(about, call.asked_at, clock) + listed + verdict
        return _tag("div", body, cls="card permission")
    params = call.params if isinstance(call.params, Mapping) else {}
    if is_prompt(call):
        body = _head(_role("user"), call.asked_at, clock) + _html_blocks(
            params["prompt"]
        )
        return _tag("div", body, cls="card message user", kind="prompt")
    answer = call.error if call.error is not None else call.result
    summary = _tag("code", _e(call.method)) + _time(call.asked_at, clock)
    body = _tag("summary", summary, cls="head") + _pre(call.params) + _pre(answer)
    return _tag("details", body, cls="card call")


def _html_turn_end(end: TurnEnd, clock: Clock) -> str:
    words = "turn ended: " + _tag("b", _e(end.reason))
    took = duration(end.call.asked_at, end.call.at)
    if took is not None:
        words += " " + _tag("span", _e(f"after {took}"), cls="took")
    return _tag(
        "div",
        words + " " + _time(end.call.at, clock),
        cls="turn-end",
        stop_reason=end.reason,
    )


# -- the session's state
# ---------------------------------------------------------------------


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
        fields = dict(record.fields)
        only = next(iter(fields.values())) if len(fields) == 1 else fields
        body = _value(only, current=_marks(fields))
    return _tag(
        "div",
        _tag("div", _role(label(record.slot)), cls="head") + body,
        cls="card record",
        slot=record.slot,
    )


def _value(value: Any, depth: int = 0, current: frozenset[str] = frozenset()) -> str:
    """A value as a reader takes it in: an object as a table of its members, a list of
    objects as a table with a row each and a column per member (the row that a
    ``current...`` member of the object holding it names is marked), text as itself;
    what is nested deeper than :data:`DEPTH` as JSON."""
    if isinstance(value, str):
        return _e(value)
    if depth >= DEPTH or value is None or isinstance(value, bool | int | float):
        return _tag("code", _e(as_json(value)))
    if isinstance(value, Mapping) and value:
        marks = _marks(value)
        rows = "".join(
            _tag("tr", _tag("th", _e(k)) + _tag("td", _value(v, depth + 1, marks)))
            for k, v in value.items()
        )
        return _tag("table", _tag("tbody", rows), cls="fields")
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return _rows(value, depth, current)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return _e(", ".join(value))
    return _tag("code", _e(as_json(value)))


def _rows(items: list[Mapping[str, Any]], depth: int, current: frozenset[str]) -> str:
    seen = list(dict.fromkeys(k for item in items for k in item))
    columns = sorted(seen, key=lambda c: (_column_rank(c, items), seen.index(c)))
    head = _tag("tr", "".join(_tag("th", _e(c)) for c in columns))
    rows = []
    for item in items:
        marks = _marks(item)
        cells = "".join(
            _tag("td", _value(item[c], depth + 1, marks) if c in item else "")
            for c in columns
        )
        names = {item.get("id"), item.get("value")}
        rows.append(_tag("tr", cells, cls="current" if names & current else ""))
    body = _tag("thead", head) + _tag("tbody", "".join(rows))
    return _tag("table", body, cls="rows")


NAMING = ("id", "name", "title", "value")
"""Members that name a row: their columns come first."""


def _column_rank(column: str, items: list[Mapping[str, Any]]) -> int:
    """Columns that name a row first, then those of plain values, then nested ones."""
    if column in NAMING:
        return 0
    nested = any(isinstance(item.get(column), Mapping | list) for item in items)
    return 2 if nested else 1


def _marks(value: Mapping[str, Any]) -> frozenset[str]:
    """What the ``current...`` members of an object name (``currentModeId``,
    ``currentValue``): the rows of its lists to mark."""
    return frozenset(
        v for k, v in value.items() if k.startswith("current") and isinstance(v, str)
    )


def _mark_of(entry: Mapping[str, Any]) -> str:
    return MARKS.get(str(entry.get("status")), "\u2610")
