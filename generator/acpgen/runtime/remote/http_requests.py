"""The Streamable HTTP client's requests: httpx's transport, its keep-alive pool and the
cookies a client keeps, without the per-request layers of ``httpx.AsyncClient``.

Support code: it knows no method of the protocol. It needs the ``remote`` extra
(``deps``), through ``http_library``. The client's transport (``http_client``) sends
the POSTs and DELETE of a connection through one :class:`Requests`, its SSE streams'
GETs through another; both profiles keep a client's cookies in one :class:`CookieJar`.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
import urllib.request
from collections.abc import AsyncGenerator, Mapping

from . import http_library as httpx

__all__ = [
    "JSON_CONTENT",
    "CookieJar",
    "Headers",
    "Requests",
    "http_url",
    "post_failure",
    "proxy_for",
    "tls_context",
]


def http_url(url: str) -> str:
    """``url`` with the HTTP scheme (``ws`` -> ``http``, ``wss`` -> ``https``)."""
    for socket, plain in (("ws://", "http://"), ("wss://", "https://")):
        if url.startswith(socket):
            return plain + url[len(socket) :]
    return url


def post_failure(error: Exception) -> str:
    """What a POST that got no answer says: a server's HTTP/2 GOAWAY that ended the
    connection under it (the POST may have been read: it is not sent again) is named,
    with what to do; other errors as httpx words them."""
    terminated = error.__cause__.args[0] if error.__cause__ is not None else None
    if terminated is None or not hasattr(terminated, "last_stream_id"):
        return str(error)
    code = getattr(terminated, "error_code", None)
    return (
        f"the server ended its HTTP/2 connection (GOAWAY, error code {code!s}) before "
        "answering a message it may have read: the connection is lost (a server's "
        "limit of requests per connection does this, hypercorn's "
        "keep_alive_max_requests: raise it, or connect with reconnect= to resume)"
    )


class CookieJar:
    """The cookies one client keeps across its connections, both profiles: what a
    balancer sets for affinity (HAProxy's ``cookie ... insert``) brings a reconnection
    back to the worker that holds its agent."""

    def __init__(self) -> None:
        self.cookies = httpx.Cookies()

    def header(self, url: str, headers: Mapping[str, str]) -> dict[str, str]:
        """``headers`` with the jar's cookies for ``url`` added to their ``Cookie``."""
        request = httpx.Request("GET", http_url(url))
        self.cookies.set_cookie_header(request)
        ours = request.headers.get("cookie")
        if not ours:
            return dict(headers)
        merged = {k: v for k, v in headers.items() if k.lower() != "cookie"}
        theirs = [v for k, v in headers.items() if k.lower() == "cookie"]
        merged["Cookie"] = "; ".join([*theirs, ours])
        return merged

    def store(self, url: str, status: int, headers: list[tuple[str, str]]) -> None:
        """Keep the cookies a response to ``url`` sets (its ``Set-Cookie`` headers)."""
        if not any(name.lower() == "set-cookie" for name, _ in headers):
            return
        request = httpx.Request("GET", http_url(url))
        response = httpx.Response(status, headers=headers, request=request)
        self.cookies.extract_cookies(response)

    def keep(self, response: httpx.Response) -> None:
        """Keep what ``response`` (its ``request`` set) sets; the jar is not asked when
        it sets nothing."""
        if "set-cookie" in response.headers:
            self.cookies.extract_cookies(response)


JSON_CONTENT = (b"content-type", b"application/json")
Headers = list[tuple[bytes, bytes]]


class Requests:
    """One connection's HTTP requests: httpx's transport (its keep-alive pool, over
    HTTP/1.1 or HTTP/2) without the per-request layers of ``httpx.AsyncClient``.

    One POST per message is the client's hot path, and ``AsyncClient`` spent more CPU on
    each than the transport sending it: it parsed and merged the URL, the headers and
    the cookies again, ran the auth and redirect flows and the event hooks, and took the
    cookies of every response through ``http.cookiejar``. Here the URL is parsed once,
    the headers are bytes made once, the jar is asked only when it holds cookies and fed
    only by responses that set some. Every request goes to the one transport: the POSTs
    share one kept-alive TCP connection whatever their number (the SSE streams have a
    ``Requests`` of their own; ``tests/runtime/test_http_connections.py`` counts the
    connections). A proxy the
    environment names (``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``...) is used as
    ``AsyncClient`` would."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        jar: CookieJar,
        *,
        http2: bool | None,
        timeout: httpx.Timeout,
    ) -> None:
        self._url = httpx.URL(url)
        self._text_url = url
        self._headers = [
            (k.encode("ascii"), v.encode("ascii")) for k, v in headers.items()
        ]
        self._names = {name.lower() for name, _ in self._headers}
        """The caller's header names: a request's own header of the same name replaces
        the caller's (as ``AsyncClient`` merged them)."""
        self._jar = jar
        self._timeout = timeout.as_dict()
        self.transport = httpx.AsyncHTTPTransport(
            verify=_tls(),
            http1=http2 is not True,
            http2=http2 is not False,
            proxy=_proxy(self._url),
        )

    def _request(
        self,
        method: str,
        headers: Headers,
        content: bytes | None,
        timeout: httpx.Timeout | None,
    ) -> httpx.Request:
        pairs = self._headers + headers
        if self._names and any(name in self._names for name, _ in headers):
            own = {name for name, _ in headers}
            pairs = [p for p in self._headers if p[0].lower() not in own] + headers
        if self._jar.cookies.jar:  # the jar's cookies join the caller's
            text = {k.decode("ascii"): v.decode("ascii") for k, v in pairs}
            merged = self._jar.header(self._text_url, text)
            pairs = [(k.encode("ascii"), v.encode("ascii")) for k, v in merged.items()]
        request = httpx.Request(method, self._url, headers=pairs, content=content)
        limits = self._timeout if timeout is None else timeout.as_dict()
        request.extensions = {"timeout": limits}
        return request

    async def send(
        self,
        method: str,
        headers: Headers,
        content: bytes | None = None,
        *,
        timeout: httpx.Timeout | None = None,
    ) -> httpx.Response:
        """One request and its whole response (httpx's errors raised)."""
        request = self._request(method, headers, content, timeout)
        response = await self.transport.handle_async_request(request)
        response.request = request
        try:
            await response.aread()
        finally:
            await response.aclose()
        self._jar.keep(response)
        return response

    async def post(
        self, data: bytes, headers: Headers, *, timeout: httpx.Timeout | None = None
    ) -> httpx.Response:
        """POST one JSON-RPC message."""
        return await self.send("POST", [JSON_CONTENT, *headers], data, timeout=timeout)

    @contextlib.asynccontextmanager
    async def stream(
        self, headers: Headers, *, timeout: httpx.Timeout | None = None
    ) -> AsyncGenerator[httpx.Response, None]:
        """A GET whose body is read as it comes (closed on leaving)."""
        request = self._request("GET", headers, None, timeout)
        response = await self.transport.handle_async_request(request)
        response.request = request
        try:
            self._jar.keep(response)
            yield response
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        await self.transport.aclose()


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url``, as the transport uses it."""
    return _proxy(httpx.URL(http_url(url)))


def tls_context() -> ssl.SSLContext:
    """The TLS context the transport checks servers with."""
    return _tls()


def _proxy(url: httpx.URL) -> str | None:
    """The proxy the environment names for ``url`` (``<scheme>_proxy``, else
    ``all_proxy``; none for a host ``no_proxy`` lists)."""
    proxies = urllib.request.getproxies()
    chosen = proxies.get(url.scheme) or proxies.get("all")
    if not chosen or urllib.request.proxy_bypass(url.host):
        return None
    return chosen


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, made once: each client would load the trusted
    certificates again (about a megabyte outside Python's allocator, for every
    reconnection)."""
    return httpx.create_ssl_context()
