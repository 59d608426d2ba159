"""One side of a diff: every item of a revision, read from the IR of its two builds.

A revision is loaded and built exactly as ``acpgen generate`` builds it (:class:`acpgen.pipeline.
Revision`): its stable build and its unstable build, two IRs. An item is *stable* when the stable
build has it, else *unstable*; its facts (wire shape, required, default, lenient-reading keywords,
generated names) are taken from the build that defines it as such. Items are keyed as in
:mod:`acpgen.load.inventory`, plus the fields of inline union variants
(``field:SessionUpdate[plan].entries``). Which side writes each type is the IR's too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from acpgen import ir
from acpgen.features.manifest import MANIFEST_FILE
from acpgen.ir.session_fold import UNION
from acpgen.ir.writers import BOTH, CALLERS
from acpgen.load.inventory import DEFAULT_ON_ERROR, DEFAULT_ON_NULL, SKIP_INVALID_ITEMS, item_owner
from acpgen.pipeline import Revision, SchemaFile

Stability = Literal["stable", "unstable"]
Writer = ir.Owner

NameKind = Literal["builder", "state property", "tracker", "message class"]
NAME_KINDS: tuple[NameKind, ...] = ("builder", "state property", "tracker", "message class")

__all__ = [
    "BOTH",
    "CALLERS",
    "NAME_KINDS",
    "GeneratedName",
    "Item",
    "Method",
    "NameKind",
    "Snapshot",
    "Writer",
    "from_revision",
    "snapshot",
]


@dataclass(frozen=True, slots=True)
class Method:
    """A wire method as the diff sees it."""

    wire: str
    side: str
    kind: Literal["request", "notification"]
    params: str
    result: str | None
    python_name: str


@dataclass(frozen=True, slots=True)
class Item:
    """One item of a revision, with the facts the comparison reads."""

    key: str
    stability: Stability
    shape: ir.Shape
    required: bool = False
    """For a field: whether its owner requires it."""
    default_json: str | None = None
    """For a field: the schema's default, as JSON text."""
    lenience: frozenset[str] = frozenset()
    """For a field: the lenient-reading keywords it carries."""
    payload: str | None = None
    """For a union variant: the type it carries."""
    name: str | None = None
    """The generated name users import: a type's or variant's class, a field's attribute."""
    definition: ir.TypeDef | None = None
    """For a type: its definition, in the build the item is taken from."""


