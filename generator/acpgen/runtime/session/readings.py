"""Typed readings of a folded session (``fold``): the base of
``session_state.SessionState``.

Schema-independent: the generated ``session_state`` module gives the rule table, which
model class is which update kind, and the models each slot is read as; this module folds
models and wire messages alike into :class:`~.fold.Folded` snapshots and reads them
back as models.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..wire.rpc import MethodSpec
from .fold import (
    Call,
    Entry,
    Folded,
    Key,
    Rules,
    TraceCall,
    TraceProblems,
    TraceUpdate,
    Unknown,
    as_mapping,
    fold_call,
    fold_update,
    keep,
    read_trace,
    to_json,
)

R = TypeVar("R")
P = TypeVar("P")
S = TypeVar("S", bound="StateBase")


M = TypeVar("M", bound=BaseModel)


def validator(
    model: type[M], tag: str | None = None, value: str | None = None
) -> Callable[[Any], M]:
    """Reads a record as ``model`` (with its tag put back, for a kind the schema writes
    inline)."""
    if tag is None:
        return model.model_validate
    return lambda fields: model.model_validate({**fields, tag: value})


def alias_validator(alias: Any) -> Callable[[Any], Any]:
    """Reads a record as a union type (a payload that is itself a union)."""
    return _adapter(alias).validate_python


class RecordReader(Generic[R]):
    """Reads a thing's wire record as a model: the models of the kinds folded into it,
    the richest kind first (``ToolCall`` before ``ToolCallUpdate``); the first that
    accepts it wins. A record no model accepts reads as ``None`` (its wire record is
    still there)."""

    def __init__(self, kinds: Sequence[tuple[str, Callable[[Any], R]]]) -> None:
        self._kinds = tuple(kinds)

    def read(self, entry: Entry) -> R | None:
        """The typed reading of ``entry`` (computed once per entry)."""
        if id(self) in entry.cache:
            found: R | None = entry.cache[id(self)]
            return found
        reading = self._read(entry)
        entry.cache[id(self)] = reading
        return reading

    def _read(self, entry: Entry) -> R | None:
        for kind, validate in self._kinds:
            if kind in entry.kinds:
                try:
                    return validate(dict(entry.fields))
                except ValidationError:
                    continue
        return None


class PieceReader(Generic[P]):
    """Reads the list a chunk kind appends to (a message's content blocks) as models."""

    def __init__(
        self, member: str | None, adapter: TypeAdapter[list[P]] | None
    ) -> None:
        self.member, self._adapter = member, adapter

    def read(self, entry: Entry) -> tuple[P, ...]:
        if self.member is None or self._adapter is None:
            return ()
        key = id(self)
        if key not in entry.cache:
            try:
                entry.cache[key] = tuple(
                    self._adapter.validate_python(entry.fields.get(self.member) or [])
                )
            except ValidationError:
                entry.cache[key] = ()
        found: tuple[P, ...] = entry.cache[key]
        return found


@dataclass(frozen=True, slots=True)
class View(Generic[R, P]):
    """One thing of a session read as models: its key, kinds, record and appended
    pieces."""

    entry: Entry
    record: R | None
    """The merged record read as the model of the richest kind that accepts it."""
    content: tuple[P, ...]
    """What chunks appended to it, in order (a message's content blocks); empty for
    things no chunk kind appends to."""

    @property
    def key(self) -> Key:
        return self.entry.key

    @property
    def kind(self) -> str:
        return self.entry.kind

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.entry.kinds

    @property
    def fields(self) -> Mapping[str, Any]:
        """The merged wire record (every member the peer sent, read-only)."""
        return self.entry.fields


class SlotViews(Mapping[Key, View[R, P]]):
    """The views of one slot's things by key, in the order they were made; each read
    as models when asked for."""

    def __init__(
        self,
        entries: Mapping[Key, Entry],
        reader: RecordReader[R],
        pieces: PieceReader[P],
    ) -> None:
        self._entries, self._reader, self._pieces = entries, reader, pieces

    def __getitem__(self, key: Key) -> View[R, P]:
        entry = self._entries[key]
        return View(entry, self._reader.read(entry), self._pieces.read(entry))

    def __iter__(self) -> Iterator[Key]:
        return (k for k in self._entries if k is not None)

    def __len__(self) -> int:
        return sum(1 for k in self._entries if k is not None)


class StateBase:
    """An immutable snapshot of one session's state; each fold returns a new one."""

    RULES: ClassVar[Rules]
    KINDS: ClassVar[Mapping[Any, str]]
    """Model class of an update -> its kind."""
    TAG: ClassVar[str | None]
    """The wire name of the update's discriminator."""
    NOTIFICATION: ClassVar[type[BaseModel]]
    """The params model of ``session/update``."""
    SESSION: ClassVar[tuple[str, str]]
    """Its member naming the session: attribute and wire name."""
    UPDATE: ClassVar[tuple[str, str]]
    """Its member holding the update: attribute and wire name."""
    METHODS: ClassVar[Mapping[str, MethodSpec]]

    __slots__ = ("wire",)

    def __init__(self, wire: Folded) -> None:
        self.wire = wire

    @classmethod
    def new(cls, session_id: str) -> Self:
        """The state of a session nothing is known of yet."""
        return cls(Folded(session_id))

    @property
    def session_id(self) -> str:
        return self.wire.session_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StateBase) and to_json(self.wire) == to_json(
            other.wire
        )

    def __hash__(self) -> int:
        return hash(self.wire.session_id)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.session_id!r}: {self.wire.count} things>"

    def update(
        self, update: BaseModel | Mapping[str, Any], *, at: str | None = None
    ) -> Self:
        """This state with one update folded in: a ``SessionNotification`` of this
        session, a ``SessionUpdate``, or the wire form of either (read by the models
        first; what they refuse is kept in :attr:`unknown`). ``at``: when it was
        written (a trace's time), if known."""
        if not isinstance(update, BaseModel):
            params = (
                update
                if self.UPDATE[1] in update
                else {self.SESSION[1]: self.session_id, self.UPDATE[1]: update}
            )
            try:
                update = self.NOTIFICATION.model_validate(params)
            except ValidationError as error:
                return type(self)(
                    refused(self.wire, params.get(self.UPDATE[1]), error, self.TAG, at)
                )
        if isinstance(update, self.NOTIFICATION):
            session = getattr(update, self.SESSION[0])
            if session != self.session_id:
                raise ValueError(
                    f"a notification of session {session!r}, not of {self.session_id!r}"
                )
            update = getattr(update, self.UPDATE[0])
        assert isinstance(update, BaseModel)
        wire = update.model_dump(mode="json")
        kind = self.KINDS.get(type(update)) or _kind_of(wire, self.TAG)
        return type(self)(fold_update(self.RULES, self.wire, kind, wire, at))

    def call(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None,
        result: BaseModel | Mapping[str, Any] | None = None,
        *,
        error: Any = None,
        answered: bool = True,
        asked_at: str | None = None,
        at: str | None = None,
    ) -> Self:
        """This state with a call about the session folded in: ``session/new`` and its
        answer bring the modes and config options, ``session/set_mode`` the mode, a
        permission request its tool call; every call is kept in :attr:`calls` (the
        prompt of a turn, permission decisions). Give ``error`` (a JSON-RPC error
        object) for a call answered with an error; ``asked_at`` and ``at``: when the
        request and its answer were written, if known."""
        spec = self.METHODS.get(method)
        wire_params = _wire(params, spec.params if spec is not None else None)
        wire_result = (
            _wire(result, spec.result if spec is not None else None)
            if result is not None
            else None
        )
        if isinstance(error, BaseException):
            error = {"code": getattr(error, "code", -32603), "message": str(error)}
        return type(self)(
            fold_call(
                self.RULES,
                self.wire,
                method,
                wire_params,
                result=wire_result,
                error=error,
                answered=answered,
                asked_at=asked_at,
                at=at,
            )
        )

    @property
    def calls(self) -> tuple[Call, ...]:
        """Calls about the session, in order (params and answers as wire JSON)."""
        return self.wire.calls

    @property
    def unknown(self) -> tuple[Unknown, ...]:
        """Updates that could not be folded (kinds the schema does not name, or refused
        by the models), kept as they came."""
        return self.wire.unknown

    def timeline(self) -> list[Entry | Call | Unknown]:
        """SlotViews, calls and unknown updates in the order they first appeared."""
        return self.wire.timeline()

    def to_json(self) -> dict[str, Any]:
        """The state as JSON data (the wire records, as ``python -m <package>.trace show
        --format json`` prints them)."""
        return to_json(self.wire)

    def _views(
        self, slot: str, reader: RecordReader[R], pieces: PieceReader[P]
    ) -> SlotViews[R, P]:
        return SlotViews(self.wire.entries(slot), reader, pieces)

    def _record(self, slot: str, reader: RecordReader[R]) -> R | None:
        entry = self.wire.record(slot)
        return reader.read(entry) if entry is not None else None

    @classmethod
    def from_trace(cls, path: str | os.PathLike[str]) -> dict[str, Self]:
        """Every session of a wire trace (written with ``trace=`` or ``ACP_TRACE``),
        rebuilt: session id -> its state, in the order the sessions appeared."""
        with Path(path).open(encoding="utf-8", errors="replace") as lines:
            return cls.from_lines(lines)

    @classmethod
    def from_lines(
        cls,
        lines: Iterable[str],
        problems: TraceProblems | None = None,
        others: list[TraceCall] | None = None,
    ) -> dict[str, Self]:
        """:meth:`from_trace` on the lines of a trace; the numbers of lines that hold no
        message go to ``problems``, the calls about no session (``initialize``) to
        ``others``."""
        sessions = Sessions(cls)
        for event in read_trace(lines, problems):
            if isinstance(event, TraceUpdate):
                sessions.update(event.params, at=event.at)
                continue
            folded = sessions.call(
                event.method,
                event.params,
                event.result,
                error=event.error,
                answered=event.answered,
                asked_at=event.asked_at,
                at=event.at,
            )
            if folded is None and others is not None:
                others.append(event)
        return dict(sessions.states)


