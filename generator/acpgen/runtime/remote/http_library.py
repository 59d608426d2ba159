"""httpx, as the Streamable HTTP client (``http_client``) uses it.

Support code: it knows no method of the protocol. Imported, it holds httpx's own
classes (an ImportError naming the ``remote`` extra without it: ``deps``); to a type
checker it is ``http_library.pyi``, which types only what the client uses, so that a
project without the extra type-checks all the same.
"""

from __future__ import annotations

import importlib

from .deps import missing_extra

try:
    importlib.import_module("h2")  # httpx speaks HTTP/2 with it
    _httpx = importlib.import_module("httpx")
except ImportError as error:  # the remote extra is not installed
    raise missing_extra(__name__) from error

__all__ = [
    "URL",
    "AsyncHTTPTransport",
    "Cookies",
    "HTTPError",
    "Request",
    "Response",
    "Timeout",
    "create_ssl_context",
]

URL = _httpx.URL
AsyncHTTPTransport = _httpx.AsyncHTTPTransport
Cookies = _httpx.Cookies
HTTPError = _httpx.HTTPError
Request = _httpx.Request
Response = _httpx.Response
Timeout = _httpx.Timeout
create_ssl_context = _httpx.create_ssl_context
