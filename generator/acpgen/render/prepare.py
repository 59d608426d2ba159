"""Prepare datamodel-code-generator's input from the schema and the IR.

datamodel-code-generator renders the models; we never edit what it writes. Instead this
module hands it a schema in the shape that yields faithful models, plus per-class template
data that our model templates (``templates/models/``) lay out. Every decision is read from the
IR (which types are unions, which branches get classes and their names, tags, reading rules,
stability); the schema's own property schemas are passed on as datamodel-code-generator's input
language. The Python expressions the templates print (reading rules, default factories, routed
annotations) are values of :mod:`acpgen.render.expressions`, never text pasted together:

- union branches that add something to the type they refer to (a tag, shared fields), and the
  bounded integer branches of unions of scalars (``RequestId``), become named definitions, named
  by :mod:`acpgen.ir.naming` from their tag or title, never their position;
- closed tagged unions get a ``discriminator`` with an explicit mapping;
- extensible unions and unions with an untagged default branch get a routing annotation
  (``acp_annotation``) that sends unknown tags to the catch-all and a missing tag to the default;
- integer ``format`` values get their bounds; unstable items get a visible marker; nullable maps
  get typed values; an object type with no properties keeps its members;
- fields get reading rules (``acp_field_meta``): the ``x-deserialize-*`` keywords, "null is not
  allowed" for optional fields that are not nullable (whose None is then never written),
  integers from integral floats; type aliases get theirs (``acp_alias_rules``): JSON types read
  strictly on their own;
- every model that extends no other extends ``WireModel`` (``acp_root_base``), whose config every
  model inherits (unknown members kept, JSON types read strictly): a class gets a config of its own
  only where its schema differs (``additionalProperties: false``); dumps are the wire.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from acpgen import ir
from acpgen.ir import naming
from acpgen.ir.shapes import INTEGER_BOUNDS
from acpgen.render import message_unions
from acpgen.render.expressions import Annotated, Call, Lambda, Name, names
from acpgen.render.unstable import UNSTABLE_NOTE

ROOT_BASE = "WireModel"
"""The base of every model that extends no other (the runtime's ``wire.model_rules``): its config is
every model's (members the schema does not name kept, values read as JSON types, names both ways,
validators built when first used), and dumps are the wire."""
INHERITED_CONFIG = {"extra": "'allow'"}
"""What datamodel-code-generator may write into a class's config that ``WireModel`` already sets, as
it writes it: a class whose schema allows unknown members states nothing of its own."""
SUPPORT_RULES = frozenset({"OrDefault", "TagRouter"})
MESSAGE_RULES = frozenset({"ByEnvelope"})
"""The reading rules of the package's ``_messages`` module (the others are ``_support``'s)."""
"""The names of the package's ``_support`` a routed union's annotation uses."""
DEFAULT_TAG = "<default>"
OTHER_TAG = "<other>"


@dataclass(frozen=True, slots=True)
class ModelInput:
    """Everything datamodel-code-generator needs beside its fixed settings."""

    schema: dict[str, Any]
    template_data: dict[str, dict[str, Any]]
    aliases: dict[str, str]
    support_names: tuple[str, ...]
    """Names the models module imports from the package's ``_support`` module."""
    pydantic_names: tuple[str, ...] = field(default=())
    message_names: tuple[str, ...] = field(default=())
    """Names the models module imports from the package's ``_messages`` module."""
    typing_names: tuple[str, ...] = field(default=())
    """Names the models module imports from ``typing`` for what our templates write (datamodel-code-generator
    imports only what its own text needs: ``Annotated`` where a field has a ``Field(...)``)."""


