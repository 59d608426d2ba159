"""The base of the typed senders: send params, parse the answer.

The params are serialised when the connection writes them, not before: a send that waits
for its turn (the peer is not reading) holds its model, not its bytes, so thousands of
concurrent sends hold no more encoded bytes than one.

Support code: it knows no method of the protocol; the generated ``senders`` module
subclasses :class:`Sender` once per role, with the methods of that role and its
capability check.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, TypeAdapter

from ..wire.rpc import Deferred, MethodSpec
from .adapters import built
from .connection import Connection

__all__ = ["Sender", "Transport"]


class Transport(Protocol):
    """Sends JSON params, returns the raw ``result`` (``Connection`` is one)."""

    async def request(self, method: str, params: Any) -> Any: ...

    async def notify(self, method: str, params: Any) -> None: ...


class Sender:
    """Calls the methods ``_methods`` (keyed by wire name and kind) on the peer."""

    _methods: ClassVar[dict[tuple[str, str], MethodSpec]] = {}
    _request_routes: ClassVar[dict[str, tuple[Any, Callable[[Any], Any]]]] = {}
    """Each class's own, made on its first request (this empty one is never filled:
    :meth:`_request_route` gives the class its own)."""
    _notification_serializers: ClassVar[dict[str, Any]] = {}
    """Each class's own, made on its first notification (this empty one is never
    filled: :meth:`_notification_serializer` gives the class its own)."""

    def __init__(
        self,
        transport: Transport,
        peer_capabilities: BaseModel | None = None,
        *,
        check_capabilities: bool = True,
    ) -> None:
        self._transport = transport
        self._connection = transport if isinstance(transport, Connection) else None
        """The transport when it is a :class:`Connection`, which reads a typed result
        itself (so a call costs no coroutine of the sender's)."""
        self.peer_capabilities = peer_capabilities
        """What the peer advertised at ``initialize``; when set, messages are checked
        against it."""
        self.check_capabilities = check_capabilities
        """Record what the peer advertises at ``initialize`` (and so check what is sent
        to it)."""

    def advertised(self, capabilities: BaseModel | None) -> None:
        """The peer advertised ``capabilities`` at ``initialize``: check against them
        from now on.

        Called by the runtime with what the ``initialize`` exchange carried (the
        capability model's defaults when the peer sent none); ignored when
        ``check_capabilities`` is off.
        """
        if self.check_capabilities:
            self.peer_capabilities = capabilities

    def _check(self, wire: str, params: Any) -> None:
        """Refuse what the peer did not advertise (no check here: subclasses know the
        rules)."""

    def _adapter(self, model: Any) -> TypeAdapter[Any]:
        return built(model)  # shared by every sender of the process

    def _dump(self, spec: MethodSpec, params: Any) -> Deferred:
        """The params, serialised only when the connection writes them (so that a send
        waiting for its turn holds no bytes)."""
        return Deferred(self._adapter(spec.params).serializer, params)

    @classmethod
    def _request_route(cls, wire: str) -> tuple[Any, Callable[[Any], Any]]:
        """The serializer of a request's params and the validator of its result (the
        adapters every sender of the process shares), found once per class."""
        routes: dict[str, tuple[Any, Callable[[Any], Any]]] | None = cls.__dict__.get(
            "_request_routes"
        )
        if routes is None:
            routes = {}
            cls._request_routes = routes  # this class's own, bounded by its methods
        route = routes.get(wire)
        if route is None:
            spec = cls._methods[(wire, "request")]
            result = built(spec.result)
            route = routes[wire] = (
                built(spec.params).serializer,
                result.validator.validate_python,
            )
        return route

    @classmethod
    def _notification_serializer(cls, wire: str) -> Any:
        """The serializer of a notification's params, found once per class."""
        found: dict[str, Any] | None = cls.__dict__.get("_notification_serializers")
        if found is None:
            found = {}
            cls._notification_serializers = found
        serializer = found.get(wire)
        if serializer is None:
            spec = cls._methods[(wire, "notification")]
            serializer = found[wire] = built(spec.params).serializer
        return serializer

    def _request(
        self,
        wire: str,
        params: Any,
        *,
        version: tuple[str, Callable[[Any], None]] | None = None,
    ) -> Awaitable[Any]:
        """Send a request and read its result (to be awaited; what the peer did not
        advertise is refused at once). ``version`` (a result field and its check) is
        checked first: a peer of another protocol version may answer in another
        shape."""
        route = self._request_routes.get(wire)
        if route is None:
            route = self._request_route(wire)
        serializer, read_result = route
        self._check(wire, params)
        sent = Deferred(serializer, params)
        if version is None and self._connection is not None:
            return self._connection.request(wire, sent, read=read_result)
        return self._read(wire, sent, read_result, version)

    async def _read(
        self,
        wire: str,
        params: Deferred,
        read_result: Callable[[Any], Any],
        version: tuple[str, Callable[[Any], None]] | None,
    ) -> Any:
        raw = await self._transport.request(wire, params)
        if version is not None and isinstance(raw, dict) and version[0] in raw:
            version[1](raw[version[0]])
        return read_result({} if raw is None else raw)

    def _notify(self, wire: str, params: Any) -> Awaitable[None] | None:
        """Send a notification: None when it is written at once (over a
        ``Connection`` that can take it now), else the transport's coroutine to await;
        what the peer did not advertise is refused at once."""
        serializer = self._notification_serializers.get(wire)
        if serializer is None:
            serializer = self._notification_serializer(wire)
        self._check(wire, params)
        connection = self._connection
        if connection is not None and connection.notified_at_once(
            wire, params, serializer
        ):
            return None  # written: nothing to await
        return self._transport.notify(wire, Deferred(serializer, params))

    async def ext_method(self, method: str, params: Any) -> Any:
        """Send an extension request (its name must start with ``_``)."""
        return await self._transport.request(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        """Send an extension notification (its name must start with ``_``)."""
        await self._transport.notify(method, params)
