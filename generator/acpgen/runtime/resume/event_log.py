"""Numbered session events: what a resumable agent keeps of what it sent, per stream.

Support code: it knows no method of the protocol (which updates may be coalesced comes
as a :class:`Coalescing` rendered from the schema). Each stream (a session, or the
connection itself) numbers the messages sent on it 1, 2, 3...: a client that counts the
messages of a stream it handled knows the id of the last one without any mark on the
wire. An :class:`EventLog` keeps a stream's recent events within :class:`ResumeLimits`
(count, bytes, age); when a bound is passed it first joins runs of adjacent text chunks
of the same kind (one event then stands for several ids and says so in its ``_meta``),
then forgets the oldest events. :meth:`EventLog.since` gives the events after an id, or
:class:`~.vocabulary.Lost` when some of them are forgotten: a gap is never delivered as
if whole.

Each event also keeps what it comes after on the other streams (:class:`Precedence`):
a client that reads the streams apart (the SSE streams of Streamable HTTP), or a
catch-up that sends them one after the other, puts them back in the order the agent
sent them.
"""

from __future__ import annotations

import collections
import json
import time
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json, to_json

from ..wire.rpc import Json
from .vocabulary import EXTENSION, Lost

__all__ = ["After", "Coalescing", "EventLog", "Precedence", "ResumeLimits"]

After = tuple[tuple[str | None, int], ...]
"""What a message comes after: ``(stream, number)`` pairs, each stream (a session id,
or None for the connection's own) with the number of its last message sent before."""


class Precedence:
    """The order of the messages sent on several streams, stated per message: which
    streams carried a message since the previous one of a stream, and the number of
    their last one (a message's :data:`After`). A message is delivered in the order it
    was sent when it is delivered after those."""

    def __init__(self) -> None:
        self._latest: dict[str | None, tuple[int, int]] = {}
        """Each stream's last message: (its number, its place in the sending order)."""
        self._recent: collections.OrderedDict[str | None, None] = (
            collections.OrderedDict()
        )
        """The streams, the one that sent last at the end."""
        self._sent = 0

    def note(self, stream: str | None, number: int) -> After:
        """Record message ``number`` of ``stream`` as sent now; what it comes after."""
        since = self._latest.get(stream, (0, 0))[1]
        after: list[tuple[str | None, int]] = []
        for other in reversed(self._recent):  # only the streams that sent since
            last, sent = self._latest[other]
            if sent <= since:
                break
            if other != stream:
                after.append((other, last))
        self._sent += 1
        self._latest[stream] = (number, self._sent)
        self._recent[stream] = None
        self._recent.move_to_end(stream)
        return tuple(after)

    def forget(self, stream: str | None) -> None:
        """``stream`` is gone (what it sent is never waited for)."""
        self._latest.pop(stream, None)
        self._recent.pop(stream, None)


@dataclass(frozen=True, slots=True)
class ResumeLimits:
    """How much of a session a resumable agent keeps for a client that comes back."""

    max_events: int = 4096
    """Events kept per stream (a session, or the connection)."""
    max_bytes: int = 8 * 1024 * 1024
    """Bytes of events kept per stream."""
    max_age: float = 600.0
    """Seconds an event is kept."""
    detached_for: float = 600.0
    """Seconds a connection without a client is kept (then its agent is closed)."""
    max_detached: int = 256
    """Connections without a client kept at once (beyond, the longest waiting goes)."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) <= 0:
                raise ValueError(f"ResumeLimits.{name} must be positive")


@dataclass(frozen=True, slots=True)
class Coalescing:
    """Which notifications are text chunks that may be joined (from the schema)."""

    method: str
    """The notification (``session/update``)."""
    member: str
    """Its params' member holding the update (``update``)."""
    tag: str
    """The update's tag member (``sessionUpdate``)."""
    kinds: frozenset[tuple[str, str]]
    """``(kind, piece member)`` of the chunk kinds (``agent_message_chunk``,
    ``content``)."""
    text: tuple[str, str, str]
    """The piece's tag member, the tag of text, and the member holding the text."""

    def piece(self, message: Json) -> tuple[str, str] | None:
        """The text of a chunk notification and its shape without the text (the key of
        the runs it may join), or None when it is anything else."""
        if type(message) is not dict or message.get("method") != self.method:
            return None
        params: Json = message.get("params")
        if type(params) is not dict or type(params.get(self.member)) is not dict:
            return None
        update: dict[str, Any] = params[self.member]
        piece = next((p for k, p in self.kinds if update.get(self.tag) == k), "")
        tag, text_tag, text = self.text
        if type(update.get(piece)) is not dict or update[piece].get(tag) != text_tag:
            return None
        content: dict[str, Any] = update[piece]
        value = content.get(text)
        if type(value) is not str:
            return None
        emptied: dict[str, Any] = {**content, text: ""}
        blank = {
            **message,
            "params": {**params, self.member: {**update, piece: emptied}},
        }
        return value, json.dumps(blank, sort_keys=True)

    def joined(
        self, message: dict[str, Any], text: str, first: int, last: int
    ) -> bytes:
        """``message`` (a chunk) carrying ``text``, marked as events ``first..last``."""
        params = message["params"]
        update = params[self.member]
        piece = next(p for k, p in self.kinds if update.get(self.tag) == k)
        content = {**update[piece], self.text[2]: text}
        meta: Json = params.get("_meta")
        mark = {
            **(meta if type(meta) is dict else {}),
            EXTENSION: {"coalesced": [first, last]},
        }
        new = {**params, self.member: {**update, piece: content}, "_meta": mark}
        return to_json({**message, "params": new})


