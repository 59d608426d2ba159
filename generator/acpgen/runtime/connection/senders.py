"""The base of the typed senders: send params, parse the answer.

The params are serialised when the connection writes them, not before: a send that waits
for its turn (the peer is not reading) holds its model, not its bytes, so thousands of
concurrent sends hold no more encoded bytes than one.

Support code: it knows no method of the protocol; the generated ``senders`` module
subclasses :class:`Sender` once per role, with the methods of that role and its
capability check. A sender sends through a :class:`Requester` (a ``Connection`` is one),
by one path: each request with its params' serializer and its result's reader, each
notification with its params' serializer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from ..wire.rpc import Json, MethodSpec
from .adapters import built
from .connection import SENT

__all__ = ["SENT", "Requester", "Sender"]


class Requester(Protocol):
    """Sends requests and notifications to the peer (a ``Connection`` is one; the
    ``Transport`` of ``connection.transport`` moves bytes, this sends calls).

    ``params`` are JSON values, or, given ``serializer`` (a pydantic-core serializer),
    the model it writes, when the message's turn to be written comes. ``read`` makes
    the result of ``request`` (of ``{}`` for a null result), and raises what it raises.
    ``notify`` gives what to await until the notification is written: :data:`SENT` for
    one written at once.
    """

    def request(
        self,
        method: str,
        params: Any = None,
        *,
        serializer: Any = None,
        read: Callable[[Any], Any] | None = None,
    ) -> Awaitable[Any]: ...

    def notify(
        self, method: str, params: Any = None, *, serializer: Any = None
    ) -> Awaitable[None]: ...


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
        requester: Requester,
        peer_capabilities: BaseModel | None = None,
        *,
        check_capabilities: bool = True,
    ) -> None:
        self._requester = requester
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
        serializer, read = route
        self._check(wire, params)
        if version is not None:
            read = _versioned(read, *version)
        return self._requester.request(wire, params, serializer=serializer, read=read)

    def _notify(self, wire: str, params: Any) -> Awaitable[None] | None:
        """Send a notification: None when it was written at once, else what to await
        until it is; what the peer did not advertise is refused at once."""
        serializer = self._notification_serializers.get(wire)
        if serializer is None:
            serializer = self._notification_serializer(wire)
        self._check(wire, params)
        sent = self._requester.notify(wire, params, serializer=serializer)
        return None if sent is SENT else sent

    async def ext_method(self, method: str, params: Any) -> Any:
        """Send an extension request (its name must start with ``_``)."""
        return await self._requester.request(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        """Send an extension notification (its name must start with ``_``)."""
        await self._requester.notify(method, params)


def _versioned(
    read: Callable[[Any], Any], field: str, check: Callable[[Any], None]
) -> Callable[[Any], Any]:
    """``read``, after ``check`` of the raw result's ``field`` (when it has one)."""

    def versioned(raw: Json) -> Any:
        if isinstance(raw, dict) and field in raw:
            check(raw[field])
        return read(raw)

    return versioned