def prepare(protocol: ir.Protocol) -> ModelInput:
    """The input of datamodel-code-generator for one protocol variant: the schema's definitions as
    the IR keeps them (:attr:`acpgen.ir.TypeDef.node`), prepared."""
    nodes = {t.wire: t.node for t in protocol.types}
    # a deep copy (as fast as the C JSON codec, many times faster than ``copy.deepcopy``): the IR is read-only
    defs: dict[str, Any] = json.loads(json.dumps({name: nodes[name] for name in protocol.definition_order}))
    template_data: dict[str, dict[str, Any]] = {
        "#all#": {"acp_root_base": ROOT_BASE, "acp_inherited_config": INHERITED_CONFIG}
    }
    aliases: dict[str, str] = {}
    support: set[str] = {ROOT_BASE}
    pydantic: set[str] = set()
    unstable = protocol.variant == "unstable"
    for t in protocol.types:
        node = defs[t.wire]
        if unstable and not t.stable:
            _mark(node)
        if t.kind == "union":
            _hoist_union(t, node, defs, template_data, support, pydantic, unstable, protocol)
        elif any(v.hoisted for v in t.variants):
            _hoist_scalars(t, node, defs, template_data, unstable)
        if t.kind == "object" and not t.fields and node.get("additionalProperties") is None:
            node["additionalProperties"] = True  # no properties: every member is the object's own
        if t.kind != "object":
            template_data.setdefault(t.class_name, {})["acp_alias_rules"] = alias_rules(t.integer)
            support.update(("StrictJson", *(("Integral",) if t.integer else ())))
        for holder, f in held_fields(t):
            if f.attr != f.wire:  # a field named as on the wire needs no alias: its Field(...) is one less at import
                aliases.setdefault(f"{holder}.{f.wire}", f.attr)
            if rules := field_rules(f, method_keys(t, f, protocol)):
                template_data.setdefault(holder, {}).setdefault("acp_field_meta", {})[f.wire] = rules
                support.update(name for rule in rules for name in names(rule))
            if (default := _model_default(f, protocol)) is not None:
                template_data.setdefault(holder, {}).setdefault("acp_field_default", {})[f.wire] = default
                support.update(names(default) & {EMPTY_LIST})
        if unstable:
            _mark_unstable_members(t, node, protocol)
        if t.kind == "enum":
            _merge_constants(t, node)
    _bound_integers(defs)
    _type_nullable_maps(defs)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}
    schema.update(_message_unions(defs, protocol, template_data, support))
    return ModelInput(
        schema=schema,
        template_data=template_data,
        aliases=dict(sorted(aliases.items())),
        support_names=tuple(sorted(support - MESSAGE_RULES)),
        pydantic_names=tuple(sorted(pydantic)),
        message_names=tuple(sorted(support & MESSAGE_RULES)),
        # every annotation we write (a field's or an alias's reading rules, a routed union) holds a rule
        typing_names=("Annotated",) if support - {ROOT_BASE} else (),
    )


def held_fields(t: ir.TypeDef) -> list[tuple[str, ir.Field]]:
    """Every (model class, field) a type gives: an object's fields; for a union, the shared fields and
    the branch's own on the class of each hoisted branch (on each class a branch is spread into)."""
    if t.kind == "object":
        return [(t.class_name, f) for f in t.fields]
    held = []
    for v in t.variants:
        if v.hoisted and t.kind == "union":
            classes = [name for _, name, _ in v.spread] or [v.class_name]
            held += [(name, f) for name in classes for f in (*v.fields, *t.fields)]
    return held


def _mark_unstable_members(t: ir.TypeDef, node: dict[str, Any], protocol: ir.Protocol) -> None:
    """The unstable marker on the unstable fields and enum values of a stable type."""
    if not t.stable:
        return
    props = node.get("properties")
    for f in t.fields:
        if not f.stable and isinstance(props, dict) and isinstance(props.get(f.wire), dict):
            _mark(props[f.wire])
    values = [v for v in t.enum_values if f"value:{t.wire}={v}" in protocol.unstable_items]
    if t.kind == "enum" and values:
        marked = f"{ir.UNSTABLE_MARKER} values: " + ", ".join(values) + "."
        node["description"] = _joined(node.get("description"), marked)


def field_rules(f: ir.Field, by_method: Mapping[str, str] | None = None) -> tuple[Call | Name, ...]:
    """The reading rules of a field, as the metadata expressions its annotation carries.

    Order matters: the last one is the outermost, so ``DefaultOnError`` sees what
    ``SkipInvalidItems`` could not mend, and ``DefaultOnNull`` sees the raw value first. ``NotNull``
    (an optional property that is not nullable, whose Python type admits None for "absent") is
    innermost, so that a lenient field reads ``null`` as a malformed value, as the schema says.
    ``by_method`` (an envelope's params: method -> model class, :func:`method_keys`) reads the
    params by the envelope's method, outside ``KeepUnrecognised``: what the method's model reads
    is final; ``KeepUnrecognised`` judges what the union reads.
    """
    rules: list[Call | Name] = []
    default = _default_value(f)
    given = () if default is _NONE else (default,)
    if not f.required and not f.nullable and f.default_json is None and not f.lenience.default_on_null:
        rules.append(Call("NotNull"))  # innermost: it must see the field's `T | None` itself
    if f.integer:
        rules.append(Call("Integral"))
    if f.lenience.skip_invalid_items:
        rules.append(Call("SkipInvalidItems"))
    if f.lenience.default_on_error and (default is not _NONE or not f.required):
        rules.append(Call("DefaultOnError", given))
    if f.lenience.default_on_null and not f.nullable:
        rules.append(Call("DefaultOnNull", given))
    if f.extensible:
        rules.append(Call("KeepUnrecognised"))
    if by_method:
        keyed = {method: Name(cls) for method, cls in by_method.items()}
        rules.append(Call("ByMethod", (keyed,), (("any_member", True),) if f.extensible else ()))
    if not f.required and not f.nullable and f.default_json is None:
        rules.append(Name("OmitNone"))  # its None means absent: never written as null
    return tuple(rules)


