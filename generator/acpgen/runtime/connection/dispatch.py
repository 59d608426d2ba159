"""Route incoming JSON-RPC requests and notifications to a handler object.

Support code: it knows no method of the protocol, only the method table it is given. The
dispatcher validates params with the method's model, calls the handler's method of the
same Python name, and answers with the result, serialised by alias when the connection
writes it. Failures become JSON-RPC errors: unknown method -32601, invalid params -32602
(the validation errors, without the input, in ``data``), a :class:`RequestError` raised
by the handler its own code, anything else (including a result that does not fit the
result model) -32603, logged and never detailed to the peer. Names starting with ``_``
go to the handler's extension hooks. A notification never produces a response; its
failures are logged.

:meth:`Dispatcher.handle` is the one entry point: it reads a message and calls its
handler, and gives a :class:`~.replies.Reply` ready to write (a refusal), a
:class:`Pending` (the handler's awaitable: once it is done, ``answered`` or ``failed``
gives the reply), or None (a notification with nothing left to run). The connection
awaits what it gives in its own task, and :meth:`Dispatcher.dispatch` awaits it for a
caller that wants the response as a dict.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from ..wire.codec import encode_model_result
from ..wire.rpc import (
    INVALID_REQUEST,
    Deferred,
    Json,
    MethodSpec,
    RequestError,
    RequestId,
)
from .adapters import built
from .log_ids import logger
from .replies import ErrorReply, MessageReply, Reply, ResultReply

__all__ = ["Dispatcher", "Handler", "Pending", "entry_point", "error_reply"]

_log = logger(__name__)
_ABSENT: Any = object()

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""A handler function: answers a request with a whole response message, or handles a
notification and returns None (what a connection is given instead of a dispatcher)."""


class _Route:
    """How one method is read and answered.

    Built on the method's first message (the models defer their build), it holds the
    pydantic-core validator of the params and the serializer of the result (shared by
    every connection: ``adapters.built``), so that a message costs little more than
    validating its params.
    """

    __slots__ = (
        "_a_class",
        "_read_result",
        "_spec",
        "python_name",
        "result_class",
        "serializer",
        "validate",
        "warnings",
        "wire",
    )

    def __init__(self, spec: MethodSpec) -> None:
        self._spec = spec
        self.wire, self.python_name = spec.wire, spec.python_name
        self.validate: Callable[[Any], Any] | None = None
        """pydantic-core's validator of the params model (set on the first message)."""
        self._read_result: Callable[[Any], Any] | None = None
        self.serializer: Any = None
        """The pydantic-core serializer of the result model (set by :meth:`checked`)."""
        self._a_class = isinstance(spec.result, type)
        """The result model is a class (not a union)."""
        self.result_class: type | None = spec.result if self._a_class else None
        """The result model when it is a class: a result of exactly this class needs
        no :meth:`checked`."""
        self.warnings: bool | str = True if self._a_class else "error"
        """pydantic-core's ``warnings`` for writing a result: a union's serializer
        refuses a value that fits no branch."""

    def build(self) -> Callable[[Any], Any]:
        """Set the validator and the serializer (on the method's first message): the
        validator."""
        params = built(self._spec.params)
        if self._spec.result is not None:
            result = built(self._spec.result)
            self._read_result = result.validator.validate_python
            self.serializer = result.serializer
        self.validate = params.validator.validate_python
        return self.validate

    def checked(self, result: Any) -> Any:
        """The handler's result as the result model, for :attr:`serializer` to write
        (with :attr:`warnings`); None reads as the model's defaults.

        A result that is not the result model is validated as one (so a dict of wire
        names works); one that does not fit raises (and so answers -32603), as does,
        when it is written, a result that fits no branch of a union.
        """
        if self.serializer is None:
            self.build()
        assert self._read_result is not None  # a request's route
        if result is None:
            return self._read_result({})
        if self._a_class and not isinstance(result, self._spec.result):
            return self._read_result(result)
        # a union result cannot be checked above: the serializer refuses what fits no
        # branch (checking costs about 1.5 us, so it is spared where isinstance has
        # already decided)
        return result


def _invalid_params(error: ValidationError) -> RequestError:
    """The -32602 error for params that do not fit their model: the validation errors,
    without the input."""
    details = error.json(include_url=False, include_input=False)
    return RequestError.invalid_params(json.loads(details))


@functools.lru_cache(maxsize=64)
def _routes(
    methods: tuple[MethodSpec, ...],
) -> tuple[dict[str, _Route], dict[str, _Route]]:
    """The request and notification routes of ``methods``, made once per process and
    shared by every dispatcher of them (they are read only): a server holding many
    connections holds one table, not one per connection (docs/performance.md, R3)."""
    requests: dict[str, _Route] = {}
    notifications: dict[str, _Route] = {}
    for spec in methods:
        if spec.wire.startswith("_"):  # a name for the extension hooks, never routed
            continue
        routes = requests if spec.kind == "request" else notifications
        routes[spec.wire] = _Route(spec)
    return requests, notifications


