"""Reading a message: the one place that makes sense of a message's bytes, and the
glances at a message that routing needs.

Support code: it knows no method of the protocol (the routing rules that name methods
come from the schema, as :class:`Routing`). Every reading starts with
:func:`~.codec.decode`, the one JSON reader of a message (pydantic-core's, which refuses
NaN and the infinities; the standard library's for lone surrogates; the depth limit
checked without recursing). :func:`read_message` is what the connection does with a
message's bytes before it routes it: decode them and check the envelope (the params are
read afterwards, by the dispatcher, with the method's model). :func:`glance` is how a
transport that carries messages without answering them (the remote server and client,
the resume host and client) reads one: the same decoding, nothing refused. The other
helpers read the parts of a decoded message that routing needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

from .codec import FAST_DEPTH, Unreadable, decode
from .rpc import INVALID_REQUEST, Json, RequestError, read_id

__all__ = [
    "Routing",
    "glance",
    "id_key",
    "json_object",
    "read_message",
    "session_of",
]


def _invalid(request_id: Any, reason: str) -> Unreadable:
    return Unreadable(
        request_id, RequestError(INVALID_REQUEST, "Invalid request", {"reason": reason})
    )


_NOT_AN_OBJECT = _invalid(None, "a message is a JSON object")
_NO_ID = _invalid(None, "an id is a string, an integer or null")
_SHAPELESS = _invalid(None, "neither a request, a notification nor a response")
_NOT_A_CALL = 'a request has "jsonrpc": "2.0" and a string "method"'
_LEAST, _BEYOND = -(2**63), 2**63
"""The range of an integer id (``rpc.read_id``'s)."""


def read_message(data: bytes, max_depth: int) -> dict[str, Any] | Unreadable:
    """The message ``data`` holds, or why it is refused.

    A request or a notification (a ``method`` member) comes back with ``"jsonrpc":
    "2.0"``, a string ``method`` and, for a request, its ``id`` as the wire reads it
    (an integral ``1.0`` as ``1``: the answer carries it in that form). A response (an
    ``id`` and no ``method``) comes back as it is: the request it answers decides how
    it is read. Anything else is :class:`~.codec.Unreadable`: -32700 for what is not
    JSON, -32600 for JSON that is no JSON-RPC message or is nested deeper than
    ``max_depth``.
    """
    message: Json | Unreadable
    if max_depth >= FAST_DEPTH:  # decode's first step, without its call
        try:
            message = from_json(data, allow_inf_nan=False)
        except ValueError:
            message = decode(data, max_depth)
    else:
        message = decode(data, max_depth)
    if type(message) is not dict:
        if type(message) is Unreadable:
            return message
        return _NOT_AN_OBJECT
    if "method" in message:
        request_id: Any = message.get("id")
        kind: type[Any] = (
            request_id.__class__
        )  # none (a notification), a string, or an integer of
        # 64 bits: read_id's answer at once
        if (
            request_id is not None
            and kind is not str
            and not (kind is int and _LEAST <= request_id < _BEYOND)
        ):
            valid, request_id = read_id(request_id)
            if not valid:
                return _NO_ID
            message["id"] = request_id  # in the form read_id gives (1.0 as 1)
        if message.get("jsonrpc") != "2.0" or type(message["method"]) is not str:
            return _invalid(request_id, _NOT_A_CALL)
        return message
    if "id" in message:
        return message
    return _SHAPELESS


def glance(data: bytes) -> dict[str, Any]:
    """The JSON object a message holds, decoded as :func:`read_message` decodes it;
    empty when it holds none (not JSON, not an object, nested too deep): for a
    transport that routes a message and leaves refusing it to the connection."""
    message: Json | Unreadable = decode(data)
    return message if type(message) is dict else {}


def id_key(value: Any) -> tuple[str, Any] | None:
    """A hashable key for a JSON-RPC id (``1`` and ``"1"`` differ); None: not an id."""
    if value is None or type(value) in (str, int):
        return (type(value).__name__, value)
    if type(value) is float and value.is_integer():
        return ("int", int(value))
    return None


def json_object(value: Json) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if type(value) is dict else {}


def session_of(message: dict[str, Any]) -> str | None:
    """The session a request or notification names in its params (``sessionId``)."""
    params: Json = message.get("params")
    session: Json = params.get("sessionId") if type(params) is dict else None
    return session if type(session) is str else None


@dataclass(frozen=True, slots=True)
class Routing:
    """The routing rules of the RFD "Streamable HTTP & WebSocket Transport", in the
    schema's method names (rendered per package, ``resume.ROUTING``)."""

    initialize: str
    """The request that opens a connection."""
    session_scoped: frozenset[str]
    """Agent methods whose params name a session: they need ``Acp-Session-Id``."""
    answered_on_connection: frozenset[str]
    """Session requests answered on the connection stream (``session/load``)."""