def method_keys(t: ir.TypeDef, f: ir.Field, protocol: ir.Protocol) -> dict[str, str]:
    """For the ``params`` of a message envelope (an object with a string ``method`` and params
    that are a union of methods' params types, or one such type): each method of the envelope's
    kind (a request when it has an ``id``) whose params type is a branch of that union -> its
    params class."""
    wires = {g.wire: g for g in t.fields}
    method = wires.get("method")
    if t.kind != "object" or f.wire != "params" or method is None or method.shape.get("type") != "string":
        return {}
    branches = {b.get("ref") for b in f.shape.get("union", ())} | {f.shape.get("ref")}
    kind = "request" if "id" in wires else "notification"
    return {
        m.wire: protocol.type(m.params).class_name
        for m in sorted(protocol.methods, key=lambda m: m.wire)
        if m.kind == kind and m.params in branches
    }


def alias_rules(integer: bool) -> tuple[Call, ...]:
    """The reading rules of a type alias (``RequestId``, ``ErrorCode``, a union): a TypeAdapter of an
    alias has no model config, so the alias itself reads JSON types strictly; integers also read
    from integral floats."""
    return (Call("Integral"), Call("StrictJson")) if integer else (Call("StrictJson"),)


def _model_default(f: ir.Field, protocol: ir.Protocol) -> Call | None:
    """A default that must be made anew for each instance: an object default of a model-typed
    field, built as a model instance; an empty list or map (never one shared, mutable object)."""
    if f.default_json is None:
        return None
    target = protocol.type(f.ref) if f.ref is not None else None
    if target is not None and target.kind == "object" and f.default_json.startswith("{"):
        build = Call(f"{target.class_name}.model_validate", (json.loads(f.default_json),))
        return Call("Field", keywords=(("default_factory", Lambda(build)),))
    empty = _EMPTY_FACTORIES.get(f.default_json)
    return Call("Field", keywords=(("default_factory", Name(empty)),)) if empty else None


EMPTY_LIST = "empty_list"
"""The runtime's factory of an empty list (``model_rules.empty_list``): pyright --strict reads
``default_factory=list`` as a list of unknown items whatever the field's type, and a consumer's
linter refuses ``lambda: []``."""
_EMPTY_FACTORIES = {"[]": EMPTY_LIST, "{}": "dict"}
_NONE: Any = object()
"""No default: a lenient field reads a bad or null value as absent (None)."""


def _default_value(f: ir.Field) -> Any:
    """What a lenient field reads as: the schema's default, else the empty value of an array
    (``[]``) or a map (``{}``) that is not nullable, else ``_NONE`` (absent, or null)."""
    if f.default_json is not None:
        return json.loads(f.default_json)
    if f.is_array and not f.nullable:
        return []
    if f.is_map and not f.nullable:
        return {}
    return _NONE


def _hoisted_branch(
    variant: ir.UnionVariant, branch: Mapping[str, Any], node: Mapping[str, Any], unstable: bool
) -> dict[str, Any]:
    """A union branch as a definition of its own: with the union's shared properties, an object."""
    hoisted = {k: copy.deepcopy(v) for k, v in branch.items() if k not in ("not", "title")}
    shared_props = node.get("properties") or {}
    if shared_props:
        hoisted["properties"] = {**copy.deepcopy(shared_props), **hoisted.get("properties", {})}
        hoisted["required"] = sorted(set(node.get("required") or []) | set(hoisted.get("required", [])))
    hoisted.setdefault("type", "object")
    if unstable and not variant.stable:
        _mark(hoisted)
    if variant.catch_all:
        hoisted["additionalProperties"] = True  # the catch-all keeps the whole payload
    return hoisted


