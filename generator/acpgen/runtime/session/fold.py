"""Fold a session's wire into its state: the engine behind ``session_state``.

Schema-independent: it folds JSON (the wire form of each update, as the package's models
dump it) by a table of rules that the generator derives from the schema and renders into
``session_state.py``. Every state is an immutable snapshot: folding returns a new
:class:`Folded` and never changes the one it was given (the wire values inside are
shared between snapshots and must not be modified).

How an update kind folds (:class:`Fold`):

- ``patch``: into the thing its key names (a tool call, a message), or the session-wide
  record of its slot: a member present replaces, an absent one keeps, a null clears the
  member where every kind of the slot admits null there (elsewhere a null is ignored);
  an open map (``_meta``, a member the schema declares as an object of any members)
  merges instead, member by member, and every map sent is kept in order
  (:attr:`Entry.history`: what an agent streams there, terminal output, accumulates);
- ``whole``: the kind is a whole value (the plan, the usage): the members it declares
  are replaced together (absent ones cleared; open maps merge), other members of the
  record are kept;
- ``append``: a chunk: its piece joins a list of the thing (a message's content blocks),
  its other members patch it; a chunk without an id joins the last thing made, if that
  was a chunk of the same kind without an id, else starts a new one;
- ``remove``: the thing its key names is removed;
- ``keep``: an update kind the schema does not name: kept as it came, in
  :attr:`Folded.unknown`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, cast

from ..wire.rpc import Json

How = Literal["patch", "whole", "append", "remove", "keep"]
Key = str | int | None
"""A thing's key in its slot: its id (a string), a sequence number for a chunk-made
thing without an id, ``None`` for a slot's session-wide record."""


@dataclass(frozen=True, slots=True)
class Fold:
    """How one update kind folds."""

    kind: str
    how: How
    slot: str
    key: tuple[str, ...] = ()
    """The wire path of the key in the update (``("toolCallId",)``, ``("plan",
    "planId")``); empty for a session-wide kind."""
    key_required: bool = True
    tag: str | None = None
    """The discriminator's wire name, left out of the record."""
    declared: tuple[str, ...] = ()
    """``whole``: the members the kind declares."""
    piece: str | None = None
    """``append``: the member appended."""
    into: str | None = None
    """``append``: the list of the record it joins."""


@dataclass(frozen=True, slots=True)
class Slot:
    """A place in the state: keyed things (tool calls) or one session-wide record (the
    plan)."""

    name: str
    keyed: bool
    clears: frozenset[str] = frozenset()
    """Members a null clears."""
    merges: frozenset[str] = frozenset()
    """Open maps (``_meta``): an update's map merges into the thing's, member by member
    (a member present replaces, an absent one keeps), and each map sent is kept in
    :attr:`Entry.history`."""


@dataclass(frozen=True, slots=True)
class FieldFold:
    """A member of a method's params or result that folds into the state."""

    source: Literal["params", "result"]
    name: str
    kind: str | None = None
    """Fold the value as an update of this kind."""
    slot: str | None = None
    """Or patch this session-wide slot with it..."""
    target: str | None = None
    """... as this member (``None``: the value is an object whose members patch the
    record)."""
    label: str = ""
    """What the record then holds, among its kinds (the type its model reads it as)."""


@dataclass(frozen=True, slots=True)
class MethodFold:
    """A method about one session: where its session id is, and what of it folds."""

    method: str
    session: Literal["params", "result"]
    fields: tuple[FieldFold, ...] = ()


@dataclass(frozen=True, slots=True)
class Rules:
    """Everything the engine needs to know about one schema."""

    slots: Mapping[str, Slot]
    kinds: Mapping[str, Fold]
    methods: Mapping[str, MethodFold]


