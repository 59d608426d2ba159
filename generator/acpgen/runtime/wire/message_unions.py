"""Message unions read by envelope shape and method; one incoming line in one pass.

The schema's top-level message unions (a side's outgoing messages, ``AcpMessage``) carry
:class:`ByEnvelope`, which has pydantic-core key a message on its ``method``;
:class:`MessageReader` reads one line of bytes that way, for a runtime (what
pydantic-core's JSON reader refuses is decoded as every message is, by
``codec.decode``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, GetCoreSchemaHandler, TypeAdapter, ValidationError
from pydantic_core import core_schema

from .model_rules import ByMethod

__all__ = ["ByEnvelope", "MessageReader"]


class MessageReader:
    """Reads one incoming line as a message, in one pydantic-core call from the bytes.

    ``MessageReader(models.AgentOutgoingMessage, models.ProtocolLevelMessage)`` reads
    what a client receives (``ClientOutgoingMessage`` for an agent): a request or
    notification as its envelope with its params read as the method's model
    (:class:`ByEnvelope`), a response as the union reads it. The models' lenient
    keywords and extensible unions apply as in any other reading. A line that
    pydantic-core's JSON reader refuses but the standard library's reads (a lone
    surrogate escape, ``"\\ud800"``) is read by that, then validated: the same value.
    Raises ``ValueError`` for a line that is no JSON, :class:`pydantic.ValidationError`
    for JSON that is no message of the union.

    Like ``json.loads``, pydantic-core's reader takes ``NaN`` and ``Infinity``, which
    JSON does not have; the models refuse them where a number is typed, not inside a
    member of any value (``_meta``, unknown members). Nesting deeper than
    pydantic-core's limit (200) is read by the standard library's reader.
    """

    __slots__ = ("_members", "_validate_json", "_validate_python")

    def __init__(self, *members: Any) -> None:
        self._members = members
        self._validate_json: Callable[..., Any] | None = None
        self._validate_python: Callable[..., Any] | None = None

    def __call__(self, line: bytes | str) -> Any:
        validate = self._validate_json or self._build()
        try:
            return validate(line)
        except ValidationError as error:
            if error.errors(include_url=False)[0]["type"] != "json_invalid":
                raise
        from .codec import Unreadable, decode  # seldom needed: not when the models load

        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        value = decode(data, sys.getrecursionlimit())
        if type(value) is Unreadable:
            raise ValueError(value.error.message)
        assert self._validate_python is not None
        return self._validate_python(value)

    def _build(self) -> Callable[..., Any]:
        messages: Any = _Messages(self._members)
        adapter: TypeAdapter[Any] = TypeAdapter(messages)
        self._validate_python = adapter.validator.validate_python
        self._validate_json = adapter.validator.validate_json
        return self._validate_json


_NOT_ID = core_schema.str_schema(pattern=r"(?s)^(?:|[^i].*|i|i[^d].*|id.+)$")
"""Any member name but ``id`` (a pattern without look-around, for pydantic-core's
regex engine)."""


class ByEnvelope:
    """A union of message envelopes (the messages one side writes, ``AcpMessage``),
    read by the envelope's shape and ``method``.

    Tried in turn, envelopes take each other's messages (a client's ``session/cancel``
    notification reads as an agent's notification whose extension member took the
    params). Here pydantic-core itself keys a message on its ``method``: a method that
    one envelope's :class:`ByMethod` keys (one request envelope, one notification
    envelope, or one of each) selects that envelope, read with the method's params
    model (required), a request's with its ``id``, a notification's with no ``id``; so
    a valid message is read in one pass from JSON, with no Python in between, into the
    value the envelope itself reads. What that refuses (a response, a method no
    envelope or several key, params the method's model refuses) is read by the union's
    members in turn, requests, then responses, then notifications (a message with an
    ``id`` and a ``method`` is a request), as upstream's untagged reader tries them:
    the union accepts exactly what its members accept.
    """

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return _keyed_union(_members(source), handler)


class _Messages:
    """The union of some message types (each a union of envelopes, or one), keyed as
    :class:`ByEnvelope` keys a union."""

    __slots__ = ("_members",)

    def __init__(self, members: tuple[Any, ...]) -> None:
        self._members = members

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return _keyed_union([m for t in self._members for m in _members(t)], handler)


def _keyed_union(
    members: list[Any], handler: GetCoreSchemaHandler
) -> core_schema.CoreSchema:
    """The core schema of :class:`ByEnvelope` for a union of these members."""
    requests, responses, notifications = _by_shape(members)
    choices: list[_Choice] = [
        handler.generate_schema(m) for m in (*requests, *responses, *notifications)
    ]
    whole = core_schema.union_schema(choices, mode="left_to_right")
    keyed: dict[str, core_schema.CoreSchema] = {}
    for method, (request, notification) in _keys(requests, notifications).items():
        ways: list[_Choice] = [
            _keyed(envelope, handler, params, request=envelope is request[0])
            for envelope, params in (request, notification)
            if envelope is not None
        ]
        keyed[method] = core_schema.union_schema(ways, mode="left_to_right")
    if not keyed:
        return whole
    by_method = core_schema.tagged_union_schema(keyed, "method")
    return core_schema.union_schema([by_method, whole], mode="left_to_right")


_Way = tuple[Any, Any]  # (envelope, params type), or (None, None)
_Choice = core_schema.CoreSchema | tuple[core_schema.CoreSchema, str]


def _members(source: Any) -> list[Any]:
    """The types a union annotation holds, through aliases, ``Annotated`` and unions."""
    if type(source).__name__ == "TypeAliasType":  # typing's or typing_extensions'
        return _members(source.__value__)
    origin = get_origin(source)
    if origin is Annotated:
        return _members(get_args(source)[0])
    if origin is Union or type(source).__name__ == "UnionType":
        return [m for arg in get_args(source) for m in _members(arg)]
    return [source]


def _by_shape(members: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """A union's members: request envelopes (an ``id`` and a ``method``), the others
    (responses), notification envelopes (a ``method``, no ``id``), in union order."""
    requests: list[Any] = []
    responses: list[Any] = []
    notifications: list[Any] = []
    for member in dict.fromkeys(members):
        fields = _fields(member)
        if "method" not in fields:
            responses.append(member)
        elif any((f.alias or name) == "id" for name, f in fields.items()):
            requests.append(member)
        else:
            notifications.append(member)
    return requests, responses, notifications


def _fields(member: Any) -> dict[str, Any]:
    if isinstance(member, type) and issubclass(member, BaseModel):
        return member.model_fields
    return {}


def _params_keys(envelope: Any) -> dict[str, Any]:
    params = _fields(envelope).get("params")
    keyed = next(
        (m for m in getattr(params, "metadata", ()) if isinstance(m, ByMethod)), None
    )
    return keyed.models if keyed is not None else {}


def _keys(
    requests: list[Any], notifications: list[Any]
) -> dict[str, tuple[_Way, _Way]]:
    """Method -> (its request envelope and params type, its notification's), where no
    two envelopes of one kind key the method."""
    found: dict[str, list[list[_Way]]] = {}
    for kind, envelopes in enumerate((requests, notifications)):
        for envelope in envelopes:
            for method, params in _params_keys(envelope).items():
                found.setdefault(method, [[], []])[kind].append((envelope, params))
    none: _Way = (None, None)
    return {
        method: (
            request[0] if request else none,
            notification[0] if notification else none,
        )
        for method, (request, notification) in found.items()
        if len(request) <= 1 and len(notification) <= 1
    }


def _keyed(
    envelope: type[BaseModel],
    handler: GetCoreSchemaHandler,
    params: Any,
    *,
    request: bool,
) -> core_schema.CoreSchema:
    """The envelope's model schema with its params read as ``params`` (required); a
    notification's refuses an ``id`` member, which makes a message a request.

    pydantic-core reads a model schema of a class whose own validator is built with that
    validator, whatever the schema says; so the schema names a private subclass, and
    what it reads is made an instance of the envelope itself (one attribute set, no
    copy)."""
    model: Any = handler.resolve_ref_schema(handler.generate_schema(envelope))
    fields = dict(model["schema"]["fields"])
    fields["params"] = {**fields["params"], "schema": handler.generate_schema(params)}
    inner = {**model["schema"], "fields": fields}
    allowed = model.get("config", {}).get("extra_fields_behavior") == "allow"
    if not request and allowed:  # a message with an id is a request
        inner.update(extra_behavior="allow", extras_keys_schema=_NOT_ID)
    copied: Any = {k: v for k, v in model.items() if k not in ("ref", "metadata")}
    copied.update(schema=inner, cls=_unbuilt(envelope))
    return core_schema.no_info_after_validator_function(
        _AsEnvelope(envelope), copied, serialization=model.get("serialization")
    )


_UNBUILT: dict[type[BaseModel], type[BaseModel]] = {}


def _unbuilt(envelope: type[BaseModel]) -> type[BaseModel]:
    """A subclass of ``envelope`` that adds nothing and is never built itself."""
    found = _UNBUILT.get(envelope)
    if found is None:
        namespace = {
            "__module__": envelope.__module__,
            "__qualname__": envelope.__qualname__,
        }
        found = _UNBUILT[envelope] = type(envelope.__name__, (envelope,), namespace)
    return found


class _AsEnvelope:
    """Makes an instance of the private subclass an instance of the envelope (the same
    layout: only its class changes)."""

    __slots__ = ("_envelope",)

    def __init__(self, envelope: type[BaseModel]) -> None:
        self._envelope = envelope

    def __call__(self, read: Any) -> Any:
        object.__setattr__(read, "__class__", self._envelope)
        return read
