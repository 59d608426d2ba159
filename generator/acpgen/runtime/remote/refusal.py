"""The error of a remote connection that the server refused, the same over both
profiles (WebSocket and Streamable HTTP).

Support code: it knows no method of the protocol, and imports nothing but the standard
library, so that a server, which needs no client package, may name it too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..wire.rpc import Json

if TYPE_CHECKING:  # (transports needs the client's extra: only its name is used here)
    from .transports import Profile

__all__ = ["Refused", "refused_by_response"]

_MOST = 8192
"""Characters of a refusal's body kept in :attr:`Refused.message`."""


class Refused(ConnectionError):
    """The server refused the connection: the WebSocket upgrade or the ``initialize``
    POST was answered with an HTTP error status (401 and 403 from ``authorize`` or a
    foreign ``Origin``, 503 when the server is full...), a WebSocket was closed before
    the server sent anything, or a later POST was refused with 401, 403, 404 or 410,
    which ends the connection.

    It is a :class:`ConnectionError`, like every other end of a connection.
    """

    def __init__(
        self,
        url: str,
        profile: Profile,
        *,
        status: int | None = None,
        close_code: int | None = None,
        message: str = "",
        error: dict[str, Any] | None = None,
    ) -> None:
        self.url = url
        self.profile: Profile = profile
        """``"ws"`` or ``"http"``: the profile the connection was refused on."""
        self.status = status
        """The HTTP status of the refusal, or None (a WebSocket closed)."""
        self.close_code = close_code
        """The WebSocket close code, when a WebSocket was closed; else None."""
        self.message = message
        """What the server said: the response body (its first 8 KiB; the JSON-RPC
        error's message when the body is a JSON-RPC error), or the close reason."""
        self.error = error
        """The JSON-RPC error object (``code``, ``message``, ``data``), when the body
        was a JSON-RPC error response; else None."""
        how = f"HTTP {status}" if status is not None else f"close code {close_code}"
        said = f": {message}" if message else ""
        super().__init__(f"{url} refused the connection ({profile}, {how}){said}")


def refused_by_response(
    url: str, profile: Profile, status: int, body: bytes
) -> Refused:
    """The refusal an HTTP error response gives: its status and body (a JSON-RPC error
    response read as one)."""
    text = body[: _MOST * 4].decode("utf-8", "replace").strip()[:_MOST]
    error = _json_rpc_error(body)
    if error is not None:
        message = error.get("message")
        text = message if isinstance(message, str) else text
    return Refused(url, profile, status=status, message=text, error=error)


def _json_rpc_error(body: bytes) -> dict[str, Any] | None:
    if not body.lstrip().startswith(b"{") or len(body) > _MOST * 4:
        return None
    try:
        value: Json = json.loads(body)
    except (ValueError, RecursionError):
        return None
    error: Json = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return error
    return None
