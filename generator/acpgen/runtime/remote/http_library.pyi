# What the Streamable HTTP client uses of httpx, typed (``http_library.py`` is
# httpx's own).

import ssl
from collections.abc import AsyncIterator, Mapping
from http.cookiejar import CookieJar
from typing import Any

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

class URL:
    def __init__(self, url: URL | str = "") -> None: ...
    @property
    def scheme(self) -> str: ...
    @property
    def host(self) -> str: ...

class Headers:
    def get(self, key: str) -> str | None: ...
    def __contains__(self, key: Any) -> bool: ...

class Request:
    headers: Headers
    extensions: dict[str, Any]
    def __init__(
        self,
        method: str,
        url: URL | str,
        *,
        headers: list[tuple[bytes, bytes]] | None = None,
        content: bytes | None = None,
    ) -> None: ...

class Response:
    status_code: int
    headers: Headers
    request: Request
    def __init__(
        self,
        status_code: int,
        *,
        headers: list[tuple[str, str]] | None = None,
        request: Request | None = None,
    ) -> None: ...
    @property
    def content(self) -> bytes: ...
    @property
    def text(self) -> str: ...
    @property
    def is_success(self) -> bool: ...
    async def aread(self) -> bytes: ...
    async def aclose(self) -> None: ...
    def aiter_raw(self, chunk_size: int | None = None) -> AsyncIterator[bytes]: ...

class Cookies:
    jar: CookieJar
    def __init__(self) -> None: ...
    def set_cookie_header(self, request: Request) -> None: ...
    def extract_cookies(self, response: Response) -> None: ...

class Timeout:
    def __init__(self, timeout: float | None, *, read: float | None = ...) -> None: ...
    def as_dict(self) -> Mapping[str, float | None]: ...

class AsyncHTTPTransport:
    def __init__(
        self,
        verify: ssl.SSLContext | str | bool = True,
        *,
        http1: bool = True,
        http2: bool = False,
        proxy: str | None = None,
    ) -> None: ...
    async def handle_async_request(self, request: Request) -> Response: ...
    async def aclose(self) -> None: ...

class HTTPError(Exception): ...

def create_ssl_context() -> ssl.SSLContext: ...
