"""The JSON-RPC wire codec: one message's bytes to a JSON value and back.

Support code: it knows no method of the protocol, and no framing either (a transport
frames messages: lines on stdio, text frames on a WebSocket, SSE events and request
bodies over HTTP). :func:`decode` reads a message, refusing what is nested deeper than
the limit without recursing into it (-32600, with the id when it can be read) and what
is not JSON (-32700); :func:`encode` writes one, splicing in members that are already
JSON (:class:`~.rpc.Encoded`), and :func:`encode_call` and :func:`encode_result` write
the shapes a connection sends most (a request or notification, a result) in one step;
:func:`too_deep` and :func:`find_id` read a message's text without parsing it, so that
an oversized or over-deep message is refused by its id.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

from .rpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    Deferred,
    Encoded,
    Json,
    RequestError,
    read_id,
)

__all__ = [
    "FAST_DEPTH",
    "ID_WINDOW",
    "Unreadable",
    "decode",
    "encode",
    "encode_call",
    "encode_model_result",
    "encode_result",
    "find_id",
    "has_member",
    "head",
    "refuse_constant",
    "too_deep",
]

ID_WINDOW = 64 * 1024
"""How much of an oversized or over-deep message is searched for its id."""
FAST_DEPTH = 200
"""The nesting pydantic-core's JSON reader refuses beyond (without recursing into it).
"""


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A message that is not read: the error it is answered with, and the id when it is
    known."""

    request_id: Any
    error: RequestError


def decode(data: bytes, max_depth: int = 512) -> Json | Unreadable:
    """The JSON value a message holds, or :class:`Unreadable` (-32700, or -32600 when
    too deep).

    pydantic-core's JSON reader decodes (fast, and it refuses nesting beyond
    ``FAST_DEPTH`` without recursing into it); what it refuses is read again by the
    standard library's, which also reads lone surrogates, after an exact depth check
    that never recurses either.
    """
    value: Json
    if max_depth >= FAST_DEPTH or not too_deep(data, max_depth):
        try:
            value = from_json(data, allow_inf_nan=False)
        except ValueError:
            pass
        else:
            return value
    if too_deep(data, max_depth):
        refusal = RequestError(
            INVALID_REQUEST, "Nesting too deep", {"limit": max_depth}
        )
        return Unreadable(read_id(find_id(data[:ID_WINDOW]))[1], refusal)
    try:
        value = json.loads(data, parse_constant=refuse_constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return Unreadable(None, RequestError(PARSE_ERROR, "Parse error"))
    return value


def refuse_constant(name: str) -> Any:
    """For ``json.loads``: NaN and the infinities are not JSON."""
    raise ValueError(f"{name} is not JSON")


_JSON = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":")
).encode
_ASCII_JSON = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode


def encode(message: dict[str, Any]) -> bytes:
    """One message as JSON text (UTF-8, no line break); raises on what JSON cannot hold
    (NaN, infinities, other objects).

    Members that are already JSON (:class:`Encoded`: params and results serialised by
    pydantic-core) are spliced in as they are; a :class:`Deferred` member is serialised
    now. The envelope's own parts are written without the JSON encoder.
    """
    members: list[bytes] = []
    for key, value in message.items():
        kind: type[Any] = value.__class__  # (type(value), typed)
        if kind is str:  # a method, an id, "2.0"
            data = _WORDS.get(value) or _text(value)
        elif kind is Deferred:  # a model: pydantic-core writes it now
            data = value.encode()
            if type(data) is not bytes:
                data = _dumps(data)
        elif kind is int:  # an id
            data = b"%d" % value
        elif kind is Encoded:  # JSON already
            data = value
        else:
            data = _dumps(value)
        members.append((_MEMBERS.get(key) or b"," + _dumps(key) + b":") + data)
    return b"{" + b"".join(members)[1:] + b"}"


def encode_call(
    request_id: int | None, method: str, params: Any, serializer: Any = None
) -> bytes:
    """A request (``request_id`` an integer) or a notification (None) as :func:`encode`
    writes ``{"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}``
    (no ``params`` member when ``params`` is None), in one step. Given ``serializer`` (a
    pydantic-core serializer), ``params`` is the model it writes: what is written for
    ``Deferred(serializer, params)``, without the :class:`Deferred` (a typed sender's
    call)."""
    name = _NAMES.get(method) if type(method) is str else None  # _name's common case
    if name is None:
        name = _name(method)
    if serializer is not None:  # a typed sender's model
        try:  # Deferred.encode's common case
            data = serializer.to_json(params, by_alias=True, exclude_unset=True)
        except ValueError:
            data = _model(Deferred(serializer, params))
    elif params is None:
        if request_id is None:
            return b'{"jsonrpc":"2.0","method":%b}' % name
        return b'{"jsonrpc":"2.0","id":%d,"method":%b}' % (request_id, name)
    elif type(params) is Deferred:  # a model
        try:  # Deferred.encode's common case, without its call
            data = params.serializer.to_json(
                params.value,
                by_alias=True,
                exclude_unset=True,
                warnings=params.warnings,
            )
        except ValueError:
            data = _model(params)
    else:
        data = _value(params)
    if request_id is None:
        return b'{"jsonrpc":"2.0","method":%b,"params":%b}' % (name, data)
    return b'{"jsonrpc":"2.0","id":%d,"method":%b,"params":%b}' % (
        request_id,
        name,
        data,
    )


