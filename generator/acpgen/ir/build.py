"""Build the IR (:mod:`acpgen.ir`) from a loaded, validated schema document."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Literal, cast

from acpgen import ir
from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.ir import naming
from acpgen.ir.builders import builders
from acpgen.ir.capabilities import RuleTable, gating
from acpgen.ir.fields import TypeContext, is_integer, is_object_branch, type_fields, types_of
from acpgen.ir.messages import message_unions
from acpgen.ir.requirements import RequirementTable, requirements
from acpgen.ir.session_fold import session_fold
from acpgen.ir.shapes import canonical
from acpgen.ir.writers import writers
from acpgen.load.cycles import check_reference_cycles
from acpgen.load.inventory import (
    Node,
    const_of,
    description,
    enum_values,
    is_catch_all,
    is_unconstrained,
    ref_name,
    references,
    tag_of,
    union_branches,
    variant_key,
    variant_keys,
    variant_payload,
)

_SIDES = frozenset(ir.SIDES)


@dataclasses.dataclass(frozen=True, slots=True)
class Features:
    """What a build holds of the unstable features (from the feature manifest, checked)."""

    names: tuple[str, ...] = ()
    """The features the build holds (none in the stable build, all in the unstable one)."""
    selected: bool = False
    """The build is a selection of features (``--unstable-feature``) rather than all or none."""
    owners: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Unstable item key -> the feature that owns it (every unstable item of the revision)."""


def build_protocol(
    doc: Mapping[str, Any],
    *,
    variant: ir.Variant,
    source: ir.Source,
    protocol_version: int,
    unstable_items: frozenset[str],
    rules: RuleTable | None = None,
    features: Features | None = None,
    experimental: bool = False,
    requirement_table: RequirementTable | None = None,
) -> ir.Protocol:
    """The IR of one protocol variant, whole: its types and methods, the capability rules that apply
    to it (``rules``, checked against it), the features it holds, and the schema nodes the models
    are rendered from. ``unstable_items`` are the keys of the revision that are not stable."""
    try:
        features = features or Features()
        protocol = _build(doc, variant, source, protocol_version, unstable_items, rules, features, experimental)
        return dataclasses.replace(protocol, requirements=requirements(protocol, requirement_table, unstable_items))
    except AcpgenError as error:
        raise AcpgenError(
            *(  # a bare pointer is into the schema file; a place with '#' names its file already
                dataclasses.replace(p, where=f"{source.file}#{p.where}")
                if p.where.startswith("/") and "#" not in p.where
                else p
                for p in error.problems
            )
        ) from None


def _build(
    doc: Mapping[str, Any],
    variant: ir.Variant,
    source: ir.Source,
    protocol_version: int,
    unstable_items: frozenset[str],
    rules: RuleTable | None,
    features: Features,
    experimental: bool,
) -> ir.Protocol:
    defs: Mapping[str, Node] = doc["$defs"]
    check_reference_cycles(defs)
    present = unstable_items & frozenset(_keys_in(defs))
    taken = frozenset(_class_names(defs).values())
    open_defs = frozenset(name for name in defs if is_unconstrained(defs[name]))
    scope = TypeContext(unstable=present, taken=taken, open_defs=open_defs)
    types = tuple(_type(name, defs[name], scope) for name in sorted(defs))
    types = _spread_nested_unions(types, defs, taken)
    _check_unique_class_names(types)
    methods = _methods(defs, present)
    gated = gating(defs, types, methods, rules, unstable_items)
    methods = tuple(dataclasses.replace(m, gate=gated.gates.get((m.wire, m.side))) for m in methods)
    protocol = ir.Protocol(
        variant=variant,
        protocol_version=protocol_version,
        source=source,
        methods=methods,
        types=types,
        unstable_items=present,
        error_codes=_error_codes(defs, present),
        capabilities=gated.capabilities,
        rules=gated.rules,
        informational=gated.informational,
        ungated=gated.ungated,
        features=features.names,
        selected=features.selected,
        feature_of=tuple((key, owner) for key in sorted(present) if (owner := features.owners.get(key)) is not None),
        experimental=experimental,
        writers=writers(methods, types),
        definition_order=tuple(defs),
        root={key: value for key, value in doc.items() if key != "$defs"},
        builders=builders(types, methods),
        messages=message_unions({key: value for key, value in doc.items() if key != "$defs"}, types),
    )
    return dataclasses.replace(protocol, session=session_fold(protocol))