def _hoist_union(
    t: ir.TypeDef,
    node: dict[str, Any],
    defs: dict[str, Any],
    template_data: dict[str, dict[str, Any]],
    support: set[str],
    pydantic: set[str],
    unstable: bool,
    protocol: ir.Protocol,
) -> None:
    keyword = t.union_keyword
    assert keyword is not None
    refs = []
    for variant in t.variants:
        if not variant.hoisted:
            refs.append({"$ref": f"#/$defs/{variant.ref}"} if variant.ref else {})
            continue
        hoisted = _hoisted_branch(variant, variant.node, node, unstable)
        if variant.spread:
            inner = protocol.type(variant.spread_from) if variant.spread_from else None
            hoisted = _spread(variant, inner, hoisted, defs, template_data)
        defs[variant.class_name] = hoisted
        refs.append({"$ref": f"#/$defs/{variant.class_name}"})
    replacement: dict[str, Any] = {k: v for k, v in node.items() if k in ("description",)}
    closed = t.discriminator is not None and all(v.tag is not None and not v.spread for v in t.variants)
    if closed:
        replacement["oneOf"] = refs
        replacement["discriminator"] = {
            "propertyName": t.discriminator,
            "mapping": {v.tag: f"#/$defs/{v.class_name}" for v in t.variants},
        }
    else:
        replacement[keyword] = refs
        if t.discriminator is not None:
            template_data.setdefault(t.class_name, {})["acp_annotation"] = _routed_annotation(t)
    for name in (t.class_name, *(v.class_name for v in t.variants)):
        if (annotation := template_data.get(name, {}).get("acp_annotation")) is not None:
            support.update(names(annotation) & SUPPORT_RULES)
            pydantic.update(("Discriminator", "Tag"))
    node.clear()
    node.update(replacement)


def _merge_constants(t: ir.TypeDef, node: dict[str, Any]) -> None:
    """The constant branches of an enum spelled as a union become one ``enum`` branch, so that
    the model reads ``Literal["a", "b"] | str`` rather than ``Literal["a"] | Literal["b"] | str``
    (the same values; linters in a consumer's project flag the second spelling)."""
    keyword = t.union_keyword
    if keyword is None:
        return
    branches = node[keyword]
    constants = [b for b in branches if isinstance(b, dict) and "const" in b and set(b) <= _CONSTANT_KEYS]
    types = {json.dumps(b.get("type")) for b in constants}
    if len(constants) < 2 or len(types) != 1:
        return
    merged = {"type": constants[0].get("type"), "enum": [b["const"] for b in constants]}
    merged = {key: value for key, value in merged.items() if value is not None}
    first = branches.index(constants[0])
    rest = [b for b in branches if not any(b is c for c in constants)]
    node[keyword] = [*rest[:first], merged, *rest[first:]]


_CONSTANT_KEYS = frozenset({"const", "type", "format", "title", "description"})


def _hoist_scalars(
    t: ir.TypeDef,
    node: dict[str, Any],
    defs: dict[str, Any],
    template_data: dict[str, dict[str, Any]],
    unstable: bool,
) -> None:
    """Give the bounded integer branches of a union of scalars a named definition (``RequestId``'s
    ``Number`` -> ``NumberRequestId``), which datamodel-code-generator would otherwise number."""
    keyword = t.union_keyword
    assert keyword is not None
    variants = {id(variant.node): variant for variant in t.variants}  # the IR's branches are its node's
    replaced = []
    for written, branch in zip(t.node[keyword], node[keyword], strict=True):
        variant = variants.get(id(written))
        if variant is None or not variant.hoisted:
            replaced.append(branch)
            continue
        named = {k: copy.deepcopy(v) for k, v in branch.items() if k != "title"}
        if unstable and not variant.stable:
            _mark(named)
        defs[variant.class_name] = named
        template_data.setdefault(variant.class_name, {})["acp_alias_rules"] = alias_rules(True)
        replaced.append({"$ref": f"#/$defs/{variant.class_name}"})
    node[keyword] = replaced


