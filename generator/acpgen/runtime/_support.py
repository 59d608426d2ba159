"""Reading rules shared by the models of this package.

The schema marks some properties as lenient (``x-deserialize-*``): a peer that sends a
malformed or null value there is tolerated, as upstream's own readers tolerate it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from copy import deepcopy
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    Field,
    GetCoreSchemaHandler,
    TypeAdapter,
    ValidationError,
)
from pydantic.main import IncEx
from pydantic_core import PydanticCustomError, core_schema

__all__ = [
    "ByEnvelope",
    "ByMethod",
    "DefaultOnError",
    "DefaultOnNull",
    "Integral",
    "KeepUnrecognised",
    "MessageReader",
    "NotNull",
    "OmitNone",
    "OrDefault",
    "SkipInvalidItems",
    "StrictJson",
    "TagRouter",
    "WireModel",
]

_ABSENT = object()

# Each rule below is metadata in a field's ``Annotated`` type. It builds the field's
# schema as a union that tries the field's own schema first and falls back to Python
# only when that fails, so valid input is read entirely by pydantic-core: leniency costs
# nothing until it is needed.


def _strip_null(schema: core_schema.CoreSchema) -> core_schema.CoreSchema:
    """The schema without its ``null`` branch (an optional field's ``T | None`` read as
    ``T``)."""
    return schema["schema"] if schema["type"] == "nullable" else schema


def _first_then(
    first: core_schema.CoreSchema, fallback: core_schema.CoreSchema
) -> core_schema.CoreSchema:
    return core_schema.union_schema([first, fallback], mode="left_to_right")


class _Default:
    """What a lenient field reads as: None, or its default validated (a model for an
    object)."""

    __slots__ = ("_adapter", "_raw", "_source")

    def __init__(self, raw: Any, source: Any) -> None:
        self._raw, self._source = raw, source
        self._adapter: TypeAdapter[Any] | None = None

    def __call__(self, _: Any = None) -> Any:
        if self._raw is None:
            return None
        if self._adapter is None:
            self._adapter = TypeAdapter(self._source)
        return self._adapter.validate_python(deepcopy(self._raw))


class DefaultOnError:
    """``x-deserialize-default-on-error``: a value that fails validation reads as the
    default."""

    __slots__ = ("_default",)

    def __init__(self, default: Any = None) -> None:
        self._default = default

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        fallback = core_schema.no_info_plain_validator_function(
            _Default(self._default, source)
        )
        return _first_then(handler(source), fallback)


class DefaultOnNull:
    """``x-deserialize-default-on-null``: ``null`` reads as the default (``[]`` for a
    list)."""

    __slots__ = ("_default",)

    def __init__(self, default: Any = None) -> None:
        self._default = default

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        read_default = core_schema.no_info_plain_validator_function(
            _Default(self._default, source)
        )
        on_null = core_schema.chain_schema([core_schema.none_schema(), read_default])
        return _first_then(_strip_null(handler(source)), on_null)


class SkipInvalidItems:
    """``x-deserialize-skip-invalid-items``: list items that fail validation are
    dropped.

    Only item errors are mended; a value that is not a list at all still fails (and
    reads as the default where the field is also default-on-error).
    """

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        item_types = [
            arg
            for arg in (source, *get_args(source))
            if getattr(arg, "__origin__", None) is list
        ]
        if not item_types:
            return handler(source)
        item_type = get_args(item_types[0])[0]
        items: list[
            TypeAdapter[Any]
        ] = []  # the item reader, built on first use: valid lists never need it

        def mend(value: Any) -> list[Any]:
            if not isinstance(value, list):
                raise PydanticCustomError("list_type", "Input should be a valid list")
            if not items:
                items.append(TypeAdapter(item_type))
            kept = []
            for item in value:
                try:
                    kept.append(items[0].validate_python(item))
                except ValidationError:
                    continue
            return kept

        return _first_then(
            handler(source), core_schema.no_info_plain_validator_function(mend)
        )


def _whole(value: Any) -> Any:
    """An integral float as the integer it is; anything else unchanged, for the schema
    to judge."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


class Integral:
    """An integer may be written as a float with no fraction (``3.0``): JSON has one
    number type, and every JSON reader takes ``3.0`` for the integer 3. Bounds and
    constants still apply, and a fraction is still refused."""

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_before_validator_function(_whole, handler(source))


def _unrecognised(value: Any, handler: core_schema.ValidatorFunctionWrapHandler) -> Any:
    read = handler(value)
    if (
        isinstance(read, BaseModel)
        and isinstance(value, dict)
        and value
        and read.model_fields_set <= (read.__pydantic_extra__ or {}).keys()
    ):
        # no typed member knows any of its members (what it read, it kept as unknown
        # members): the member of any value, whole
        return value
    return read


class KeepUnrecognised:
    """A union of object types with a member of any value (an envelope's ``params``,
    where ``ExtRequest`` takes any JSON): an object of which the typed member read no
    member it names (``{"x": 1}`` read as a ``LogoutRequest``, whose properties are all
    optional, holding ``x`` as an unknown member) is the extension's, kept whole."""

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_wrap_validator_function(
            _unrecognised, handler(source)
        )