ERROR_CODE_TYPE = "ErrorCode"
"""The definition that lists the protocol's JSON-RPC error codes."""
_BOLD_LEAD = re.compile(r"^\*\*([^*]+)\*\*")


def _error_codes(defs: Mapping[str, Node], unstable: frozenset[str]) -> tuple[ir.ErrorCode, ...]:
    """The constants of ``ErrorCode``, each named from its title (older revisions: the bold lead of
    its description, ``**Parse error**: ...``)."""
    found = union_branches(defs.get(ERROR_CODE_TYPE) or {})
    codes = []
    for branch in found[1] if found else []:
        value = const_of(branch)
        if not isinstance(value, int):
            continue
        text = description(branch)
        lead = _BOLD_LEAD.match(text)
        title = str(branch.get("title") or (lead.group(1) if lead else ""))
        codes.append(
            ir.ErrorCode(
                value=value,
                title=title,
                constant=naming.code_constant(title) if title else "",
                stable=f"value:{ERROR_CODE_TYPE}={value}" not in unstable,
                description=text,
            )
        )
    return tuple(codes)


def _keys_in(defs: Mapping[str, Node]) -> list[str]:
    from acpgen.load.inventory import item_map

    return list(item_map(defs))


MethodRole = Literal["params", "result", "notification"]


def method_definitions(defs: Mapping[str, Node]) -> dict[tuple[str, str, MethodRole], str]:
    """The definitions that carry ``x-method``/``x-side``, by (side, wire name, role).

    The role comes from the definition's name: ``...Response`` is a result, ``...Notification``
    a notification, anything else a request's params.
    """
    found: dict[tuple[str, str, MethodRole], str] = {}
    for name in sorted(defs):
        node = defs[name]
        wire, side = node.get("x-method"), node.get("x-side")
        if wire is None and side is None:
            continue
        where = pointer("$defs", name)
        if not isinstance(wire, str) or not wire or not isinstance(side, str) or side not in _SIDES:
            raise AcpgenError(
                Problem(
                    what=f"definition {name} has x-method {wire!r} and x-side {side!r}",
                    where=where,
                    hint=f"x-method must be a method name and x-side one of {', '.join(ir.SIDES)}; fix the schema.",
                )
            )
        role: MethodRole = (
            "result" if name.endswith("Response") else "notification" if name.endswith("Notification") else "params"
        )
        key = (cast(str, side), wire, role)
        if key in found:
            raise AcpgenError(
                Problem(
                    what=f"duplicate x-method {wire!r} for side {side}: both {found[key]} and {name} are its {role}",
                    where=where,
                    hint="Each method may have one params and one result definition per side; "
                    "rename or remove one of them in the schema.",
                )
            )
        found[key] = name
    return found


def _methods(defs: Mapping[str, Node], unstable: frozenset[str]) -> tuple[ir.Method, ...]:
    """Methods from ``x-method``/``x-side`` on params, result and notification definitions."""
    found = method_definitions(defs)
    methods = []
    for (side, wire, role), params_name in sorted(found.items()):
        if role == "result":
            continue
        result = found.get((side, wire, "result")) if role == "params" else None
        methods.append(
            ir.Method(
                wire=wire,
                side=cast(ir.Side, side),
                kind="notification" if role == "notification" or result is None else "request",
                params=params_name,
                result=result,
                stable=f"method:{side}:{wire}" not in unstable,
                description=description(defs[params_name]),
                python_name=naming.method_name(wire, params_name),
                constant=naming.constant_name(wire),
            )
        )
    _check_constants(methods)
    return _distinct_names(methods)