def error_reply(request_id: RequestId, method: Any, error: Exception) -> ErrorReply:
    """The answer to a request whose handling raised ``error``: a
    :class:`RequestError` as it says; anything else -32603, logged here (with its
    traceback) and never detailed to the peer."""
    if isinstance(error, RequestError):
        return ErrorReply(request_id, error)
    _log.error("handler of %.100r failed", method, exc_info=error)
    return ErrorReply(request_id, RequestError.internal_error())


def _notification_failed(method: Any, error: Exception) -> None:
    """Log a notification whose handling raised ``error`` (a notification is never
    answered): a :class:`RequestError` as refused, anything else with its traceback."""
    if isinstance(error, RequestError):
        _log.warning("notification %.100r refused: %s", method, error)
    else:
        _log.error("handler of notification %.100r failed", method, exc_info=error)


class Pending:
    """A message whose handler runs: await :attr:`awaitable`, then :meth:`answered`
    with what it returned, or :meth:`failed` with what it raised, gives the reply to
    write (None for a notification)."""

    __slots__ = ()

    awaitable: Awaitable[Any]
    """The handler's awaitable."""

    def answered(self, value: Any) -> Reply | None:
        """The reply to write for the handler's ``value``; raises what
        :meth:`failed` then answers (a result that does not fit its model)."""
        raise NotImplementedError

    def failed(self, error: Exception) -> Reply | None:
        """The reply to write when the handler raised ``error`` (logged here)."""
        raise NotImplementedError


Handled = Reply | Pending | None
"""What an entry point gives for a message: a reply to write now, a handler to await,
or nothing to do."""


class _Request(Pending, Reply):
    """A request of the method table: its handler's awaitable, then its result (the
    reply is this object, written by the result model's serializer)."""

    __slots__ = ("_route", "_value", "awaitable", "request_id")

    def __init__(
        self, awaitable: Awaitable[Any], route: _Route, request_id: RequestId
    ) -> None:
        self.awaitable = awaitable
        self._route = route
        self.request_id = request_id
        self._value: Any = None

    def answered(self, value: Any) -> Reply:
        route = self._route
        if type(value) is not route.result_class:  # (checked: unchanged)
            value = route.checked(value)
        self._value = value
        return self

    def failed(self, error: Exception) -> Reply:
        return error_reply(self.request_id, self._route.wire, error)

    def encode(self) -> bytes:
        route = self._route
        return encode_model_result(
            self.request_id, route.serializer, self._value, route.warnings
        )

    def message(self) -> dict[str, Any]:
        route = self._route
        result = Deferred(route.serializer, self._value, route.warnings)
        return {"jsonrpc": "2.0", "id": self.request_id, "result": result}


class _Notification(Pending):
    """A notification's handler (of the method table, or an extension hook)."""

    __slots__ = ("_method", "awaitable")

    def __init__(self, awaitable: Awaitable[Any], method: str) -> None:
        self.awaitable = awaitable
        self._method = method

    def answered(self, value: Any) -> None:
        return None

    def failed(self, error: Exception) -> None:
        _notification_failed(self._method, error)


class _Extension(Pending):
    """An extension request (``ext_method``): its result is JSON, written as it is."""

    __slots__ = ("_method", "awaitable", "request_id")

    def __init__(
        self, awaitable: Awaitable[Any], method: str, request_id: RequestId
    ) -> None:
        self.awaitable = awaitable
        self._method = method
        self.request_id = request_id

    def answered(self, value: Any) -> Reply:
        return ResultReply(self.request_id, value)

    def failed(self, error: Exception) -> Reply:
        return error_reply(self.request_id, self._method, error)