def _spread(
    variant: ir.UnionVariant,
    inner: ir.TypeDef | None,
    hoisted: dict[str, Any],
    defs: dict[str, Any],
    template_data: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """Split a tagged branch whose payload is a union: one class per branch of that union.

    Each class extends the sub-branch's class with what the tagged branch adds (its tag, shared
    fields); the tagged branch becomes the union of those classes, routed as ``inner`` is.
    """
    own = {k: v for k, v in hoisted.items() if k in ("properties", "required", "additionalProperties")}
    refs = []
    for _, class_name, base in variant.spread:
        defs[class_name] = {
            "type": "object",
            "description": hoisted.get("description", ""),
            "allOf": [{"$ref": f"#/$defs/{base}"}],
            **copy.deepcopy(own),
        }
        refs.append({"$ref": f"#/$defs/{class_name}"})
    if inner is not None and inner.discriminator is not None:
        renamed = tuple(
            dataclasses.replace(sub, class_name=class_name)
            for (_, class_name, _), sub in zip(variant.spread, inner.variants, strict=True)
        )
        annotation = _routed_annotation(dataclasses.replace(inner, variants=renamed))
        template_data.setdefault(variant.class_name, {})["acp_annotation"] = annotation
    return {"description": hoisted.get("description", ""), "anyOf": refs}


def _routed_annotation(t: ir.TypeDef) -> Annotated:
    """``Annotated[A | B | ..., Discriminator(TagRouter(...))]`` for an open or defaulted union."""
    members = []
    known: dict[str, str] = {}
    default = other = None
    for v in t.variants:
        if v.catch_all:
            tag = other = OTHER_TAG
        elif v.tag is None:
            tag = default = DEFAULT_TAG
        else:
            tag = known[v.tag] = v.tag
        members.append(Annotated(members=(Name(v.class_name),), metadata=(Call("Tag", (tag,)),)))
    assert t.discriminator is not None
    malformed = default if _lenient_tag(t) else other if other is not None else default
    router = Call(
        "TagRouter",
        (t.discriminator, naming.snake(t.discriminator), tuple(sorted(known))),
        (("default", default), ("other", other), ("malformed", malformed)),
    )
    metadata = [Call("Discriminator", (router,))]
    default_class = next((v.class_name for v in t.variants if v.tag is None and not v.catch_all), None)
    if default_class is not None:  # a known variant its branch refuses may be the default branch's
        metadata.append(Call("OrDefault", (Name(default_class),)))
    return Annotated(members=tuple(members), metadata=tuple(metadata))


def _lenient_tag(t: ir.TypeDef) -> bool:
    """The union's tag is a shared property read leniently: a malformed tag means no tag."""
    return any(f.wire == t.discriminator and f.lenience.default_on_error for f in t.fields)


def _message_unions(
    defs: dict[str, Any],
    protocol: ir.Protocol,
    template_data: dict[str, dict[str, Any]],
    support: set[str],
) -> dict[str, Any]:
    """The schema's top-level message unions (:mod:`acpgen.render.message_unions`) added to the
    definitions and template data; the root schema (``AcpMessage``)."""
    top = message_unions.root(protocol)
    defs.update(top.definitions)
    for name, data in top.template_data.items():
        template_data.setdefault(name, {}).update(data)
        support.update(n for value in data.values() for n in _names_in(value))
    return top.schema


def _names_in(value: Any) -> set[str]:
    """The names the expressions of some template data use (a rule, rules, rules by field)."""
    if isinstance(value, Mapping):
        return set().union(*(_names_in(v) for v in value.values()))
    if isinstance(value, tuple | list):
        return set().union(*(_names_in(v) for v in value))
    return names(value)


def _mark(node: dict[str, Any]) -> None:
    """Prefix a description with the unstable marker unless upstream already did."""
    text = node.get("description")
    if not isinstance(text, str) or ir.UNSTABLE_MARKER not in text:
        node["description"] = _joined(UNSTABLE_NOTE, text)


def _joined(first: Any, second: Any) -> str:
    return "\n\n".join(p for p in (first, second) if isinstance(p, str) and p)


def _bound_integers(node: Any) -> None:
    """Add ``minimum``/``maximum`` from integer ``format`` values wherever the schema omits them."""
    if isinstance(node, dict):
        fmt = node.get("format")
        bounds = INTEGER_BOUNDS.get(fmt) if isinstance(fmt, str) and "const" not in node else None
        types = node.get("type")
        if bounds is not None and (types == "integer" or (isinstance(types, list) and "integer" in types)):
            node.setdefault("minimum", bounds[0])
            node.setdefault("maximum", bounds[1])
        for value in node.values():
            _bound_integers(value)
    elif isinstance(node, list):
        for value in node:
            _bound_integers(value)


def _type_nullable_maps(node: Any) -> None:
    """``"type": ["object", "null"]`` with typed ``additionalProperties`` as ``anyOf: [map, null]``, whose
    values datamodel-code-generator then types (it reads the first spelling as ``dict[str, Any]``)."""
    if isinstance(node, dict):
        types = node.get("type")
        extra = node.get("additionalProperties")
        typed_map = isinstance(extra, dict) and not node.get("properties")
        if typed_map and isinstance(types, list) and set(types) == {"object", "null"}:
            del node["type"], node["additionalProperties"]
            node["anyOf"] = [{"type": "object", "additionalProperties": extra}, {"type": "null"}]
        for value in node.values():
            _type_nullable_maps(value)
    elif isinstance(node, list):
        for value in node:
            _type_nullable_maps(value)