def _class_names(defs: Mapping[str, Node]) -> dict[str, str]:
    """The class name of every definition; a name with no letter or digit is refused."""
    names: dict[str, str] = {}
    problems = []
    for name in sorted(defs):
        try:
            names[name] = naming.type_class_name(name)
        except naming.NoName:
            problems.append(
                Problem(
                    what=f"definition name {name!r} has no letter or digit to make a class name from",
                    where=pointer("$defs", name),
                    hint="Rename the definition in the schema.",
                )
            )
    if problems:
        raise AcpgenError(*problems)
    return names


def _check_constants(methods: list[ir.Method]) -> None:
    """Two wire names must not spell one constant (``a/b`` and ``a_b`` are both ``A_B``)."""
    wires: dict[str, str] = {}
    for m in methods:
        other = wires.setdefault(m.constant, m.wire)
        if other != m.wire:
            raise AcpgenError(
                Problem(
                    what=f"methods {other!r} and {m.wire!r} would both be named by the constant {m.constant}",
                    where=pointer("$defs", m.params, "x-method"),
                    hint="Rename one of the methods in the schema.",
                )
            )


def _distinct_names(methods: list[ir.Method]) -> tuple[ir.Method, ...]:
    """One side may handle a request and a notification of the same wire name (``proxy/successor``):
    the notification's Python name then ends in ``_notification``. Any other clash is an error."""
    result = []
    for m in methods:
        twins = [o for o in methods if o.side == m.side and o.python_name == m.python_name and o is not m]
        if twins and m.kind == "notification" and all(o.kind == "request" for o in twins):
            m = dataclasses.replace(m, python_name=f"{m.python_name}_notification")
        elif twins and not (m.kind == "request" and all(o.kind == "notification" for o in twins)):
            raise AcpgenError(
                Problem(
                    what=f"methods {m.wire!r} and {twins[0].wire!r} of side {m.side} "
                    f"would both be named {m.python_name!r}",
                    where=pointer("$defs", m.params),
                    hint="Rename one of the params definitions in the schema.",
                )
            )
        result.append(m)
    return tuple(result)


def _type(name: str, node: Node, scope: TypeContext) -> ir.TypeDef:
    cls = naming.type_class_name(name)
    common: dict[str, Any] = {
        "wire": name,
        "class_name": cls,
        "stable": f"type:{name}" not in scope.unstable,
        "description": description(node),
        "shape": canonical(node),
        "declares_properties": isinstance(node.get("properties"), Mapping),
        "references": references(node),
        "node": node,
    }
    values = enum_values(node)
    found = union_branches(node)
    common["union_keyword"] = found[0] if found is not None else None
    scalars = _scalar_variants(name, cls, found[1], scope) if found is not None else ()
    common["integer"] = "integer" in types_of(node) or any(is_integer(b) for b in (found[1] if found else []))
    if values and found is not None and all(const_of(b) is not None or _is_open_scalar(b) for b in found[1]):
        return ir.TypeDef(
            kind="enum",
            enum_values=tuple(str(v) for v, _ in values),
            open=any(_is_open_scalar(b) for b in found[1]),
            variants=scalars,
            **common,
        )
    if isinstance(node.get("enum"), list):
        return ir.TypeDef(kind="enum", enum_values=tuple(str(v) for v in node["enum"]), **common)
    fields = type_fields(name, node, scope)
    if found is not None and any(is_object_branch(b) for b in found[1]):
        return _union(name, cls, node, found[1], fields, scope, common)
    if isinstance(node.get("properties"), Mapping) or node.get("type") == "object":
        return ir.TypeDef(kind="object", fields=fields, **common)
    return ir.TypeDef(kind="alias", variants=scalars, **common)