class Sessions(Generic[S]):
    """Every session a client sees, each an immutable :class:`StateBase` snapshot, kept
    up to date as updates and calls are folded in (``states[session_id]`` is the
    latest)."""

    def __init__(self, state: type[S]) -> None:
        self._state = state
        self.states: dict[str, S] = {}

    def update(
        self, notification: BaseModel | Mapping[str, Any], *, at: str | None = None
    ) -> S | None:
        """Fold a ``session/update`` notification (a model, or its wire params) into its
        session; the session's new state (``None`` when the notification names no
        session). ``at``: when it was written, if known."""
        if isinstance(notification, BaseModel):
            session = getattr(notification, self._state.SESSION[0], None)
        else:
            fields = as_mapping(notification)
            session = fields.get(self._state.SESSION[1]) if fields else None
        if not isinstance(session, str):
            return None
        state = self.states.get(session) or self._state.new(session)
        self.states[session] = state = state.update(notification, at=at)
        return state

    def call(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None,
        result: BaseModel | Mapping[str, Any] | None = None,
        *,
        error: Any = None,
        answered: bool = True,
        asked_at: str | None = None,
        at: str | None = None,
    ) -> S | None:
        """Fold a call into the session it is about (``None`` for a call about no
        session); ``asked_at`` and ``at``: when the request and its answer were
        written, if known."""
        rule = self._state.RULES.methods.get(method)
        if rule is None:
            return None
        spec = self._state.METHODS.get(method)
        source = params if rule.session == "params" else result
        model = (
            None
            if spec is None
            else spec.params
            if rule.session == "params"
            else spec.result
        )
        wire = as_mapping(_wire(source, model))
        session = wire.get(self._state.SESSION[1]) if wire is not None else None
        if not isinstance(session, str):
            return None
        state = self.states.get(session) or self._state.new(session)
        self.states[session] = state = state.call(
            method,
            params,
            result,
            error=error,
            answered=answered,
            asked_at=asked_at,
            at=at,
        )
        return state


