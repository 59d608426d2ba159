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
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from ..wire.rpc import INVALID_REQUEST, Deferred, MethodSpec, RequestError
from .adapters import built

__all__ = ["Dispatcher"]

_log = logging.getLogger(__name__)
_ABSENT: Any = object()


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

    def read(self, params: Any) -> Any:
        """The params as the method's model (absent: ``{}``); else the -32602 error."""
        validate = self.validate or self.build()
        try:
            return validate({} if params is _ABSENT else params)
        except ValidationError as error:
            raise _invalid_params(error) from None

    def answer(self, result: Any) -> Deferred:
        """The handler's result, to be written by alias when the connection sends the
        answer (None reads as the result model's defaults): :meth:`checked`'s value,
        with :attr:`serializer` and :attr:`warnings`."""
        value = self.checked(result)
        return Deferred(self.serializer, value, self.warnings)

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

    async def dispatch(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """The response to a request, or None for a notification (a message without an
        id)."""
        method = message.get("method")
        params = message.get("params", _ABSENT)
        if "id" not in message:
            try:
                notified = self.prepare_notification(message)
                if notified is None:
                    await self._notification(method, params)
                else:
                    await notified
            except Exception as error:  # noqa: BLE001 - never answered: logged here
                self.notification_failed(method, error)
            return None
        request_id = message["id"]
        try:
            prepared = self.prepare(message)
            if prepared is not None:
                handled, route = prepared
                result = route.answer(await handled)
            else:
                result = await self._request(method, params)
        except Exception as error:  # noqa: BLE001 - answered (-32603 logged)
            return self.error_answer(request_id, method, error)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def prepare(
        self,
        message: Mapping[str, Any],
        routes: dict[str, _Route] | None = None,
    ) -> tuple[Awaitable[Any], _Route] | None:
        """The request's params read with its method's model and its handler called:
        the handler's awaitable, and the route whose :meth:`_Route.checked` (or
        :meth:`_Route.answer`) makes the result of what it returns. None: the general
        path answers it (a method outside the table, an extension method, a handler
        without the method). ``routes``: another table than the requests' (the
        notifications', for :meth:`prepare_notification`).

        Raises what :meth:`dispatch` answers with :meth:`error_answer` (-32602 for
        params that do not fit). The connection calls this and awaits the handler in
        its own task, without :meth:`dispatch`'s coroutine; both answer alike.
        """
        method = message.get("method")
        if routes is None:
            routes = self._requests
        # no name in a table starts with "_": those go to the extension hooks
        route = routes.get(method) if type(method) is str else None
        if route is None:
            return None
        call = getattr(self._handler, route.python_name, None)
        if call is None:  # a handler that does not subclass the interface
            return None
        params = message.get("params", _ABSENT)
        validate = route.validate or route.build()
        try:  # Route.read's steps, without its call
            read = validate({} if params is _ABSENT else params)
        except ValidationError as error:
            raise _invalid_params(error) from None
        if self._observers and (observe := self._observers.get(route.wire)):
            observe(read)
        handled: Awaitable[Any] = call(read)
        return handled, route

    def prepare_notification(
        self, message: Mapping[str, Any]
    ) -> Awaitable[None] | None:
        """The notification's params read with its method's model and its handler
        called: the handler's awaitable. None: the general path handles it (a method
        outside the table, an extension method, a handler without the method).

        Raises what :meth:`dispatch` logs with :meth:`notification_failed`. The
        connection calls this and awaits the handler itself, without
        :meth:`dispatch`'s coroutine; both handle it alike.
        """
        prepared = self.prepare(message, self._notifications)
        return None if prepared is None else prepared[0]

    def notification_failed(self, method: Any, error: Exception) -> None:
        """Log a notification whose handling raised ``error`` (a notification is
        never answered): a :class:`RequestError` as refused, anything else with its
        traceback."""
        if isinstance(error, RequestError):
            _log.warning("notification %.100r refused: %s", method, error)
        else:
            _log.error("handler of notification %.100r failed", method, exc_info=error)

    def error_answer(
        self, request_id: Any, method: Any, error: Exception
    ) -> dict[str, Any]:
        """The answer to a request whose handling raised ``error``: a
        :class:`RequestError` as it says; anything else -32603, logged here (with its
        traceback) and never detailed to the peer."""
        if isinstance(error, RequestError):
            return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
        _log.error("handler of %.100r failed", method, exc_info=error)
        internal = RequestError.internal_error()
        return {"jsonrpc": "2.0", "id": request_id, "error": internal.to_wire()}

    async def _request(self, method: Any, params: Any) -> Any:
        if type(method) is not str:
            raise RequestError(
                INVALID_REQUEST,
                "Invalid request",
                {"reason": "method must be a string"},
            )
        if method.startswith("_"):
            hook = getattr(self._handler, "ext_method", None)
            if hook is None:
                raise RequestError.method_not_found(method)
            return await hook(method, None if params is _ABSENT else params)
        route = self._requests.get(method)
        # a handler that does not subclass the interface may lack the method
        call = (
            getattr(self._handler, route.python_name, None)
            if route is not None
            else None
        )
        if route is None or call is None:
            raise RequestError.method_not_found(method)
        read = route.read(params)
        if self._observers:
            self._observed(method, read)
        return route.answer(await call(read))

    def _observed(self, method: str, params: Any) -> None:
        observer = self._observers.get(method)
        if observer is not None:
            observer(params)

    async def _notification(self, method: Any, params: Any) -> None:
        if type(method) is not str:
            _log.debug("dropped a notification without a method name")
            return
        try:
            if method.startswith("_"):
                hook = getattr(self._handler, "ext_notification", None)
                if hook is not None:
                    await hook(method, None if params is _ABSENT else params)
                return
            route = self._notifications.get(method)
            call = (
                getattr(self._handler, route.python_name, None)
                if route is not None
                else None
            )
            if route is None or call is None:
                _log.debug("no handler for notification %.100r", method)
                return
            read = route.read(params)
            if self._observers:
                self._observed(method, read)
            await call(read)
        except RequestError as error:
            _log.warning("notification %.100r refused: %s", method, error)
        except Exception:  # noqa: BLE001 - a notification is never answered: logged here
            _log.exception("handler of notification %.100r failed", method)