def _scalar_key(branch: Node, branches: list[Node]) -> str:
    """The key of an untitled branch of a union of scalars: ``other`` for the one branch of an open
    enum that is not a constant (its catch-all, as in unions), else its JSON type when no sibling
    has that type (``integer`` in ``null | integer | string``), else none."""
    if any(const_of(b) is not None for b in branches) and _is_open_scalar(branch):
        return "other"
    types = types_of(branch)
    if len(types) == 1 and all(not (types_of(b) & types) for b in branches if b is not branch):
        return next(iter(types))
    return ""


def _scalar_variants(name: str, cls: str, branches: list[Node], scope: TypeContext) -> tuple[ir.UnionVariant, ...]:
    """The branches of a union of scalars (an open enum, ``RequestId``). A bounded integer that is not a
    constant gets a type alias of its own, named from the branch's title (or ``_scalar_key``);
    constants and plain types are written inline."""
    if any(is_object_branch(b) for b in branches):
        return ()
    variants = []
    for branch, found_key in zip(branches, variant_keys(branches), strict=True):
        key = found_key or _scalar_key(branch, branches)
        hoisted = is_integer(branch) and const_of(branch) is None and ref_name(branch) is None
        if hoisted and not key:
            raise AcpgenError(
                Problem(
                    what=f"union {name} has an integer branch with no title, so it cannot be named",
                    where=pointer("$defs", name),
                    hint="Give the branch a `title` in the schema; names are never taken from positions.",
                )
            )
        variants.append(
            ir.UnionVariant(
                key=key,
                class_name=naming.variant_class_name(key, cls, scope.taken) if hoisted else "",
                tag=None,
                ref=ref_name(branch),
                catch_all=False,
                hoisted=hoisted,
                stable=f"variant:{name}[{key}]" not in scope.unstable,
                description=description(branch),
                shape=canonical(branch),
                payload=variant_payload(branch),
                node=branch,
            )
        )
    return tuple(variants)


def _is_open_scalar(branch: Node) -> bool:
    """The catch-all branch of an open enum: a bare scalar type without a constant."""
    return branch.get("type") in ("string", "integer") and const_of(branch) is None and "properties" not in branch


def _union(
    name: str,
    cls: str,
    node: Node,
    branches: list[Node],
    shared: tuple[ir.Field, ...],
    scope: TypeContext,
    common: dict[str, Any],
) -> ir.TypeDef:
    tags = {t[0] for b in branches if not is_catch_all(b) and (t := tag_of(b)) is not None}
    discriminator = next(iter(tags)) if len(tags) == 1 else None
    keys = variant_keys(branches)
    variants = tuple(  # in order: a branch that cannot be named fails where the loop reaches it
        _variant(
            name,
            cls,
            branch,
            _branch_key(name, node, index, key),
            shared=bool(shared),
            tagged=discriminator is not None,
            scope=scope,
        )
        for index, (branch, key) in enumerate(zip(branches, keys, strict=True))
    )
    return ir.TypeDef(
        kind="union",
        fields=shared,
        variants=variants,
        discriminator=discriminator,
        open=any(v.catch_all for v in variants),
        **common,
    )


def _branch_key(name: str, node: Node, index: int, key: str | None) -> str:
    """The key that names a union branch; a branch with none cannot be named."""
    if key is None:
        raise AcpgenError(
            Problem(
                what=f"union {name} has a branch with no tag, title or reference, so it cannot be named",
                where=pointer("$defs", name, _union_keyword(node), index),
                hint="Give the branch a `title` (or a tag constant) in the schema; "
                "names are never taken from positions.",
            )
        )
    return key


