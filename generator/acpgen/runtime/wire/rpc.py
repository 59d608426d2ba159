"""JSON-RPC 2.0 basics shared by the runtime: error codes, the error exception, ids,
method specs.

Support code: it knows no method of the protocol. The method table (``methods``) and the
error codes of the protocol (``errors``) are generated from the schema and build on what
is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "Deferred",
    "Encoded",
    "Json",
    "MethodSpec",
    "RequestError",
    "RequestId",
    "Side",
    "read_id",
    "to_json",
    "valid_id",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

Side = Literal["agent", "client", "both", "proxy", "protocol"]

Json: TypeAlias = dict[str, Any] | list[Any] | str | int | float | bool | None
"""A decoded JSON value. A value declared so and narrowed by ``type(value) is dict``
reads, to a type checker, as an object of string keys (an ``Any`` narrowed so has keys
and values of unknown type, which pyright's strict mode refuses)."""


class Encoded(bytes):
    """A value already written as JSON text (UTF-8): a message carries it as it is.

    Models are serialised straight to JSON by pydantic-core (one pass, no intermediate
    dict); the connection splices the bytes into the envelope it writes.
    """

    __slots__ = ()


def to_json(serializer: Any, value: Any, **options: Any) -> bytes | Any:
    """``value`` serialised by alias, without what was not set, straight to JSON bytes.

    Falls back to JSON-compatible Python values where pydantic-core cannot write the
    text itself (a lone surrogate in a string): the connection escapes those when it
    writes.
    """
    try:
        written: bytes = serializer.to_json(
            value, by_alias=True, exclude_unset=True, **options
        )
    except ValueError as error:  # PydanticSerializationError
        if "surrogates not allowed" not in str(error):
            raise
        return serializer.to_python(
            value, mode="json", by_alias=True, exclude_unset=True, **options
        )
    return written


class Deferred:
    """A value to be serialised by alias, straight to JSON, only when its message is
    written.

    The typed senders and the dispatcher put one where a message's params or result go;
    the connection encodes it under its write lock, once the transport has room
    (:func:`to_json` then), so a message that waits for its turn holds its model, not
    its bytes. A model is written as it is when its turn comes.
    """

    __slots__ = ("serializer", "value", "warnings")

    def __init__(
        self, serializer: Any, value: Any, warnings: bool | str = True
    ) -> None:
        self.serializer = serializer
        """The pydantic-core serializer that writes :attr:`value`."""
        self.value = value
        self.warnings = warnings
        """pydantic-core's ``warnings`` ("error": refuse a value of another type)."""

    def encode(self) -> bytes | Any:
        """The value as :func:`to_json` writes it; raises what serialising raises.

        (The codec's one-step encoders make the common call themselves, and this one
        when it raises.)"""
        try:  # the common case first, without to_json's keyword arguments
            written: bytes = self.serializer.to_json(
                self.value, by_alias=True, exclude_unset=True, warnings=self.warnings
            )
        except ValueError:  # a lone surrogate (or what to_json raises again)
            return to_json(self.serializer, self.value, warnings=self.warnings)
        return written


RequestId = str | int | None
_INT64 = 2**63


def read_id(value: object) -> tuple[bool, RequestId]:
    """``(True, id)`` when ``value`` is a request id as ACP reads it, else ``(False,
    None)``.

    An id is a string, a 64-bit integer (an integral number such as ``1.0`` reads as
    ``1``, as JSON readers read it) or null; a boolean is not an id.
    """
    if value is None or type(value) is str:
        return True, value
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is int and -_INT64 <= value < _INT64:
        return True, value
    return False, None


def valid_id(value: object) -> bool:
    """Whether ``value`` is a request id (see :func:`read_id`)."""
    return read_id(value)[0]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One method: who handles it, what it takes and returns, its stability and its
    gate."""

    wire: str
    python_name: str
    side: Side
    """The side that handles (receives) the method."""
    kind: Literal["request", "notification"]
    params: Any
    """The params model (a class, or a type alias for a union)."""
    result: Any
    """The result model of a request; None for a notification."""
    stable: bool
    capability: str | None
    """The capability the receiving side must have advertised for the method to be used,
    if any."""


class RequestError(Exception):
    """A JSON-RPC error: a handler raises one to answer with it; a sender raises the
    peer's."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: Json) -> RequestError:
        """Read the ``error`` member of a response (tolerating a malformed one)."""
        if not isinstance(error, dict):
            return cls(INTERNAL_ERROR, f"malformed error response: {error!r}")
        code = error.get("code")
        return cls(
            code if isinstance(code, int) else INTERNAL_ERROR,
            str(error.get("message", "")),
            error.get("data"),
        )

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        return cls(METHOD_NOT_FOUND, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, data: Any = None) -> RequestError:
        return cls(INVALID_PARAMS, "Invalid params", data)

    @classmethod
    def internal_error(cls, data: Any = None) -> RequestError:
        return cls(INTERNAL_ERROR, "Internal error", data)

    @classmethod
    def cancelled(cls) -> RequestError:
        return cls(REQUEST_CANCELLED, "Request cancelled")