@dataclass(frozen=True)
class Entry:
    """One thing of a session (a message, a tool call), or a slot's session-wide
    record."""

    slot: str
    key: Key
    kind: str
    """The kind that made it."""
    kinds: tuple[str, ...]
    """Every kind folded into it, in first-seen order."""
    fields: Mapping[str, Any]
    """The merged wire record (read-only)."""
    order: int
    """Its place in the session's timeline (when it was made)."""
    history: Mapping[str, tuple[Any, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Each map sent for an open-map member (``_meta``), in order: the merged record
    keeps the latest value of each of its members, this keeps every one (chunks an
    agent streams there, such as terminal output)."""
    made_at: str | None = field(default=None, compare=False)
    """When the update that made it was written (a trace's ``at``), if known."""
    changed_at: str | None = field(default=None, compare=False)
    """When the last update folded into it was written, if known."""
    cache: dict[int, Any] = field(
        default_factory=dict[int, Any], compare=False, repr=False
    )
    """Typed readings of :attr:`fields`, by reader (see ``readings``)."""


@dataclass(frozen=True, slots=True)
class Call:
    """A request about the session (or a notification other than ``session/update``)."""

    method: str
    params: Any
    result: Any = None
    error: Any = None
    answered: bool = False
    order: int = 0
    asked_at: str | None = field(default=None, compare=False)
    """When the request was written (a trace's ``at``), if known."""
    at: str | None = field(default=None, compare=False)
    """When its answer was written (a notification: when it was), if known."""


@dataclass(frozen=True, slots=True)
class Unknown:
    """Something that could not be folded, kept as it came."""

    kind: str | None
    payload: Any
    reason: str
    order: int = 0
    at: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Folded:
    """The state of one session: an immutable snapshot."""

    session_id: str
    slots: Mapping[str, Mapping[Key, Entry]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    calls: tuple[Call, ...] = ()
    unknown: tuple[Unknown, ...] = ()
    count: int = 0
    """Things in the timeline so far."""
    tail: tuple[str, Key] | None = None
    """The thing made last (a chunk without an id joins it when it is of the same
    kind)."""

    def entries(self, slot: str) -> Mapping[Key, Entry]:
        """The things of a slot, in the order they were made."""
        return self.slots.get(slot, _EMPTY)

    def record(self, slot: str) -> Entry | None:
        """The session-wide record of a slot, if any update made it."""
        return self.slots.get(slot, _EMPTY).get(None)

    def timeline(self) -> list[Entry | Call | Unknown]:
        """Things, calls and unknown updates in the order they first appeared."""
        items: list[Entry | Call | Unknown] = [
            e for s in self.slots.values() for e in s.values() if e.key is not None
        ]
        items += self.calls
        items += self.unknown
        return sorted(items, key=lambda item: item.order)


_EMPTY: Mapping[Key, Entry] = MappingProxyType({})


def fold_update(
    rules: Rules, state: Folded, kind: str, payload: Any, at: str | None = None
) -> Folded:
    """``state`` with one update folded in (its kind, and its wire form without the
    session id; ``at``: when it was written, if known)."""
    rule = rules.kinds.get(kind)
    fields = as_mapping(payload)
    if rule is None or rule.how == "keep" or fields is None:
        reason = (
            "an update kind the schema does not name"
            if rule is None or rule.how == "keep"
            else "not an object"
        )
        return keep(state, kind, payload, reason, at)
    slot = rules.slots[rule.slot]
    record = {k: v for k, v in fields.items() if k != rule.tag}
    key = _dig(record, rule.key) if rule.key else None
    if rule.key and not isinstance(key, str) and (rule.key_required or key is not None):
        return keep(state, kind, payload, f"no id at {'.'.join(rule.key)}", at)
    if rule.how == "remove":
        return _remove(state, slot.name, key)
    if rule.how == "append":
        return _append(state, rule, slot, key, record, at)
    entries = state.entries(slot.name)
    old = entries.get(key)
    base = dict(old.fields) if old is not None else {}
    if rule.how == "whole":
        base = {
            k: v for k, v in base.items() if k not in rule.declared or k in slot.merges
        }
        merged = _patch(base, {k: v for k, v in record.items() if v is not None}, slot)
    else:
        merged = _patch(base, record, slot)
    return _put(state, slot, key, rule.kind, merged, old, record, at)


def fold_call(
    rules: Rules,
    state: Folded,
    method: str,
    params: Any,
    *,
    result: Any = None,
    error: Any = None,
    answered: bool = True,
    asked_at: str | None = None,
    at: str | None = None,
) -> Folded:
    """``state`` with a call recorded, and what its params and result say folded in
    (only when it was answered with a result: an error or no answer changes nothing
    else). ``asked_at`` and ``at``: when the request and its answer were written."""
    call = Call(method, params, result, error, answered, state.count, asked_at, at)
    state = replace(
        state, calls=(*state.calls, call), count=state.count + 1, tail=("", state.count)
    )
    rule = rules.methods.get(method)
    if rule is None or not answered or error is not None:
        return state
    for member in rule.fields:
        source = as_mapping(params if member.source == "params" else result)
        value = source.get(member.name) if source is not None else None
        if value is None:
            continue
        if member.kind is not None:
            state = fold_update(rules, state, member.kind, value, at)
        elif member.slot is not None:
            state = _patch_record(rules, state, member, value, at)
    return state


def _patch_record(
    rules: Rules, state: Folded, member: FieldFold, value: Any, at: str | None
) -> Folded:
    assert member.slot is not None
    slot = rules.slots[member.slot]
    fields = as_mapping(value)
    if member.target is None and fields is None:
        return state
    record = dict(fields or {}) if member.target is None else {member.target: value}
    old = state.record(slot.name)
    merged = _patch(dict(old.fields) if old is not None else {}, record, slot)
    label = member.label or member.name
    return _put(state, slot, None, label, merged, old, record, at)


def _patch(base: dict[str, Any], new: Mapping[str, Any], slot: Slot) -> dict[str, Any]:
    for name, value in new.items():
        if value is None:
            if name in slot.clears:
                base.pop(name, None)
        elif name in slot.merges and isinstance(value, Mapping):
            known = base.get(name)
            base[name] = {**(known if isinstance(known, Mapping) else {}), **value}
        else:
            base[name] = value
    return base


def _append(
    state: Folded,
    rule: Fold,
    slot: Slot,
    key: Any,
    record: dict[str, Any],
    at: str | None,
) -> Folded:
    assert rule.piece is not None and rule.into is not None
    entries = state.entries(slot.name)
    if key is None:
        joins = (
            state.tail is not None
            and state.tail[0] == slot.name
            and isinstance(state.tail[1], int)
            and (last := entries.get(state.tail[1])) is not None
            and last.kind == rule.kind
        )
        key = state.tail[1] if joins and state.tail is not None else -state.count - 1
    old = entries.get(key)
    piece = record.pop(rule.piece, None)
    base = _patch(dict(old.fields) if old is not None else {}, record, slot)
    joined = base.get(rule.into)
    base[rule.into] = [*(joined if isinstance(joined, list) else ()), piece]
    return _put(state, slot, key, rule.kind, base, old, record, at)


def _put(
    state: Folded,
    slot: Slot,
    key: Key,
    kind: str,
    fields: dict[str, Any],
    old: Entry | None,
    sent: Mapping[str, Any],
    at: str | None,
) -> Folded:
    entries = dict(state.entries(slot.name))
    history = _history(old, sent, slot.merges)
    if old is not None:
        kinds = old.kinds if kind in old.kinds else (*old.kinds, kind)
        entries[key] = Entry(
            slot.name,
            key,
            old.kind,
            kinds,
            MappingProxyType(fields),
            old.order,
            history,
            old.made_at,
            at or old.changed_at,
        )
        return replace(state, slots=_with(state.slots, slot.name, entries))
    if isinstance(key, int) and key < 0:
        # a sequence number for a thing without an id: its place in the timeline + 1
        key = -key
    entries[key] = Entry(
        slot.name,
        key,
        kind,
        (kind,),
        MappingProxyType(fields),
        state.count,
        history,
        at,
        at,
    )
    tail = (slot.name, key) if key is not None else state.tail
    return replace(
        state,
        slots=_with(state.slots, slot.name, entries),
        count=state.count + 1,
        tail=tail,
    )


def _history(
    old: Entry | None, sent: Mapping[str, Any], merges: frozenset[str]
) -> Mapping[str, tuple[Any, ...]]:
    """The thing's history of open maps with the ones ``sent`` now appended."""
    known: Mapping[str, tuple[Any, ...]] = old.history if old is not None else _NONE
    added: dict[str, tuple[Any, ...]] = {
        name: (*known.get(name, ()), value)
        for name, value in sent.items()
        if name in merges and isinstance(value, Mapping)
    }
    return MappingProxyType({**known, **added}) if added else known


_NONE: Mapping[str, tuple[Any, ...]] = MappingProxyType({})


def _remove(state: Folded, slot: str, key: Any) -> Folded:
    entries = dict(state.entries(slot))
    if entries.pop(key, None) is None:
        return state
    return replace(state, slots=_with(state.slots, slot, entries))


def _with(
    slots: Mapping[str, Mapping[Key, Entry]], name: str, entries: dict[Key, Entry]
) -> Mapping[str, Any]:
    updated = dict(slots)
    updated[name] = MappingProxyType(entries)
    return MappingProxyType(updated)


def keep(
    state: Folded, kind: str | None, payload: Any, reason: str, at: str | None = None
) -> Folded:
    """``state`` with something that could not be folded kept in
    :attr:`Folded.unknown`."""
    item = Unknown(kind, payload, reason, state.count, at)
    return replace(state, unknown=(*state.unknown, item), count=state.count + 1)


def _dig(record: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = record
    for name in path:
        found = as_mapping(value)
        value = found.get(name) if found is not None else None
    return value


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """``value`` when it is a mapping (a JSON object, a record's fields), else None."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


# -- the wire trace
# ---------------------------------------------------------------------

UPDATE_METHOD = "session/update"


@dataclass(frozen=True, slots=True)
class TraceUpdate:
    """A ``session/update`` notification of the trace (its params, as written)."""

    params: Any
    at: str | None = None
    """When it was written (the trace's ``at``)."""


@dataclass(frozen=True, slots=True)
class TraceCall:
    """A request of the trace with its answer (at the answer's place), a request never
    answered (at the end), or a notification other than ``session/update``."""

    method: str
    params: Any
    result: Any = None
    error: Any = None
    answered: bool = False
    asked_at: str | None = None
    """When the request (or notification) was written."""
    at: str | None = None
    """When its answer was written (a notification: when it was)."""


@dataclass
class TraceProblems:
    """Lines of a trace that hold no JSON-RPC message (not JSON, or the trace's ``raw``
    entries)."""

    lines: list[int] = field(default_factory=list[int])


def read_trace(
    lines: Iterable[str], problems: TraceProblems | None = None
) -> Iterator[TraceUpdate | TraceCall]:
    """The messages of a wire trace (JSON lines ``{"at", "direction", "message" |
    "raw"}``, as the connection writes them) in wire order, each request paired with its
    answer: a request of one direction is answered by the response of the other
    direction with the same id."""
    pending: dict[tuple[str, str], tuple[str, Any, str | None]] = {}
    for number, line in enumerate(lines, 1):
        message, direction, at = _trace_message(line)
        if message is None:
            if line.strip() and problems is not None:
                problems.lines.append(number)
            continue
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            if "id" in message:
                pending[(direction, _id_key(message["id"]))] = (method, params, at)
            elif method == UPDATE_METHOD:
                yield TraceUpdate(params, at)
            else:
                yield TraceCall(method, params, answered=True, asked_at=at, at=at)
            continue
        asked = pending.pop(
            ("out" if direction == "in" else "in", _id_key(message.get("id"))), None
        )
        if asked is not None and ("result" in message or "error" in message):
            yield TraceCall(
                asked[0],
                asked[1],
                message.get("result"),
                message.get("error"),
                answered=True,
                asked_at=asked[2],
                at=at,
            )
    for method, params, asked_at in pending.values():
        yield TraceCall(method, params, asked_at=asked_at)


def _trace_message(line: str) -> tuple[dict[str, Any] | None, str, str | None]:
    try:
        entry: Json = json.loads(line)
    except (ValueError, RecursionError):
        return None, "", None
    if not isinstance(entry, dict) or not isinstance(entry.get("message"), dict):
        return None, "", None
    at = entry.get("at")
    return (
        entry["message"],
        str(entry.get("direction")),
        at if isinstance(at, str) else None,
    )


def _id_key(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


# -- JSON
# ---------------------------------------------------------------------


def to_json(state: Folded, *, times: bool = False) -> dict[str, Any]:
    """The state as JSON data: slots (sorted by name) with their things in the order
    they were made, calls and unknown updates in order. ``times``: with when each was
    written, as far as known (``madeAt`` and ``changedAt`` of a thing, ``askedAt`` and
    ``at`` of a call, ``at`` of an unknown update)."""
    return {
        "sessionId": state.session_id,
        "slots": {
            name: [_entry_json(e, times) for e in entries.values()]
            for name, entries in sorted(state.slots.items())
            if entries
        },
        "calls": [
            {
                "method": c.method,
                "params": c.params,
                "result": c.result,
                "error": c.error,
                "answered": c.answered,
                **({"askedAt": c.asked_at, "at": c.at} if times else {}),
            }
            for c in state.calls
        ],
        "unknown": [
            {
                "kind": u.kind,
                "payload": u.payload,
                "reason": u.reason,
                **({"at": u.at} if times else {}),
            }
            for u in state.unknown
        ],
    }


def _entry_json(entry: Entry, times: bool) -> dict[str, Any]:
    found: dict[str, Any] = {
        "key": entry.key,
        "kind": entry.kind,
        "kinds": list(entry.kinds),
        "fields": dict(entry.fields),
    }
    if entry.history:
        found["history"] = {k: list(v) for k, v in entry.history.items()}
    if times:
        found |= {"madeAt": entry.made_at, "changedAt": entry.changed_at}
    return found