def _variant(
    name: str, cls: str, branch: Node, key: str, *, shared: bool, tagged: bool, scope: TypeContext
) -> ir.UnionVariant:
    """One branch of union ``name`` (class ``cls``); ``shared``: the union has fields of its own;
    ``tagged``: its branches are told apart by one tag property."""
    tag = tag_of(branch)
    catch_all = is_catch_all(branch)
    unconstrained = is_unconstrained(branch)
    adds_nothing = tag is None and not catch_all and not shared and ref_name(branch) is not None
    return ir.UnionVariant(
        key=key,
        class_name=_variant_class(branch, key, cls, scope, unconstrained=unconstrained, adds_nothing=adds_nothing),
        tag=tag[1] if tag is not None and tagged else None,
        ref=ref_name(branch),
        catch_all=catch_all,
        hoisted=not (adds_nothing or unconstrained),
        stable=f"variant:{name}[{key}]" not in scope.unstable,
        description=description(branch),
        fields=type_fields(f"{name}[{key}]", branch, scope),
        shape=canonical(branch),
        payload=variant_payload(branch),
        node=branch,
    )


def _variant_class(
    branch: Node, key: str, cls: str, scope: TypeContext, *, unconstrained: bool, adds_nothing: bool
) -> str:
    """A branch's class: ``Any`` for any value, the referenced type's class for a bare reference,
    else a class of its own named after its key."""
    if unconstrained:
        return "Any"
    if adds_nothing:
        return naming.type_class_name(ref_name(branch) or "")
    return naming.variant_class_name(key, cls, scope.taken)


def _union_keyword(node: Node) -> str:
    return "oneOf" if "oneOf" in node else "anyOf"


def _spread_nested_unions(
    types: tuple[ir.TypeDef, ...], defs: Mapping[str, Node], taken: frozenset[str]
) -> tuple[ir.TypeDef, ...]:
    """Name the classes of tagged branches whose payload is a union (see ``UnionVariant.spread``)."""
    unions = {t.wire: t for t in types if t.kind == "union"}
    result = []
    for t in types:
        if t.kind != "union":
            result.append(t)
            continue
        variants = []
        for v, branch in zip(t.variants, _branches(defs[t.wire]), strict=True):
            inner = unions.get(v.ref or "")
            inline = union_branches(branch)
            if v.hoisted and inner is not None and inner.wire != t.wire:
                subs = [(s.key, s.class_name) for s in inner.variants]
                v = dataclasses.replace(v, spread=_spread_names(subs, v.class_name, taken), spread_from=inner.wire)
            elif v.hoisted and inline is not None and all(ref_name(b) for b in inline[1]):
                subs = [(variant_key(b) or "", naming.type_class_name(ref_name(b) or "")) for b in inline[1]]
                v = dataclasses.replace(v, spread=_spread_names(subs, v.class_name, taken))
            variants.append(v)
        result.append(dataclasses.replace(t, variants=tuple(variants)))
    return tuple(result)


def _branches(node: Node) -> list[Node]:
    found = union_branches(node)
    return found[1] if found is not None else []


def _spread_names(
    subs: list[tuple[str, str]], outer_class: str, taken: frozenset[str]
) -> tuple[tuple[str, str, str], ...]:
    return tuple((key, naming.variant_class_name(key, outer_class, taken), base) for key, base in subs)


def _check_unique_class_names(types: tuple[ir.TypeDef, ...]) -> None:
    owners: dict[str, tuple[str, str]] = {}
    for t in types:
        where = pointer("$defs", t.wire)
        names = [(t.class_name, t.wire)]
        names += [(v.class_name, f"branch {v.key!r} of {t.wire}") for v in t.variants if v.hoisted]
        names += [(c, f"branch {k!r} of branch {v.key!r} of {t.wire}") for v in t.variants for k, c, _ in v.spread]
        for cls, label in names:
            if cls in owners and owners[cls][0] != label:
                raise AcpgenError(
                    Problem(
                        what=f"two types would get the same Python name {cls!r}: {owners[cls][0]} and {label}",
                        where=where,
                        hint="Rename one of the definitions (or give the union branch another title) in the schema.",
                    )
                )
            owners[cls] = (label, where)