def encode_result(request_id: Any, result: Any) -> bytes:
    """The response ``{"jsonrpc": "2.0", "id": request_id, "result": result}`` as
    :func:`encode` writes it, in one step."""
    if type(result) is Deferred:  # a model
        return encode_model_result(
            request_id, result.serializer, result.value, result.warnings
        )
    data = _value(result)
    if type(request_id) is int:
        return b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (request_id, data)
    return _response(request_id, data)


def _response(request_id: Any, data: bytes) -> bytes:
    """The response to ``request_id`` (a string or null id: an integer one is written
    by the callers) whose result is the JSON ``data``."""
    rid = _text(request_id) if type(request_id) is str else _dumps(request_id)
    return b'{"jsonrpc":"2.0","id":%b,"result":%b}' % (rid, data)


def encode_model_result(
    request_id: Any, serializer: Any, value: Any, warnings: bool | str
) -> bytes:
    """The response whose result is the model ``value``, written by ``serializer`` (a
    pydantic-core serializer) with ``warnings``: what :func:`encode_result` writes for
    ``encode_result(request_id, Deferred(serializer, value, warnings))``, without the
    :class:`Deferred` (a dispatched request answered at once)."""
    try:  # Deferred.encode's common case
        data = serializer.to_json(
            value, by_alias=True, exclude_unset=True, warnings=warnings
        )
    except ValueError:
        data = _model(Deferred(serializer, value, warnings))
    if type(request_id) is int:
        return b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (request_id, data)
    return _response(request_id, data)


def _model(value: Deferred) -> bytes:
    """A model's JSON, as :meth:`Deferred.encode` writes it."""
    data = value.encode()
    return data if type(data) is bytes else _dumps(data)


def _value(value: Any) -> bytes:
    """A member's value as :func:`encode` writes it."""
    kind: type[Any] = value.__class__  # (type(value), typed)
    if kind is Deferred:
        return _model(value)
    if kind is Encoded:
        return value  # type: ignore[no-any-return]
    return _dumps(value)


_NAMES: dict[str, bytes] = {}
"""Method names written before, as JSON strings (at most ``_MOST_NAMES``, each at most
``_LONGEST_NAME`` characters: the table stays small whatever names are sent)."""
_MOST_NAMES = 256
_LONGEST_NAME = 100


def _name(method: str) -> bytes:
    if type(method) is not str:
        return _dumps(method)
    data = _NAMES.get(method)
    if data is None:
        data = _text(method)
        if len(_NAMES) < _MOST_NAMES and len(method) <= _LONGEST_NAME:
            _NAMES[method] = data
    return data


_string = json.encoder.encode_basestring
_MEMBERS = {
    key: f',"{key}":'.encode()
    for key in ("jsonrpc", "id", "method", "params", "result", "error")
}
_WORDS = {"2.0": b'"2.0"'}


def _text(value: str) -> bytes:
    try:
        return _string(value).encode()
    except UnicodeEncodeError:  # a lone surrogate
        return _dumps(value)


def _dumps(value: Any) -> bytes:
    try:
        return _JSON(value).encode()
    except (
        UnicodeEncodeError
    ):  # a lone surrogate: written escaped, as it may have come in
        return _ASCII_JSON(value).encode()


def head(pieces: tuple[bytes, ...] | list[bytes]) -> bytes:
    """The first bytes of a message given in pieces (enough to find its id)."""
    taken: list[bytes] = []
    size = 0
    for piece in pieces:
        taken.append(piece[: ID_WINDOW - size])
        size += len(taken[-1])
        if size >= ID_WINDOW:
            break
    return b"".join(taken)


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[][{},:]', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = frozenset(b"[{")


def too_deep(data: bytes, limit: int) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` (in linear time, without
    parsing)."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    depth = 0
    for byte in _STRING.sub(b"", data).translate(None, _NOT_BRACKETS):
        if byte in _OPENING:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def find_id(data: bytes) -> Any:
    """The top-level ``"id"`` of a JSON object, read from its text (which may be cut
    short).

    Used for messages that are not parsed (too long, too deep) so that the refusal can
    name the request; ``None`` when no valid id can be read.
    """
    position = _member(data, b'"id"')
    return None if position is None else _id_after(data, position)


def has_member(data: bytes, name: str) -> bool:
    """Whether the JSON object whose text starts ``data`` (which may be cut short) has
    the top-level member ``name`` (a plain name, no escapes): ``"method"`` tells a
    request from a response that is not parsed."""
    return _member(data, b'"' + name.encode() + b'"') is not None


def _member(data: bytes, key: bytes) -> int | None:
    """Where the value of the top-level member ``key`` (quoted) starts, if there."""
    depth, key_next = 0, False
    for match in _TOKEN.finditer(data):
        token = match.group()
        if token in (b"{", b"["):
            depth += 1
            key_next = depth == 1 and token == b"{"
        elif token in (b"}", b"]"):
            depth -= 1
        elif token == b",":
            key_next = depth == 1
        elif token != b":" and key_next:
            key_next = False
            if token == key:
                return match.end()
    return None


def _id_after(data: bytes, position: int) -> Any:
    text = data[position : position + 4096].decode("utf-8", "replace").lstrip()
    if not text.startswith(":"):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[1:].lstrip())
    except ValueError:
        return None
    return read_id(value)[1]
