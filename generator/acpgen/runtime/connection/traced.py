"""One connection's spans and durations, and the trace context in ``params._meta``.

Support code: it knows no method of the protocol but the names that say which
notifications are a session's stream (``session/update``). Made by the connection only
where ``telemetry.find`` found OpenTelemetry set up (or it was given a ``Telemetry``):
otherwise none of this runs. Per OpenTelemetry's RPC and JSON-RPC conventions:

- a CLIENT span per request we send, a SERVER span per peer request handled, named by
  the method, with ``rpc.system`` (``jsonrpc``), ``rpc.jsonrpc.version`` (``2.0``),
  ``rpc.method``, ``rpc.jsonrpc.request_id``, ``rpc.jsonrpc.error_code`` (an error
  answer: the span's status is then an error), ``acp.session.id`` and
  ``acp.transport`` (``stdio``, ``http``, ``websocket``); ``rpc.client.duration``
  and ``rpc.server.duration`` by method, error code and transport (a method the peer
  named and nobody handles, -32601, counts as ``_OTHER``: a peer cannot grow the
  metrics' series);
- a notification is a short span of its own, except ``session/update``: an update
  stream is counted on the span of its session's request (``acp.session.updates``);
- the span's context travels in ``params._meta`` as the W3C keys ``traceparent``,
  ``tracestate`` and ``baggage`` (ACP's meta propagation RFD): injected into what we
  send (only the keys the propagator gives are set; the rest of ``_meta`` is kept),
  extracted from what the peer sent, so that the handler's own calls are its children.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..wire.rpc import Deferred, Json
from .dispatch import Handled, Pending
from .replies import ErrorReply, MessageReply, Reply

if TYPE_CHECKING:
    from . import otel_library as otel
    from .telemetry import Telemetry
    from .trace_writer import TraceWriter

__all__ = ["Carried", "Traced", "parent_of"]

UPDATES = "session/update"
KEYS = ("traceparent", "tracestate", "baggage")
"""The ``_meta`` root keys that carry the trace context."""
LONGEST = 8192
"""A trace context key longer than this is not read (W3C's own bounds are far lower)."""
OTHER = "_OTHER"
"""``rpc.method`` of a method nobody handles (OpenTelemetry's name for it)."""
CANCELLED = -32800


class _Call:
    """One span's bookkeeping: what the span and the duration metric need."""

    __slots__ = (
        "attributes",
        "context",
        "method",
        "session",
        "span",
        "start",
        "updates",
    )

    def __init__(self, method: str, attributes: dict[str, Any], session: Any) -> None:
        self.method = method
        self.attributes = attributes
        self.session = session if type(session) is str else None
        self.span: otel.Span | None = None
        self.context: Any = None
        self.start = time.perf_counter()
        self.updates = 0


class Carried:
    """Params on their way to the encoder, with the call whose context they carry."""

    __slots__ = ("call", "params")

    def __init__(self, params: Any, call: _Call) -> None:
        self.params = params
        self.call = call


class Traced:
    """The spans and durations of one connection (``transport``: its name)."""

    def __init__(self, telemetry: Telemetry, transport: str) -> None:
        self.telemetry = telemetry
        self.otel = telemetry.otel
        self.tracer = telemetry.tracer
        self.transport = transport
        self._open: dict[str, _Call] = {}
        """By session id: the latest request of that session whose span is open (where
        its ``session/update`` stream is counted)."""

    # -- our messages

    async def request(
        self,
        send: Callable[..., Awaitable[Any]],
        method: str,
        params: Any = None,
        *,
        serializer: Any = None,
        read: Callable[[Any], Any] | None = None,
    ) -> Any:
        """``send`` (the connection's own ``request``), in a CLIENT span."""
        call = self._start(
            method, self.otel.SpanKind.CLIENT, _session(params), None, True
        )
        try:
            result = await send(
                method, Carried(params, call), serializer=serializer, read=read
            )
        except BaseException as error:
            self._end(call, error, self.telemetry.metered and "client")
            raise
        if method == "session/new" and call.span is not None:
            found = getattr(result, "session_id", None)
            if type(found) is str:
                call.span.set_attribute("acp.session.id", found)
        self._end(call, None, self.telemetry.metered and "client")
        return result

    def notify(
        self,
        send: Callable[..., Awaitable[None]],
        method: str,
        params: Any = None,
        *,
        serializer: Any = None,
    ) -> Awaitable[None]:
        """``send`` (the connection's own ``notify``): a session's update counted on its
        request's span, another notification in a short CLIENT span."""
        if method == UPDATES or method[:2] == "$/" or self.tracer is None:
            if method == UPDATES:
                self._count_update(_session(params))
            return send(method, params, serializer=serializer)
        call = self._start(
            method, self.otel.SpanKind.CLIENT, _session(params), None, False
        )
        try:
            return send(method, Carried(params, call), serializer=serializer)
        finally:
            self._end(call, None, False)

    def encode_call(
        self, request_id: int | None, method: str, params: Any, serializer: Any
    ) -> tuple[int | None, str, Any, Any]:
        """The message to encode (``codec.encode_call``'s arguments): ``params`` with
        the call's trace context in ``_meta``."""
        if type(params) is not Carried:
            return request_id, method, params, serializer
        call, params = params.call, params.params
        span = call.span
        if span is None:
            return request_id, method, params, serializer
        if request_id is not None:
            span.set_attribute("rpc.jsonrpc.request_id", str(request_id))
        carrier: dict[str, str] = {}
        self.otel.inject(carrier, self.otel.set_span_in_context(span))
        if carrier:
            params, serializer = _with_meta(params, serializer, carrier)
        return request_id, method, params, serializer

    def _count_update(self, session: Any) -> None:
        call = self._open.get(session) if type(session) is str else None
        if call is not None:
            call.updates += 1

    # -- the peer's messages

    def handling(
        self, handle: Callable[[dict[str, Any]], Handled]
    ) -> Callable[[dict[str, Any]], Handled]:
        """``handle`` (the connection's entry point), each request and notification but
        a session's update in a SERVER span whose context is the peer's."""

        def traced(message: dict[str, Any]) -> Handled:
            method = message.get("method")
            if method == UPDATES:
                self._count_update(_params_session(message))
                return handle(message)
            request = "id" in message
            if not request and self.tracer is None:
                return handle(message)
            call = self._server_call(message, method, request)
            token = self.otel.attach(call.context) if call.span is not None else None
            try:
                handled = handle(message)
            except BaseException as error:
                self._end(call, error, request and "server")
                raise
            finally:
                if token is not None:
                    self.otel.detach(token)
            if isinstance(handled, Pending):
                return _TracedPending(handled, call, self, request)
            self._end(call, handled, request and "server")
            return handled

        return traced

    def _server_call(
        self, message: dict[str, Any], method: Any, request: bool
    ) -> _Call:
        name = method[:100] if type(method) is str else OTHER
        parent = parent_of(self.otel, message) if self.tracer is not None else None
        session = _params_session(message)
        call = self._start(name, self.otel.SpanKind.SERVER, session, parent, request)
        if request and call.span is not None:
            request_id = message["id"]
            call.span.set_attribute(
                "rpc.jsonrpc.request_id", "" if request_id is None else str(request_id)
            )
        return call

    # -- spans and durations

    def _start(
        self, method: str, kind: Any, session: Any, parent: Any, request: bool
    ) -> _Call:
        attributes: dict[str, Any] = {
            "rpc.system": "jsonrpc",
            "rpc.method": method,
            "acp.transport": self.transport,
        }
        call = _Call(method, attributes, session)
        if self.tracer is not None:
            spanned = {**attributes, "rpc.jsonrpc.version": "2.0"}
            if call.session is not None:
                spanned["acp.session.id"] = call.session
            call.span = self.tracer.start_span(method, parent, kind, spanned)
            call.context = self.otel.set_span_in_context(call.span, parent)
        if request and call.session is not None:
            self._open[call.session] = call
        return call

    def end(self, call: _Call, outcome: Any, duration: str | bool) -> None:
        """End ``call``'s span with ``outcome`` (a reply, an exception, None: done) and
        record its duration (``duration``: ``client`` or ``server``; False: none) where
        the application measures."""
        self._end(call, outcome, duration)

    def _end(self, call: _Call, outcome: Any, duration: str | bool) -> None:
        if call.session is not None and self._open.get(call.session) is call:
            del self._open[call.session]
        code, text = _error_of(outcome)
        if code == -32601 and duration == "server":
            call.attributes["rpc.method"] = OTHER
        if code is not None:
            call.attributes["rpc.jsonrpc.error_code"] = code
        span = call.span
        if span is not None:
            if call.updates:
                span.set_attribute("acp.session.updates", call.updates)
            if code is not None:
                span.set_attribute("rpc.jsonrpc.error_code", code)
                span.set_attribute("error.type", str(code))
            elif text is not None:
                span.set_attribute("error.type", text)
            if code is not None or text is not None:
                span.set_status(self.otel.Status(self.otel.StatusCode.ERROR, text))
            span.end()
        if duration and self.telemetry.metered:  # (a tracer provider alone: no meter)
            took = (time.perf_counter() - call.start) * 1000.0
            recorder = (
                self.telemetry.client_duration
                if duration == "client"
                else self.telemetry.server_duration
            )
            recorder.record(took, call.attributes)

    # -- sizes

    def tap(self, trace: TraceWriter | None) -> Any:
        """What the reader and the writer record each message to: ``trace`` (the wire
        trace, if any), and the size metric."""
        if not self.telemetry.metered:
            return trace
        return _Tap(self.telemetry, self.transport, trace)


class _TracedPending(Pending):
    """A handler that runs (a request's or a notification's), in its span's context."""

    __slots__ = ("_call", "_inner", "_request", "_traced", "awaitable")

    def __init__(
        self, inner: Pending, call: _Call, traced: Traced, request: bool
    ) -> None:
        self._inner = inner
        self._call = call
        self._traced = traced
        self._request = request
        self.awaitable = self._run(inner.awaitable)

    async def _run(self, awaitable: Awaitable[Any]) -> Any:
        otel = self._traced.otel
        token = otel.attach(self._call.context) if self._call.span is not None else None
        try:
            return await awaitable
        except asyncio.CancelledError as cancelled:
            outcome = ErrorReply(None, _cancelled()) if self._request else cancelled
            self._traced.end(self._call, outcome, self._request and "server")
            raise
        finally:
            if token is not None:
                otel.detach(token)

    def answered(self, value: Any) -> Reply | None:
        reply = self._inner.answered(value)  # (what it raises goes to failed)
        found = getattr(value, "session_id", None)  # session/new's
        span = self._call.span
        if span is not None and type(found) is str and self._call.session is None:
            span.set_attribute("acp.session.id", found)
        self._traced.end(self._call, reply, self._request and "server")
        return reply

    def failed(self, error: Exception) -> Reply | None:
        reply = self._inner.failed(error)
        self._traced.end(self._call, reply or error, self._request and "server")
        return reply


class _Tap:
    """The wire trace's place in the reader and the writer: each message's size, then
    the trace itself."""

    __slots__ = ("_attributes", "_size", "_trace")

    def __init__(
        self, telemetry: Telemetry, transport: str, trace: TraceWriter | None
    ) -> None:
        self._size = telemetry.message_size
        self._trace = trace
        self._attributes = {
            direction: {"acp.transport": transport, "acp.direction": direction}
            for direction in ("in", "out")
        }

    def record(self, direction: str, data: bytes) -> None:
        self._size.record(len(data), self._attributes[direction])
        if self._trace is not None:
            self._trace.record(direction, data)

    def close(self) -> None:
        if self._trace is not None:
            self._trace.close()


def _cancelled() -> Any:
    from ..wire.rpc import RequestError

    return RequestError.cancelled()


def _error_of(outcome: Any) -> tuple[int | None, str | None]:
    """The JSON-RPC error code and a short text of an outcome (a reply, an exception,
    None)."""
    if outcome is None:
        return None, None
    error: Json = None
    if isinstance(outcome, ErrorReply):
        error = outcome.error
    elif isinstance(outcome, MessageReply):
        error = outcome.response.get("error")
    if type(error) is dict:
        code: Json = error.get("code")
        text: Json = error.get("message")
        return (code, str(text)[:200]) if type(code) is int else (None, None)
    if isinstance(outcome, Reply):
        return None, None
    found: object = getattr(outcome, "code", None)
    if isinstance(outcome, Exception) and type(found) is int:
        return found, str(getattr(outcome, "message", ""))[:200]
    if isinstance(outcome, asyncio.CancelledError):
        return CANCELLED, "cancelled"
    return None, type(outcome).__qualname__


def _session(params: Any) -> Any:
    """The session our params name (a model's ``session_id``, a dict's
    ``sessionId``)."""
    if type(params) is Deferred:
        params = params.value
    members: Json = params
    if type(members) is dict:
        return members.get("sessionId")
    return getattr(params, "session_id", None)


def _params_session(message: dict[str, Any]) -> Json:
    params: Json = message.get("params")
    return params.get("sessionId") if type(params) is dict else None


def parent_of(otel: Any, message: dict[str, Any]) -> Any:
    """The context the peer sent in ``params._meta`` (only string values of the W3C
    keys, bounded, are read); an empty one when it sent none."""
    params: Json = message.get("params")
    meta: Json = params.get("_meta") if type(params) is dict else None
    carrier: dict[str, str] = {}
    if type(meta) is dict:
        for key in KEYS:
            value: Json = meta.get(key)
            if type(value) is str and len(value) <= LONGEST:
                carrier[key] = value
    return otel.extract(carrier, otel.Context())


def _with_meta(
    params: Any, serializer: Any, carrier: dict[str, str]
) -> tuple[Any, Any]:
    """``params`` (a model with its serializer, a :class:`Deferred`, a dict, None)
    with ``carrier``'s keys in its ``_meta``; unchanged when it is none of these or its
    ``_meta`` is not an object."""
    try:
        if type(params) is Deferred:
            params, serializer = params.value, params.serializer
        if serializer is not None:
            params = serializer.to_python(
                params, mode="json", by_alias=True, exclude_unset=True
            )
            serializer = None
    except ValueError:
        return params, serializer
    if params is None:
        return {"_meta": carrier}, None
    members: Json = params
    if type(members) is not dict:
        return params, serializer
    meta: Json = members.get("_meta", {})
    if type(meta) is not dict:
        return params, serializer
    return {**members, "_meta": {**meta, **carrier}}, None
