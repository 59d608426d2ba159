"""The spans of what the relay carries: one per request passing through, either way.

Support code: it knows no method of the protocol but the name of a session's update
stream. Made by an :class:`~.pipe.AgentPipe` only where the application set a tracer
provider up (``connection.telemetry.find``). The relay passes every message byte for
byte, so it adds nothing to ``_meta``: its span of a client's request is a child of the
client's span (the context the request carries), and so is the agent's span of it; a
turn traced in a client is one trace through the relay and the agent. The relay's span
of a request ends when the answer passes back (``rpc.jsonrpc.error_code`` when it is an
error), or when the agent ends; a session's ``session/update`` stream is counted on the
span of the session's request (``acp.session.updates``), other notifications are short
spans. At most :data:`MOST` requests per connection are spanned at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..connection.telemetry import find, transport_name
from ..connection.traced import parent_of
from ..wire.messages import id_key, session_of
from ..wire.rpc import Json

if TYPE_CHECKING:
    from ..connection import otel_library as otel

__all__ = ["MOST", "RelaySpans"]

MOST = 1024
"""Requests spanned at once per connection (beyond, a request is carried unspanned)."""


class _Open:
    __slots__ = ("session", "span", "updates")

    def __init__(self, span: otel.Span, session: str | None) -> None:
        self.span = span
        self.session = session
        self.updates = 0


class RelaySpans:
    """The spans of one relayed connection (``tag``: its ``Acp-Connection-Id``)."""

    def __init__(
        self, tracer: otel.Tracer, otel_api: Any, tag: str, transport: str
    ) -> None:
        self._tracer = tracer
        self._otel = otel_api
        self._tag = tag
        self._transport = transport
        self._open: dict[tuple[str, Any], _Open] = {}
        """By the side that sent the request ("client", "agent") and its id's key."""
        self._sessions: dict[str, _Open] = {}

    @classmethod
    def found(cls, tag: str, transport: object) -> RelaySpans | None:
        """The spans of a connection (``transport``: the client's), where the
        application traces; else None."""
        telemetry = find()
        if telemetry is None or telemetry.tracer is None:
            return None
        return cls(telemetry.tracer, telemetry.otel, tag, transport_name(transport))

    def carried(self, sender: str, message: dict[str, Any]) -> None:
        """``message`` (decoded), sent by ``sender`` ("client" or "agent"), passes."""
        method = message.get("method")
        if method is None:
            self._answered("agent" if sender == "client" else "client", message)
        elif method == "session/update":
            session = session_of(message)
            found = self._sessions.get(session) if session is not None else None
            if found is not None:
                found.updates += 1
        elif type(method) is str:
            self._started(sender, method, message)

    def _started(self, sender: str, method: str, message: dict[str, Any]) -> None:
        request = "id" in message
        key = id_key(message.get("id")) if request else None
        if request and (key is None or len(self._open) >= MOST):
            return
        otel = self._otel
        session = session_of(message)
        attributes: dict[str, Any] = {
            "rpc.system": "jsonrpc",
            "rpc.jsonrpc.version": "2.0",
            "rpc.method": method[:100],
            "acp.transport": self._transport,
            "acp.relay": True,
            "acp.connection.id": self._tag,
        }
        if request:
            attributes["rpc.jsonrpc.request_id"] = str(message["id"])
        if session is not None:
            attributes["acp.session.id"] = session
        kind = otel.SpanKind.SERVER if sender == "client" else otel.SpanKind.CLIENT
        span = self._tracer.start_span(
            method[:100], parent_of(otel, message), kind, attributes
        )
        if not request:
            span.end()
            return
        opened = self._open[(sender, key)] = _Open(span, session)
        if session is not None:
            self._sessions[session] = opened

    def _answered(self, sender: str, message: dict[str, Any]) -> None:
        key = id_key(message.get("id"))
        opened = self._open.pop((sender, key), None) if key is not None else None
        if opened is None:
            return
        error: Json = message.get("error")
        code: Json = error.get("code") if type(error) is dict else None
        result: Json = message.get("result")
        session: Json = result.get("sessionId") if type(result) is dict else None
        if opened.session is None and type(session) is str:  # session/new's
            opened.span.set_attribute("acp.session.id", session)
        self._end(opened, code if type(code) is int else None, "error" in message)

    def _end(self, opened: _Open, code: int | None, failed: bool) -> None:
        span, otel = opened.span, self._otel
        if opened.session is not None and self._sessions.get(opened.session) is opened:
            del self._sessions[opened.session]
        if opened.updates:
            span.set_attribute("acp.session.updates", opened.updates)
        if code is not None:
            span.set_attribute("rpc.jsonrpc.error_code", code)
            span.set_attribute("error.type", str(code))
        if failed:
            span.set_status(otel.Status(otel.StatusCode.ERROR, None))
        span.end()

    def ended(self) -> None:
        """The connection ended: the spans of requests never answered end, failed."""
        opened, self._open = self._open, {}
        for each in opened.values():
            each.span.set_attribute("error.type", "the connection ended")
            self._end(each, None, True)