class ByMethod:
    """The ``params`` of a message envelope, read as the model of the method the
    envelope names.

    The schema gives an envelope's params as the untagged union of every method's
    params, and several of those models take the same JSON (``{"sessionId": ...}``):
    tried in turn, ``session/close`` params would be read as whichever fits first. Here
    the envelope's ``method`` (read before ``params``) is the key: its model reads the
    params, and what it reads is final (members it does not name are kept on it).
    Params that the method's model refuses are no params of that method: where the
    union has a member of any value (``any_member``: ``ExtRequest``), they are that
    member's, whole, never another method's model; else the union decides. A method it
    does not know and a missing value go on to the union (inside
    :class:`KeepUnrecognised`), so the envelope accepts exactly what the schema's union
    accepts.
    """

    __slots__ = ("_any_member", "_models", "_readers")

    def __init__(self, models: dict[str, Any], *, any_member: bool = False) -> None:
        self._models = models
        self._any_member = any_member
        self._readers: dict[str, Callable[..., Any]] = {}

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.with_info_wrap_validator_function(
            self._read, handler(source)
        )

    def _read(
        self,
        value: Any,
        handler: core_schema.ValidatorFunctionWrapHandler,
        info: core_schema.ValidationInfo,
    ) -> Any:
        data = info.data
        method = data.get("method") if type(data) is dict else None
        if type(value) is dict and type(method) is str:
            reader = self._readers.get(method) or self._reader(method)
            if reader is not None:
                try:
                    return reader(value, context=info.context)
                except ValidationError:
                    if self._any_member:
                        handler(value)  # the union's member of any value takes it
                        return value
        return handler(value)

    def _reader(self, method: str) -> Callable[..., Any] | None:
        """The validator of a method's params (a model, or a union's type alias), built
        on its first use."""
        model = self._models.get(method)
        if model is None:
            return None
        adapter: TypeAdapter[Any] = TypeAdapter(model)
        adapter.rebuild()  # the models defer building their validators
        reader: Callable[..., Any] = adapter.validator.validate_python
        self._readers[method] = reader
        return reader

    @property
    def models(self) -> dict[str, Any]:
        """Method -> the model (or a union's type alias) that reads its params."""
        return self._models


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
        try:
            value = json.loads(line, parse_constant=_not_json)
        except RecursionError:
            raise ValueError("JSON nested too deep") from None
        assert self._validate_python is not None
        return self._validate_python(value)

    def _build(self) -> Callable[..., Any]:
        messages: Any = _Messages(self._members)
        adapter: TypeAdapter[Any] = TypeAdapter(messages)
        self._validate_python = adapter.validator.validate_python
        self._validate_json = adapter.validator.validate_json
        return self._validate_json


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


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
    requests, responses, notifications = [], [], []
    for member in dict.fromkeys(members):
        fields = _fields(member)
        if "method" not in fields:
            responses.append(member)
        elif any(f.alias == "id" for f in fields.values()):
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


# The core schemas that take a ``strict`` setting, and where their inner schemas are.
_STRICT_TYPES = frozenset(
    {
        "bool",
        "dict",
        "float",
        "int",
        "list",
        "nullable",
        "str",
        "tagged-union",
        "union",
        "default",
    }
)
_INNER = ("schema", "items_schema", "keys_schema", "values_schema")


def _strict(schema: Any) -> Any:
    """``schema`` with every scalar and container inside it strict; models keep their
    own config."""
    kind = schema.get("type")
    if kind in ("model", "definition-ref", "definitions"):
        return schema
    out = dict(schema)
    if kind in _STRICT_TYPES and kind != "default":
        out["strict"] = True
    for key in _INNER:
        if isinstance(out.get(key), dict):
            out[key] = _strict(out[key])
    if kind == "union":
        out["choices"] = [
            (_strict(c[0]), c[1]) if isinstance(c, tuple) else _strict(c)
            for c in out["choices"]
        ]
    elif kind == "tagged-union":
        out["choices"] = {
            tag: _strict(choice) for tag, choice in out["choices"].items()
        }
    elif kind == "chain":
        out["steps"] = [_strict(step) for step in out["steps"]]
    return out


class StrictJson:
    """JSON types are read as they are (no ``"1"`` -> 1, no ``true`` -> 1), as in the
    models, whose config is strict: a type alias read on its own
    (``TypeAdapter(RequestId)``) has no config."""

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        strict: core_schema.CoreSchema = _strict(handler(source))
        return strict


class NotNull:
    """An optional property that is not nullable: it may be absent, but ``null`` is
    refused."""

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return _strip_null(handler(source))


