"""websockets, as the WebSocket client (``websocket_client``) uses it.

Support code: it knows no method of the protocol. Imported, it holds websockets' own
classes (an ImportError naming the ``remote`` extra without it: ``deps``); to a type
checker it is ``websocket_library.pyi``, which types only what the client uses, so that
a project without the extra type-checks all the same.
"""

from __future__ import annotations

import importlib

from .deps import missing_extra

try:
    _websockets = importlib.import_module("websockets")
    _client = importlib.import_module("websockets.asyncio.client")
except ImportError as error:  # the remote extra is not installed
    raise missing_extra(__name__) from error

__all__ = [
    "ClientConnection",
    "ConnectionClosed",
    "InvalidHandshake",
    "InvalidStatus",
    "InvalidURI",
    "connect",
]

ClientConnection = _client.ClientConnection
ConnectionClosed = _websockets.ConnectionClosed
InvalidHandshake = _websockets.InvalidHandshake
InvalidStatus = _websockets.InvalidStatus
InvalidURI = _websockets.InvalidURI
connect = _client.connect
