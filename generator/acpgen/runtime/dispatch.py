"""Route incoming JSON-RPC requests and notifications to a handler object.

The dispatcher validates params with the method's model, calls the handler's method of the
same Python name, and serialises the result by alias. Failures become JSON-RPC errors:
unknown method -32601, invalid params -32602 (validation details in ``data``), a
:class:`RequestError` raised by the handler its own code, anything else -32603 (logged here,
never sent to the peer). Names starting with ``_`` go to the handler's extension hooks.
A notification never produces a response.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ._rpc import MethodSpec, RequestError

__all__ = ["Dispatcher"]

_log = logging.getLogger(__name__)


class _Route:
    """How one method is read and answered.

    Built on the method's first message (the models defer their build), it holds the
    pydantic-core validator of the params and the serializer of the result, so that a message
    costs little more than validating its params.
    """

    __slots__ = ("_read_result", "_serialize", "_spec", "_validate", "python_name", "wire")

    def __init__(self, spec: MethodSpec) -> None:
        self._spec = spec
        self.wire, self.python_name = spec.wire, spec.python_name
        self._validate: Callable[[Any], Any] | None = None
        self._read_result: Callable[[Any], Any] | None = None
        self._serialize: Callable[..., Any] | None = None

    def _build(self) -> Callable[[Any], Any]:
        params = _built(self._spec.params)
        if self._spec.result is not None:
            result = _built(self._spec.result)
            self._read_result = result.validator.validate_python
            self._serialize = result.serializer.to_python
        self._validate = params.validator.validate_python
        return self._validate

    def read(self, params: Any) -> Any:
        """The params as the method's model; invalid params raise the -32602 error."""
        validate = self._validate or self._build()
        try:
            return validate({} if params is None else params)
        except ValidationError as error:
            raise RequestError.invalid_params(json.loads(error.json(include_url=False))) from None

    def answer(self, result: Any) -> Any:
        """The handler's result as wire JSON (None reads as the result model's defaults)."""
        if self._serialize is None:
            self._build()
        assert self._read_result is not None and self._serialize is not None  # a request's route
        if result is None:
            result = self._read_result({})
        return self._serialize(result, mode="json", by_alias=True, exclude_unset=True)


def _built(model: Any) -> TypeAdapter[Any]:
    adapter: TypeAdapter[Any] = TypeAdapter(model)
    adapter.rebuild()  # build the deferred schema now: its validator and serializer are used
    return adapter


class Dispatcher:
    """Dispatches messages for the methods ``methods`` to ``handler``."""

    def __init__(self, handler: object, methods: Iterable[MethodSpec]) -> None:
        self._handler = handler
        self._requests: dict[str, _Route] = {}
        self._notifications: dict[str, _Route] = {}
        for spec in methods:
            routes = self._requests if spec.kind == "request" else self._notifications
            routes[spec.wire] = _Route(spec)

    async def dispatch(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """The response to a request, or None for a notification."""
        method = message.get("method")
        params = message.get("params")
        if "id" not in message:
            await self._notification(method, params)
            return None
        request_id = message["id"]
        try:
            if isinstance(method, str) and method.startswith("_"):
                result = await self._handler.ext_method(method, params)  # type: ignore[attr-defined]
            else:
                route = self._request_route(method)
                call = getattr(self._handler, route.python_name, None)
                # a handler that does not subclass the interface may lack the method
                if call is None:
                    raise RequestError.method_not_found(route.wire)
                result = route.answer(await call(route.read(params)))
        except RequestError as error:
            return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
        except Exception:
            _log.exception("handler of %r failed", method)
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": RequestError.internal_error().to_wire(),
            }
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _request_route(self, method: Any) -> _Route:
        if not isinstance(method, str):
            raise RequestError(-32600, "Invalid request", {"reason": "method must be a string"})
        route = self._requests.get(method)
        if route is None:
            raise RequestError.method_not_found(method)
        return route

    async def _notification(self, method: Any, params: Any) -> None:
        if not isinstance(method, str):
            return
        try:
            if method.startswith("_"):
                await self._handler.ext_notification(method, params)  # type: ignore[attr-defined]
                return
            route = self._notifications.get(method)
            call = getattr(self._handler, route.python_name, None) if route is not None else None
            if route is None or call is None:
                _log.debug("no handler for notification %r", method)
                return
            await call(route.read(params))
        except Exception:
            _log.exception("handler of notification %r failed", method)