_UNKNOWN: Any = object()


@dataclass(slots=True)
class _Event:
    first: int
    last: int
    at: float
    data: bytes
    size: int
    pieces: list[tuple[int, str]] | None = None
    """A joined run: the id and text of each chunk (``data`` is the first chunk)."""
    piece: Any = _UNKNOWN
    """The chunk's text and shape (:meth:`Coalescing.piece`), read once when needed."""
    after: After = ()
    """What the event comes after on the other streams (:class:`Precedence`)."""


class EventLog:
    """The recent events of one stream, numbered from 1."""

    def __init__(self, limits: ResumeLimits, coalescing: Coalescing | None) -> None:
        self._limits = limits
        self._coalescing = coalescing
        self._events: collections.deque[_Event] = collections.deque()
        self._compact = True
        """No two adjacent events could be joined."""
        self.latest = 0
        """The id of the newest event sent on the stream."""
        self.forgotten = 0
        """Events up to this id may be gone."""
        self.size = 0
        self.joined = 0
        """Chunks joined into runs so far."""

    def append(self, data: bytes, now: float | None = None, after: After = ()) -> int:
        """Keep ``data`` as the stream's next event (which comes after ``after``); its
        id."""
        now = time.monotonic() if now is None else now
        self.latest += 1
        event = _Event(self.latest, self.latest, now, data, len(data), after=after)
        if self._over(len(data)) and self._coalescing is not None:
            if not self._compact:
                self._join_runs()
            events = self._events
            grown = self._joins(events[-1], event) if events else None
            if grown is not None:
                self.size += grown
                self._trim(now)
                return self.latest
        elif self._events:
            self._compact = False
        self._events.append(event)
        self.size += event.size
        self._trim(now)
        return self.latest

    def since(
        self, last: int, now: float | None = None
    ) -> list[tuple[int, bytes]] | Lost:
        """The events after ``last`` with their ids, in order (a run cut at ``last``:
        its rest, with the run's last id)."""
        events = self.events_after(last, now)
        if isinstance(events, Lost):
            return events
        return [(number, data) for number, data, _ in events]

    def events_after(
        self, last: int, now: float | None = None
    ) -> list[tuple[int, bytes, After]] | Lost:
        """:meth:`since`, each event with what it comes after."""
        self._trim(time.monotonic() if now is None else now)
        if last < self.forgotten or last > self.latest or last < 0:
            oldest = self._events[0].first if self._events else self.latest + 1
            return Lost(oldest, self.latest)
        return [
            (event.last, self._rest(event, last), event.after)
            for event in self._events
            if event.last > last
        ]

    @property
    def count(self) -> int:
        return len(self._events)

    def _over(self, adding: int) -> bool:
        limits = self._limits
        return (
            len(self._events) >= limits.max_events
            or self.size + adding > limits.max_bytes
        )

    def _rest(self, event: _Event, last: int) -> bytes:
        if event.pieces is None:
            return event.data
        assert self._coalescing is not None
        pieces = [(n, text) for n, text in event.pieces if n > last]
        text = "".join(text for _, text in pieces)
        return self._coalescing.joined(
            from_json(event.data), text, pieces[0][0], event.last
        )

    def _trim(self, now: float) -> None:
        limits, events = self._limits, self._events
        while events and events[0].at < now - limits.max_age:
            self._forget()
        while events and (
            len(events) > limits.max_events or self.size > limits.max_bytes
        ):
            self._forget()

    def _forget(self) -> None:
        event = self._events.popleft()
        self.size -= event.size
        self.forgotten = event.last

    def _join_runs(self) -> None:
        """Join each run of adjacent text chunks of one shape into one event."""
        kept: collections.deque[_Event] = collections.deque()
        for event in self._events:
            if not kept or self._joins(kept[-1], event) is None:
                kept.append(event)
        self._events = kept
        self.size = sum(event.size for event in kept)
        self._compact = True

    def _piece(self, event: _Event) -> tuple[str, str] | None:
        if event.piece is _UNKNOWN:
            assert self._coalescing is not None
            event.piece = self._coalescing.piece(from_json(event.data))
        piece: tuple[str, str] | None = event.piece
        return piece

    def _joins(self, run: _Event, event: _Event) -> int | None:
        """Join ``event`` to ``run`` when both are chunks of one shape and no other
        stream sent between them (the join would move the run's start after what came
        between): the bytes ``run`` grew by (None: not joined)."""
        if event.after:
            return None
        mine, theirs = self._piece(run), self._piece(event)
        if mine is None or theirs is None or mine[1] != theirs[1]:
            return None
        grown = 0
        if run.pieces is None:
            run.pieces = [(run.first, mine[0])]
            grown += len(mine[0].encode())
        added = event.pieces or [(event.first, theirs[0])]
        run.pieces.extend(added)
        grown += sum(len(text.encode()) for _, text in added)
        run.size += grown
        run.last = event.last
        self.joined += len(added)
        return grown