def TagRouter(
    wire: str,
    attribute: str,
    known: tuple[str, ...],
    *,
    default: str | None,
    other: str | None,
    malformed: str | None,
) -> Callable[[Any], str | None]:
    """Chooses the branch of a tagged union that is open or has an untagged default
    branch.

    A known tag selects its branch, a missing (or null) tag the default branch, any
    other string the catch-all branch (which keeps the whole payload) or, without one,
    the default branch (which admits any tag, as the schema's untagged branch does). A
    tag that is not a string at all goes to ``malformed``: the default branch where the
    tag itself reads leniently, else where an unknown tag goes. A malformed known branch
    is still an error: it is validated as that branch, never passed to another. With no
    branch to go to, the tag is returned as it is (a string) or None, and pydantic
    reports it with the tags it expects.
    """
    tags = frozenset(known)
    fallback = other if other is not None else default

    def route(value: Any) -> str | None:
        tag = (
            value.get(wire, _ABSENT)
            if isinstance(value, dict)
            else getattr(value, attribute, _ABSENT)
        )
        if tag is _ABSENT or tag is None:
            return default
        if not isinstance(tag, str):
            return malformed
        if tag in tags:
            return tag
        return fallback if fallback is not None else tag

    return route


class OrDefault:
    """A tagged union with an untagged default branch (``AuthMethod``: a terminal
    method, else the agent method): a value that the branch of its known tag refuses is
    read as the default branch when that admits it, as the schema's ``anyOf`` admits it
    (the default branch takes members it does not name, ``type`` among them; upstream's
    readers fall back to the untagged variant likewise). When the default branch
    refuses it too, the error is the known branch's. Valid input never reaches
    Python."""

    __slots__ = ("_default", "_reader")

    def __init__(self, default: Any) -> None:
        self._default = default
        self._reader: Callable[..., Any] | None = None

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.with_info_wrap_validator_function(
            self._read, handler(source)
        )

    def _read(
        self,
        value: Any,
        handler: core_schema.ValidatorFunctionWrapHandler,
        info: core_schema.ValidationInfo,
    ) -> Any:
        try:
            return handler(value)
        except ValidationError:
            if type(value) is not dict:
                raise
            try:
                return (self._reader or self._build())(value, context=info.context)
            except ValidationError:
                pass
            raise

    def _build(self) -> Callable[..., Any]:
        adapter: TypeAdapter[Any] = TypeAdapter(self._default)
        adapter.rebuild()  # the models defer building their validators
        self._reader = adapter.validator.validate_python
        return self._reader


def _is_none(value: Any) -> bool:
    return value is None


OmitNone: Any = Field(exclude_if=_is_none)
"""An optional property that is not nullable holds None when it is absent: None is not
written."""


class WireModel(BaseModel):
    """The base of every model: a dump is the wire JSON, with no argument needed.

    Names are the wire's (``serialize_by_alias`` in each model's config), and only what
    was set is written (``exclude_unset`` defaults to True here): what was read dumps as
    it was read, and defaults the peer did not send stay off the wire. Arguments still
    override both.
    """

    def model_dump(  # the signature of pydantic's, but for the default of exclude_unset
        self,
        *,
        mode: Literal["json", "python"] | str = "python",
        include: IncEx | None = None,
        exclude: IncEx | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        exclude_unset: bool = True,
        exclude_defaults: bool = False,
        exclude_none: bool = False,
        exclude_computed_fields: bool = False,
        round_trip: bool = False,
        warnings: bool | Literal["none", "warn", "error"] = True,
        fallback: Callable[[Any], Any] | None = None,
        serialize_as_any: bool = False,
        polymorphic_serialization: bool | None = None,
    ) -> dict[str, Any]:
        return super().model_dump(
            mode=mode,
            include=include,
            exclude=exclude,
            context=context,
            by_alias=by_alias,
            exclude_unset=exclude_unset,
            exclude_defaults=exclude_defaults,
            exclude_none=exclude_none,
            exclude_computed_fields=exclude_computed_fields,
            round_trip=round_trip,
            warnings=warnings,
            fallback=fallback,
            serialize_as_any=serialize_as_any,
            polymorphic_serialization=polymorphic_serialization,
        )

    # the signature of pydantic's, but for the default of exclude_unset
    def model_dump_json(
        self,
        *,
        indent: int | None = None,
        ensure_ascii: bool = False,
        include: IncEx | None = None,
        exclude: IncEx | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        exclude_unset: bool = True,
        exclude_defaults: bool = False,
        exclude_none: bool = False,
        exclude_computed_fields: bool = False,
        round_trip: bool = False,
        warnings: bool | Literal["none", "warn", "error"] = True,
        fallback: Callable[[Any], Any] | None = None,
        serialize_as_any: bool = False,
        polymorphic_serialization: bool | None = None,
    ) -> str:
        return super().model_dump_json(
            indent=indent,
            ensure_ascii=ensure_ascii,
            include=include,
            exclude=exclude,
            context=context,
            by_alias=by_alias,
            exclude_unset=exclude_unset,
            exclude_defaults=exclude_defaults,
            exclude_none=exclude_none,
            exclude_computed_fields=exclude_computed_fields,
            round_trip=round_trip,
            warnings=warnings,
            fallback=fallback,
            serialize_as_any=serialize_as_any,
            polymorphic_serialization=polymorphic_serialization,
        )