def _wire(value: BaseModel | Mapping[str, Any] | None, model: Any) -> Any:
    """The wire form of a params or result value: a model's dump, or JSON read by
    ``model`` and dumped again (so that a replayed message folds exactly as the model
    the live peer had)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if value is None or model is None:
        return value
    try:
        adapter: TypeAdapter[Any] = _adapter(model)
        return adapter.dump_python(
            adapter.validate_python(value),
            mode="json",
            by_alias=True,
            exclude_unset=True,
        )
    except ValidationError:
        return value


_ADAPTERS: dict[int, TypeAdapter[Any]] = {}


def _adapter(model: Any) -> TypeAdapter[Any]:
    if id(model) not in _ADAPTERS:
        _ADAPTERS[id(model)] = TypeAdapter(model)
    return _ADAPTERS[id(model)]


def _kind_of(wire: Any, tag: str | None) -> str:
    fields = as_mapping(wire)
    kind = fields.get(tag) if fields is not None and tag is not None else None
    return kind if isinstance(kind, str) else ""


def refused(
    state: Folded,
    update: Any,
    error: ValidationError,
    tag: str | None,
    at: str | None = None,
) -> Folded:
    """``state`` with an update the models refused kept in its unknown updates."""
    count = error.error_count()
    reason = f"refused by the models: {count} error(s), first at {_where(error)}"
    kind = _kind_of(update, tag)
    return keep(state, kind or None, update, reason, at)


def _where(error: ValidationError) -> str:
    first = error.errors()[0] if error.error_count() else {"loc": ()}
    return "/" + "/".join(str(p) for p in first.get("loc", ()))