@dataclass(frozen=True, slots=True)
class GeneratedName:
    """A name users import or call that no item carries: a builder function, a ``SessionState``
    property, a tracker class, a message union's class (all decided in :mod:`acpgen.ir.naming`)."""

    kind: NameKind
    identity: tuple[str, ...]
    """What it names, in the schema's terms (type names, variant keys): the same on both sides of a
    rename (the old side's type names are read through the type renames before comparing)."""
    name: str
    item: str
    """The item a change of the name is reported on."""
    stability: Stability


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything the comparison reads from one revision."""

    label: str
    items: Mapping[str, Item]
    types: Mapping[str, ir.TypeDef]
    """The widest set of definitions (the unstable build's), by wire name."""
    methods: Mapping[tuple[str, str, str], Method]
    """By (side, wire name, kind): one side may handle a request and a notification of one name."""
    writers: Mapping[str, frozenset[Writer]]
    """Type name -> the sides that write it (both when no method reaches it)."""
    rules: Mapping[str, Mapping[str, Any]] | None
    """The capability rule table by subject (``method:session/load``), if the revision has one."""
    features: Mapping[str, frozenset[str]] | None = None
    """The unstable features of its manifest, by name, with the item keys each owns, if the
    revision has a manifest (read as far as it matches the schema)."""
    owners: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Unstable item key -> the feature that owns it."""
    names: tuple[GeneratedName, ...] = ()
    """The generated names items do not carry, from both builds (the stable build's first)."""

    def feature_of(self, key: str) -> str | None:
        """The feature that owns an item: the item's own entry, else the union variant or the
        type that holds it (``field:SessionUpdate[plan].entries`` belongs where the variant does)."""
        candidates = [key]
        if key.startswith("field:") and "[" in key:
            candidates.append("variant:" + key.split(":", 1)[1].split("]", 1)[0] + "]")
        if key.split(":", 1)[0] in ("field", "variant", "value"):
            candidates.append(f"type:{item_owner(key)}")
        return next((self.owners[c] for c in candidates if c in self.owners), None)

    def writers_of(self, type_name: str) -> frozenset[Writer]:
        return self.writers.get(type_name, BOTH)

    @property
    def shapes(self) -> dict[str, ir.Shape]:
        """Every definition's wire shape, by name (what references expand to)."""
        return {name: t.shape for name, t in self.types.items()}


def snapshot(
    label: str,
    stable_doc: Mapping[str, Any],
    unstable_doc: Mapping[str, Any] | None,
    rules: Mapping[str, Any] | None = None,
    features: Mapping[str, Any] | None = None,
    features_origin: str = MANIFEST_FILE,
) -> Snapshot:
    """The snapshot of two loaded schema documents (without an unstable one, its unstable items
    are the marked ones), built as ``generate`` builds them, with the feature manifest if given."""
    source = ir.Source(package="local", version=label, file="schema.json", sha256="")
    stable = SchemaFile(doc=dict(stable_doc), source=source)
    unstable = SchemaFile(doc=dict(unstable_doc), source=source) if unstable_doc is not None else None
    revision = Revision(
        stable=stable, unstable=unstable, protocol_version=1, features=features, features_origin=features_origin
    )
    return from_revision(label, revision, rules)


def from_revision(label: str, revision: Revision, rules: Mapping[str, Any] | None = None) -> Snapshot:
    """The snapshot of a revision: the items of its two builds, the widest build's types, and
    the features of its manifest as far as the manifest matches the schema."""
    bare = dataclasses.replace(revision, rules=None, features=None)  # the manifest is read leniently below
    stable_build = bare.protocol("stable")
    widest = bare.protocol("unstable")
    items = {item.key: item for item in _items(stable_build, "stable")}
    for item in _items(widest, "unstable"):
        items.setdefault(item.key, item)
    manifest = revision.manifest(strict=False)
    features = {f.name: f.owns for f in manifest.features} if manifest is not None else None
    return Snapshot(
        label=label,
        items=dict(sorted(items.items())),
        types={t.wire: t for t in widest.types},
        methods=_methods(widest),
        writers=widest.writers,
        rules=_rules_by_subject(rules),
        features=features,
        owners={key: name for name, owned in sorted((features or {}).items()) for key in owned},
        names=_names(stable_build, widest),
    )


def _items(protocol: ir.Protocol, stability: Stability) -> Iterator[Item]:
    for t in protocol.types:
        yield Item(key=f"type:{t.wire}", stability=stability, shape=t.shape, name=t.class_name, definition=t)
        for f in t.fields:
            yield field_item(f"field:{t.wire}.{f.wire}", f, stability)
        for value in t.enum_values if t.kind == "enum" else ():
            yield Item(key=f"value:{t.wire}={value}", stability=stability, shape={})
        for v in t.variants:
            if not v.key or _is_constant(v.shape):
                continue
            name = v.class_name if v.hoisted else None
            yield Item(
                key=f"variant:{t.wire}[{v.key}]", stability=stability, shape=v.shape, payload=v.payload, name=name
            )
            for f in v.fields:
                if not _is_tag(f):
                    yield field_item(f"field:{t.wire}[{v.key}].{f.wire}", f, stability)
    for m in protocol.methods:
        yield Item(key=f"method:{m.side}:{m.wire}", stability=stability, shape={}, name=m.python_name)


def _names(stable_build: ir.Protocol, widest: ir.Protocol) -> tuple[GeneratedName, ...]:
    """Every generated name of both builds, once by kind and identity (as the stable build has it)."""
    found: dict[tuple[str, tuple[str, ...]], GeneratedName] = {}
    builds: tuple[tuple[ir.Protocol, Stability], ...] = ((stable_build, "stable"), (widest, "unstable"))
    for protocol, stability in builds:
        for name in (*_builder_names(protocol, stability), *_fold_names(protocol, stability)):
            found.setdefault((name.kind, name.identity), name)
        for union in protocol.messages:
            if union.class_name:
                identity = (union.kind, *sorted(union.refs))
                item = f"message:{union.class_name}"
                named = GeneratedName("message class", identity, union.class_name, item, stability)
                found.setdefault((named.kind, identity), named)
    return tuple(found[key] for key in sorted(found))


def _builder_names(protocol: ir.Protocol, stability: Stability) -> Iterator[GeneratedName]:
    """A builder is the builder of a type, or of a union's variant: by the type it carries (a variant
    renamed but for its tag keeps it), else by its key."""
    for b in protocol.builders:
        if b.variant is None:
            yield GeneratedName("builder", ("type", b.type), b.function, f"type:{b.type}", stability)
            continue
        variant = next(v for v in protocol.type(b.type).variants if v.key == b.variant)
        identity = ("variant", b.type, variant.payload or variant.key, b.part or "")
        yield GeneratedName("builder", identity, b.function, f"variant:{b.type}[{b.variant}]", stability)


def _fold_names(protocol: ir.Protocol, stability: Stability) -> Iterator[GeneratedName]:
    """A ``SessionState`` property (and a tracker) is the one of the slot its update kinds fold into:
    by the types those kinds carry (else their keys)."""
    fold = protocol.session
    for slot in fold.slots:
        kinds = [k for k in fold.kinds if k.slot == slot.name]
        identity = ("slot", *sorted(k.payload or k.kind for k in kinds))
        item = f"variant:{UNION}[{kinds[0].kind}]"
        yield GeneratedName("state property", identity, slot.attr, item, stability)
        for tracker in (t for t in fold.trackers if t.slot == slot.name):
            yield GeneratedName("tracker", identity, tracker.name, item, stability)


def field_item(key: str, f: ir.Field, stability: Stability) -> Item:
    """A field as the comparison reads it."""
    lenience = {
        DEFAULT_ON_ERROR: f.lenience.default_on_error,
        SKIP_INVALID_ITEMS: f.lenience.skip_invalid_items,
        DEFAULT_ON_NULL: f.lenience.default_on_null,
    }
    return Item(
        key=key,
        stability=stability,
        shape=f.shape,
        required=f.required,
        default_json=f.default_json,
        lenience=frozenset(k for k, on in lenience.items() if on),
        name=f.attr,
    )


def _is_constant(shape: ir.Shape) -> bool:
    """A branch that admits one value (an enum's constant, not a variant)."""
    structured = {"union", "ref", "properties", "extends", "items"} & set(shape)
    return len(shape.get("enum", ())) == 1 and not structured


def _is_tag(f: ir.Field) -> bool:
    """A branch's tag: a required property of one constant string."""
    values = f.shape.get("enum", ())
    return f.required and set(f.shape) == {"enum"} and len(values) == 1 and isinstance(values[0], str)


def _methods(protocol: ir.Protocol) -> dict[tuple[str, str, str], Method]:
    return {
        (m.side, m.wire, m.kind): Method(
            wire=m.wire, side=m.side, kind=m.kind, params=m.params, result=m.result, python_name=m.python_name
        )
        for m in sorted(protocol.methods, key=lambda m: (m.side, m.wire, m.kind))
    }


def _rules_by_subject(table: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]] | None:
    if table is None:
        return None
    rules: dict[str, Mapping[str, Any]] = {}
    for entry in table.get("rules", []):
        for kind in ("method", "field", "variant", "value"):
            if kind in entry:
                rules[f"{kind}:{entry[kind]}"] = entry
    return dict(sorted(rules.items()))