class Dispatcher:
    """Dispatches messages for the methods ``methods`` to ``handler``.

    ``observers`` maps a wire method name to a function called with its validated params
    before the handler (the runtime records what the peer advertises at ``initialize``
    so).
    """

    def __init__(
        self,
        handler: object,
        methods: Iterable[MethodSpec],
        *,
        observers: Mapping[str, Callable[[Any], None]] | None = None,
    ) -> None:
        self._handler = handler
        self._requests, self._notifications = _routes(tuple(methods))
        self._observers = dict(observers or {})

    def handle(self, message: Mapping[str, Any]) -> Handled:
        """What to do with ``message`` (a request or a notification, its envelope
        checked): the reply to write now, the handler's :class:`Pending` (its params
        read and its handler called), or None for a notification with nothing to run
        (refused params, an unknown method: logged). Never raises."""
        if "id" not in message:
            return self._notification(message)
        request_id = message["id"]
        method = message.get("method")
        route = self._requests.get(method) if type(method) is str else None
        try:
            # a handler that does not subclass the interface may lack the method
            call = (
                getattr(self._handler, route.python_name, None)
                if route is not None
                else None
            )
            if call is None:  # an extension method, or no handler for the method
                return self._unrouted(request_id, method, message)
            assert route is not None
            params = message.get("params", _ABSENT)
            validate = route.validate or route.build()
            try:
                read = validate({} if params is _ABSENT else params)
            except ValidationError as error:
                return ErrorReply(request_id, _invalid_params(error))
            if self._observers and (observe := self._observers.get(route.wire)):
                observe(read)
            return _Request(call(read), route, request_id)
        except Exception as error:  # noqa: BLE001 - answered (-32603 logged)
            return error_reply(request_id, method, error)

    async def dispatch(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """The response to a request, or None for a notification (a message without an
        id): :meth:`handle`'s reply, its handler awaited."""
        handled = self.handle(message)
        if not isinstance(handled, Pending):
            return None if handled is None else handled.message()
        try:
            reply = handled.answered(await handled.awaitable)
        except Exception as error:  # noqa: BLE001 - answered (-32603 logged)
            reply = handled.failed(error)
        return None if reply is None else reply.message()

    def _unrouted(
        self, request_id: RequestId, method: Any, message: Mapping[str, Any]
    ) -> Reply | Pending:
        """A request outside the table: an extension method's hook, else -32601 (-32600
        for a method that is not a string)."""
        if type(method) is not str:
            reason = {"reason": "method must be a string"}
            return ErrorReply(
                request_id, RequestError(INVALID_REQUEST, "Invalid request", reason)
            )
        hook = getattr(self._handler, "ext_method", None)
        if not method.startswith("_") or hook is None:
            return ErrorReply(request_id, RequestError.method_not_found(method))
        params = message.get("params")
        return _Extension(hook(method, params), method, request_id)

    def _notification(self, message: Mapping[str, Any]) -> Pending | None:
        method = message.get("method")
        if type(method) is not str:
            _log.debug("dropped a notification without a method name")
            return None
        try:
            if method.startswith("_"):
                hook = getattr(self._handler, "ext_notification", None)
                if hook is None:
                    return None
                return _Notification(hook(method, message.get("params")), method)
            route = self._notifications.get(method)
            call = (
                getattr(self._handler, route.python_name, None)
                if route is not None
                else None
            )
            if route is None or call is None:
                _log.debug("no handler for notification %.100r", method)
                return None
            params = message.get("params", _ABSENT)
            validate = route.validate or route.build()
            try:
                read = validate({} if params is _ABSENT else params)
            except ValidationError as error:
                raise _invalid_params(error) from None
            if self._observers and (observe := self._observers.get(method)):
                observe(read)
            return _Notification(call(read), method)
        except Exception as error:  # noqa: BLE001 - never answered: logged here
            _notification_failed(method, error)
            return None


class _Function(Pending):
    """A request or notification handed to a handler function."""

    __slots__ = ("_method", "awaitable", "request_id")

    def __init__(
        self,
        awaitable: Awaitable[dict[str, Any] | None],
        method: Any,
        request_id: RequestId | None,
    ) -> None:
        self.awaitable = awaitable
        self._method = method
        self.request_id = request_id

    def answered(self, value: Json) -> Reply | None:
        if self.request_id is _ABSENT:
            return None
        if type(value) is not dict:
            _log.error("the handler of request %.100r gave no answer", self._method)
            return ErrorReply(self.request_id, RequestError.internal_error())
        return MessageReply(value)

    def failed(self, error: Exception) -> Reply | None:
        if self.request_id is _ABSENT:
            _log.error(
                "handler of notification %.100r failed", self._method, exc_info=error
            )
            return None
        _log.error("handler of %.100r failed", self._method, exc_info=error)
        return ErrorReply(self.request_id, RequestError.internal_error())


def _function_entry(handler: Handler) -> Callable[[dict[str, Any]], Handled]:
    """The entry point of a handler function: every message is handed to it."""

    def handle(message: dict[str, Any]) -> Handled:
        method = message.get("method")
        request_id = message.get("id", _ABSENT)
        try:
            return _Function(handler(message), method, request_id)
        except Exception as error:  # noqa: BLE001 - answered -32603 (logged)
            return _Function(_raising(error), method, request_id)

    return handle


async def _raising(error: Exception) -> None:
    raise error


def entry_point(
    handler: Handler | Dispatcher,
) -> Callable[[dict[str, Any]], Handled]:
    """What a connection calls for each peer message: the dispatcher's
    :meth:`Dispatcher.handle` (given the dispatcher, or its ``dispatch``), else the
    handler function's own."""
    if isinstance(handler, Dispatcher):
        return handler.handle
    owner = getattr(handler, "__self__", None)
    if (
        isinstance(owner, Dispatcher)
        and getattr(handler, "__func__", None) is Dispatcher.dispatch
    ):
        return owner.handle
    return _function_entry(handler)
