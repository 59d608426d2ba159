"""Reading rules shared by the models of this package.

The schema marks some properties as lenient (``x-deserialize-*``): a peer that sends a
malformed or null value there is tolerated, as upstream's own readers tolerate it.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from inspect import signature
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import VERSION as PYDANTIC_VERSION
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    TypeAdapter,
    ValidationError,
)
from pydantic.main import IncEx
from pydantic_core import PydanticCustomError, core_schema

from .rpc import Json

__all__ = [
    "ByMethod",
    "DefaultOnError",
    "DefaultOnNull",
    "Integral",
    "KeepUnrecognised",
    "NotNull",
    "OmitNone",
    "OrDefault",
    "SkipInvalidItems",
    "StrictJson",
    "TagRouter",
    "WireModel",
    "empty_list",
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

        def mend(value: Json) -> list[Any]:
            if not isinstance(value, list):
                raise PydanticCustomError("list_type", "Input should be a valid list")
            if not items:
                items.append(TypeAdapter(item_type))
            kept: list[Any] = []
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


def _unrecognised(
    value: Json, handler: core_schema.ValidatorFunctionWrapHandler
) -> Any:
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
        value: Json,
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

    def route(value: Json | BaseModel) -> str | None:
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


def empty_list() -> list[Any]:
    """A new empty list: the default of a list field (``default_factory=list`` reads, to
    pyright's strict mode, as a list of items of unknown type)."""
    return []


def _is_none(value: Any) -> bool:
    return value is None


OmitNone: Any = Field(exclude_if=_is_none)
"""An optional property that is not nullable holds None when it is absent: None is not
written."""


def _polymorphic_refused() -> TypeError:
    return TypeError(
        "polymorphic_serialization needs pydantic >= 2.13,"
        f" and pydantic {PYDANTIC_VERSION} is installed"
    )


if (
    TYPE_CHECKING
    or "polymorphic_serialization" in signature(BaseModel.model_dump).parameters
):
    _Dumps = BaseModel
else:

    class _Dumps(BaseModel):
        """pydantic 2.12, which lacks ``polymorphic_serialization`` (2.13): the dumps
        take it, refuse it when given, and pass on the rest."""

        def model_dump(
            self, *, polymorphic_serialization: bool | None = None, **options: Any
        ) -> dict[str, Any]:
            if polymorphic_serialization is not None:
                raise _polymorphic_refused()
            return super().model_dump(**options)

        def model_dump_json(
            self, *, polymorphic_serialization: bool | None = None, **options: Any
        ) -> str:
            if polymorphic_serialization is not None:
                raise _polymorphic_refused()
            return super().model_dump_json(**options)


class WireModel(_Dumps):
    """The base of every model: it reads the wire as JSON, keeps what it does not name,
    and a dump is the wire JSON, with no argument needed.

    Its config, which every model inherits: members the schema does not name are kept
    and written back (``extra="allow"``; a model whose schema refuses them says so in a
    config of its own); values are read as JSON types (``strict``: no ``"yes"`` for
    ``True``; no NaN or infinity, which JSON does not have); constructors take the
    Python attribute names as well as the wire names; a model's validator is built when
    first used (``defer_build``), so importing the models costs little.

    Names are the wire's (``serialize_by_alias``), and only what
    was set is written (``exclude_unset`` defaults to True here): what was read dumps as
    it was read, and defaults the peer did not send stay off the wire. Arguments still
    override both.

    The signatures are the newest pydantic's; on pydantic 2.12, which lacks
    ``polymorphic_serialization``, a dump without it works all the same (``_Dumps``),
    and a type checker, which knows only the installed pydantic's signatures, accepts
    the calls of its dumps (made through ``Callable[..., ...]``) on every supported one.
    """

    model_config = ConfigDict(
        extra="allow",
        strict=True,
        allow_inf_nan=False,
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        defer_build=True,
    )

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
        dump: Callable[..., dict[str, Any]] = super().model_dump  # (see _Dumps)
        return dump(
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
        dump: Callable[..., str] = super().model_dump_json  # (see _Dumps)
        return dump(
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
