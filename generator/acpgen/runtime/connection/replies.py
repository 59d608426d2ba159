"""Answers to the peer's requests, ready to write: each encoded only when its turn to
be written comes.

Support code: it knows no method of the protocol. The dispatcher makes them (a handler's
result, an error); the connection makes its own refusals (an id in use, too busy,
cancelled, unreadable) and writes every one through its writer, which answers -32603
for a result that JSON cannot hold.
"""

from __future__ import annotations

from typing import Any

from ..wire.codec import encode, encode_result
from ..wire.rpc import RequestError, RequestId

__all__ = ["ErrorReply", "MessageReply", "Reply", "ResultReply"]


class Reply:
    """An answer to a request, ready to write."""

    __slots__ = ()

    request_id: RequestId
    """The id it answers."""

    def encode(self) -> bytes:
        """The answer as JSON text (UTF-8, no line break); raises ``TypeError``,
        ``ValueError`` or ``RecursionError`` for a result that JSON cannot hold."""
        raise NotImplementedError

    def message(self) -> dict[str, Any]:
        """The answer as a JSON-RPC response object (a model result kept as a
        ``Deferred``, serialised when written)."""
        raise NotImplementedError


class ErrorReply(Reply):
    """The answer ``error`` to ``request_id``."""

    __slots__ = ("error", "request_id")

    def __init__(self, request_id: RequestId, error: RequestError) -> None:
        self.request_id = request_id
        self.error = error.to_wire()
        """The ``error`` member (not the exception: its traceback holds the frames that
        hold this reply, a cycle per refused request)."""

    def encode(self) -> bytes:
        return encode(self.message())

    def message(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.request_id, "error": self.error}


class ResultReply(Reply):
    """The answer ``result`` (JSON values, or a ``Deferred`` model) to
    ``request_id``."""

    __slots__ = ("request_id", "result")

    def __init__(self, request_id: RequestId, result: Any) -> None:
        self.request_id = request_id
        self.result = result

    def encode(self) -> bytes:
        return encode_result(self.request_id, self.result)

    def message(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.request_id, "result": self.result}


class MessageReply(Reply):
    """A whole response a handler function made itself, written as it is."""

    __slots__ = ("request_id", "response")

    def __init__(self, response: dict[str, Any]) -> None:
        self.response = response
        self.request_id = response.get("id")

    def encode(self) -> bytes:
        response = self.response
        if (  # the common answer, written in one step
            len(response) == 3
            and "result" in response
            and response.get("jsonrpc") == "2.0"
            and "id" in response
        ):
            return encode_result(response["id"], response["result"])
        return encode(response)

    def message(self) -> dict[str, Any]:
        return self.response
