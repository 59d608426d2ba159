"""What a peer sends: the limits on what it may make this process hold, and one
incoming line read as a JSON-RPC message, or the error that answers it.

Support code for ``connection`` (which exports :class:`Limits`): it knows no method of
the protocol. :func:`read_line` is the whole of what the connection does with a line's
bytes before it routes the message: decode it (``codec.decode``: pydantic-core's JSON
reader, which refuses NaN and the infinities; the standard library's for lone
surrogates; the depth limit checked without recursing) and check its envelope. The
params are read afterwards, by the dispatcher, with the method's model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._rpc import INVALID_REQUEST, RequestError, read_id
from .codec import Unreadable, decode

__all__ = ["MAX_MESSAGE_BYTES", "Limits", "Refused", "read_line"]

MAX_MESSAGE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """What one peer may make this process hold."""

    max_message_bytes: int = MAX_MESSAGE_BYTES
    """The longest message read (a longer one is answered -32600 and skipped)."""
    max_depth: int = 512
    """The deepest nesting of arrays and objects read (deeper is answered -32600)."""
    max_running_requests: int = 1024
    """Peer requests handled at once; beyond it, reading pauses."""
    max_queued_notifications: int = 1024
    """Peer notifications waiting for their turn; beyond it, reading pauses."""
    max_queued_bytes: int = 64 * 1024 * 1024
    """Bytes of the waiting notifications; beyond it, reading pauses."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be at least 1")


@dataclass(frozen=True, slots=True)
class Refused:
    """A line that is not a JSON-RPC message: the error that answers it, and the id it
    answers (None when no valid id can be read)."""

    request_id: Any
    error: RequestError


def _invalid(request_id: Any, reason: str) -> Refused:
    return Refused(
        request_id, RequestError(INVALID_REQUEST, "Invalid request", {"reason": reason})
    )


_NOT_AN_OBJECT = _invalid(None, "a message is a JSON object")
_NO_ID = _invalid(None, "an id is a string, an integer or null")
_SHAPELESS = _invalid(None, "neither a request, a notification nor a response")
_NOT_A_CALL = 'a request has "jsonrpc": "2.0" and a string "method"'


def read_line(line: bytes, max_depth: int) -> dict[str, Any] | Refused:
    """The message a line holds, or why it is refused.

    A request or a notification (a ``method`` member) comes back with ``"jsonrpc":
    "2.0"``, a string ``method`` and, for a request, its ``id`` as the wire reads it
    (an integral ``1.0`` as ``1``: the answer carries it in that form). A response (an
    ``id`` and no ``method``) comes back as it is: the request it answers decides how
    it is read. Anything else is :class:`Refused`: -32700 for what is not JSON, -32600
    for JSON that is no JSON-RPC message or is nested deeper than ``max_depth``.
    """
    message = decode(line, max_depth)
    if type(message) is not dict:
        if type(message) is Unreadable:
            return Refused(message.request_id, message.error)
        return _NOT_AN_OBJECT
    if "method" in message:
        valid, request_id = read_id(message.get("id"))
        if not valid:
            return _NO_ID
        if message.get("jsonrpc") != "2.0" or type(message["method"]) is not str:
            return _invalid(request_id, _NOT_A_CALL)
        if "id" in message:
            message["id"] = request_id
        return message
    if "id" in message:
        return message
    return _SHAPELESS
