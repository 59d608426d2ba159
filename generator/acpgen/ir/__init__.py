"""The intermediate representation: one typed, immutable model of one protocol variant.

Everything downstream of the schema (model preparation, templates, the spec diff, tests) reads
these objects, never a schema document: :mod:`acpgen.ir.build` is the one place that reads one.
:data:`UNSTABLE_MARKER` is the IR's too: the descriptions it keeps are the schema's, in which that
marker may already say that an item is unstable.
The models are rendered by datamodel-code-generator, which reads schema JSON: each
:class:`TypeDef` keeps its definition's node as written (``node``) and the :class:`Protocol` the
document's root (``root``), so that rendering needs nothing but the IR. Collections are tuples
sorted by a stable key (mappings are built in sorted order), so iteration never depends on
dictionary order or hash seeds; wire shapes are read-only JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from acpgen.errors import Problem
from acpgen.load.inventory import UNSTABLE_MARKER

# One type of conformance requirement, the kit's (:mod:`acpgen.ir.requirements` builds them):
# derived from the schema's tables, or curated in ``schema/conformance-requirements.json`` and
# checked against the schema; each names the registered checks of the kit that judge it.
from acpgen.runtime.tools.conformance.requirements import TIERS, Citation, Judged, Requirement, Tier

__all__ = ["TIERS", "UNSTABLE_MARKER", "Citation", "Judged", "Requirement", "Tier"]  # and the classes below

Side = Literal["agent", "client", "both", "proxy", "protocol"]
MethodKind = Literal["request", "notification"]
Variant = Literal["stable", "unstable"]
TypeKind = Literal["object", "union", "enum", "alias"]

SIDES: tuple[Side, ...] = ("agent", "client", "both", "proxy", "protocol")

Shape = Mapping[str, Any]
"""A wire shape (:func:`acpgen.ir.shapes.canonical`): the JSON a schema node admits, with its
spelling normalised away; read-only."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where a schema file came from."""

    package: str
    version: str
    file: str
    sha256: str


@dataclass(frozen=True, slots=True)
class Lenience:
    """The schema's lenient-reading keywords on one property."""

    default_on_error: bool = False
    skip_invalid_items: bool = False
    default_on_null: bool = False

    def __bool__(self) -> bool:
        return self.default_on_error or self.skip_invalid_items or self.default_on_null


@dataclass(frozen=True, slots=True)
class Field:
    """A property of an object type."""

    wire: str
    attr: str
    required: bool
    nullable: bool
    default_json: str | None
    """The schema's ``default`` as canonical JSON text, or None when the schema gives none."""
    is_array: bool
    is_map: bool
    """An object with no properties of its own, only ``additionalProperties`` (``env``: name -> value)."""
    integer: bool
    """The property's own type admits integers (``"type": "integer"``, possibly with null)."""
    ref: str | None
    """The ``$defs`` type the property refers to, if it is a plain reference."""
    lenience: Lenience
    stable: bool
    description: str
    extensible: bool = False
    """A union of object types one of which admits any value (an envelope's ``params``: ``ExtRequest``):
    a value that no typed member recognises a member of is that one's, read whole."""
    shape: Shape = field(default_factory=dict)
    """The wire shape of the property."""


@dataclass(frozen=True, slots=True)
class UnionVariant:
    """One branch of a union type."""

    key: str
    """The tag value for tagged variants, else the branch title, else the referenced type."""
    class_name: str
    tag: str | None
    ref: str | None
    catch_all: bool
    """The ``not`` branch of an extensible union: any other tag, payload kept."""
    hoisted: bool
    """True when the branch gets a class (or, in a union of scalars, a type alias) of its own: it adds to its
    reference (a tag, shared fields), or it is a bounded integer (``RequestId``'s ``Number``)."""
    stable: bool
    description: str
    spread: tuple[tuple[str, str, str], ...] = ()
    """When the branch's payload is itself a union (a referenced union type, or an inline ``anyOf``):
    ``(sub-branch key, class name, base class)`` per branch of that union, each a class of its own
    that extends the sub-branch and adds this branch's tag; the branch is then their union."""
    spread_from: str | None = None
    """The referenced union type the branch was spread over (its routing is reused), if any."""
    fields: tuple[Field, ...] = ()
    """The properties the branch declares itself, inline (its tag, mostly; ``MessageMcpResponse``'s
    branches are whole objects), beside the union's shared fields."""
    shape: Shape = field(default_factory=dict)
    """The wire shape of the branch."""
    payload: str | None = None
    """The type the branch carries: its reference, or the one type its ``allOf`` refers to."""
    node: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The branch as the schema writes it (read-only, one of its type's ``node``): the models renderer's input."""


@dataclass(frozen=True, slots=True)
class TypeDef:
    """A named schema definition."""

    wire: str
    class_name: str
    kind: TypeKind
    stable: bool
    description: str
    fields: tuple[Field, ...] = ()
    variants: tuple[UnionVariant, ...] = ()
    discriminator: str | None = None
    enum_values: tuple[str, ...] = ()
    open: bool = False
    """An open enum or extensible union: unknown values are accepted."""
    integer: bool = False
    """An alias, enum or union of scalars that admits integers (``ProtocolVersion``, ``ErrorCode``, ``RequestId``)."""
    shape: Shape = field(default_factory=dict)
    """The wire shape of the definition."""
    declares_properties: bool = False
    """The definition lists properties of its own (an object type, or a union with shared fields)."""
    references: frozenset[str] = frozenset()
    """Every definition it refers to, anywhere inside it."""
    union_keyword: str | None = None
    """``oneOf`` or ``anyOf``: the keyword that lists the branches of a union (of objects, of scalars, or
    an enum of constants), as the schema spells it; None for a definition with no branches."""
    node: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The definition as the schema writes it (read-only): the models renderer's input."""


@dataclass(frozen=True, slots=True)
class Method:
    """A JSON-RPC method."""

    wire: str
    side: Side
    """The side that handles (receives) the method."""
    kind: MethodKind
    params: str
    """The ``$defs`` name of the params type."""
    result: str | None
    """The ``$defs`` name of the result type (requests only)."""
    stable: bool
    description: str
    python_name: str
    """The handler and sender method name (:func:`acpgen.ir.naming.method_name`)."""
    constant: str
    """The module constant holding the wire name (:func:`acpgen.ir.naming.constant_name`)."""
    gate: str | None = None
    """The capability that gates the method (filled in from the capability rule table), if any."""


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """A code of the schema's ``ErrorCode`` (one constant of that open enum)."""

    value: int
    title: str
    """The branch's title (``Method not found``), else the bold lead of its description, else empty."""
    constant: str
    """The Python constant that names it (``METHOD_NOT_FOUND``), from the title; empty without one."""
    stable: bool
    description: str


Presence = Literal["true", "present"]
Owner = Literal["agent", "client"]
SubjectKind = Literal["method", "field", "variant", "value"]


@dataclass(frozen=True, slots=True)
class Capability:
    """A property of the capability tree that a peer advertises at ``initialize``."""

    path: str
    """Wire path from the root: ``agentCapabilities.sessionCapabilities.resume``."""
    owner: Owner
    """The side that advertises it."""
    root: str
    """The ``$defs`` type at the root of its tree (the ``agentCapabilities`` of ``InitializeResponse``)."""
    presence: Presence
    """``true``: a boolean that must be true; ``present``: an object that must be present and not null."""
    attrs: tuple[str, ...]
    """Python attribute names from the root model (``AgentCapabilities``) down to it."""
    accessor: str
    """Name of the generated ``supports_...`` function."""
    leaf: bool
    """No capabilities below it (containers such as ``promptCapabilities`` are not leaves)."""
    stable: bool
    description: str


@dataclass(frozen=True, slots=True)
class GatingRule:
    """A subject that may be used only when the peer advertised a capability."""

    kind: SubjectKind
    subject: str
    """``session/load``, ``NewSessionRequest.additionalDirectories``, ``ContentBlock[image]``,
    ``SystemPromptMode=override``."""
    capability: Capability
    classes: tuple[str, ...] = ()
    """Model classes whose instances carry the subject (fields, variants, values)."""
    attr: str | None = None
    """The attribute that carries a field or value subject."""
    value: str | None = None


@dataclass(frozen=True, slots=True)
class Builder:
    """A function of the generated ``builders`` module that makes one model class's instance."""

    function: str
    """Its name (:func:`acpgen.ir.naming.builder_name`)."""
    class_name: str
    type: str
    """The ``$defs`` name of the type it builds, or of the union whose variant it builds."""
    variant: str | None = None
    """The key of the union variant it builds, if it builds one."""
    tag: tuple[str, str] | None = None
    """The tag member's wire name and value it sets, for a variant of a tagged union."""
    part: str | None = None
    """For a variant spread over a union (:attr:`UnionVariant.spread`): the key of the branch it builds."""


@dataclass(frozen=True, slots=True)
class Reader:
    """How ``SessionState`` reads a record as a model: the class, read as a model or as an alias of a
    union, or a branch class that the tag ``(member, value)`` selects."""

    class_name: str
    alias: bool = False
    tag: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class PythonType:
    """A type in a generated annotation: a class of the models module, or a builtin (``str``, ``Any``)."""

    name: str
    model: bool


@dataclass(frozen=True, slots=True)
class FoldKind:
    """How one session update kind folds into a session's state (:mod:`acpgen.ir.session_fold`)."""

    kind: str
    how: str
    """``append`` (a chunk), ``remove``, ``patch`` or ``whole``."""
    slot: str
    key: tuple[str, ...]
    key_required: bool
    tag: str | None
    declared: tuple[str, ...]
    piece: str | None
    into: str | None
    classes: tuple[str, ...]
    """The model classes of the variant (several when its payload is a union)."""
    reader: Reader | None
    """How its record is read as a model, if it is read as one."""
    richness: int
    """Required members: a record is read as the richest kind's model first."""
    payload: str | None = None
    """The type the kind's variant carries (what names its slot across revisions)."""
    piece_type: PythonType | None = None


@dataclass(frozen=True, slots=True)
class FoldSlot:
    """A place in a session's state, and the ``SessionState`` property that reads it."""

    name: str
    attr: str
    """The property's name (:func:`acpgen.ir.naming.state_property`)."""
    keyed: bool
    clears: tuple[str, ...]
    merges: tuple[str, ...]
    readers: tuple[tuple[str, Reader], ...]
    """``(kind, reader)``: the models its things are read as, richest first."""
    into: str | None
    kinds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FoldField:
    """A member of a method's params or result that folds into a session's state."""

    source: str
    name: str
    kind: str | None = None
    slot: str | None = None
    target: str | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class FoldMethod:
    """A method about a session, and what of it folds."""

    method: str
    session: str
    fields: tuple[FoldField, ...]


@dataclass(frozen=True, slots=True)
class Tracker:
    """A thing agents report with a creating kind and patches (a tool call): its tracker class."""

    name: str
    """The class's name (:func:`acpgen.ir.naming.tracker_class_name`)."""
    slot: str
    key: str
    key_attr: str
    create_kind: str
    create_class: str
    patch_kind: str
    patch_class: str
    members: tuple[tuple[str, str], ...]
    """``(attribute, wire name)`` of the patch kind's members besides the key and the tag."""


@dataclass(frozen=True, slots=True)
class SessionFold:
    """How every ``session/update`` (and every call about a session) folds into a session's state,
    or why the protocol has no session state (:mod:`acpgen.ir.session_fold`)."""

    available: bool
    reason: str
    kinds: tuple[FoldKind, ...] = ()
    slots: tuple[FoldSlot, ...] = ()
    methods: tuple[FoldMethod, ...] = ()
    notification: str = ""
    session: tuple[str, str] = ("", "")
    update: tuple[str, str] = ("", "")
    tag: str | None = None
    trackers: tuple[Tracker, ...] = ()
    problems: tuple[Problem, ...] = ()
    """Update kinds that fit no rule, and the like: generating ``session_state.py`` fails with them
    (the IR is still whole, for the spec diff, which reads any revision)."""


MessageKind = Literal["outgoing", "envelope", "types"]


@dataclass(frozen=True, slots=True)
class MessageUnion:
    """A branch of the schema's root (the union of every message): what one side writes
    (``outgoing``: a union of its envelopes), a protocol-level envelope (``envelope``), or a branch
    of no known shape whose types are members of the root (``types``: no class of its own)."""

    kind: MessageKind
    class_name: str
    """The class it becomes (:func:`acpgen.ir.naming.message_class_name`); empty for ``types``."""
    refs: tuple[str, ...]
    """The definitions it unites (``outgoing``), its params may be (``envelope``), or it holds (``types``)."""
    node: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The branch as the schema writes it (read-only)."""


@dataclass(frozen=True, slots=True)
class Protocol:
    """One protocol variant (stable or unstable) of one schema revision."""

    variant: Variant
    protocol_version: int
    source: Source
    methods: tuple[Method, ...]
    types: tuple[TypeDef, ...]
    unstable_items: frozenset[str]
    """Item keys (see :mod:`acpgen.load.inventory`) present in this build that are not stable."""
    error_codes: tuple[ErrorCode, ...] = ()
    """The codes of the schema's ``ErrorCode``, in schema order (none when the schema has no such type)."""
    capabilities: tuple[Capability, ...] = ()
    rules: tuple[GatingRule, ...] = ()
    informational: tuple[tuple[str, str], ...] = ()
    """Capabilities that gate nothing, with the reason, from the rule table."""
    ungated: tuple[str, ...] = ()
    """Leaf capabilities that neither a rule nor the informational list mentions."""
    features: tuple[str, ...] = ()
    """The unstable features the build holds (none in the stable build, all in the unstable one)."""
    selected: bool = False
    """Built from a selection of features (``--unstable-feature``) rather than all or none."""
    feature_of: tuple[tuple[str, str], ...] = ()
    """``(unstable item key, the feature that owns it)`` for the unstable items of the build."""
    experimental: bool = False
    """Built from a draft protocol (v2): the package says it may change without notice."""
    writers: Mapping[str, frozenset[Owner]] = field(default_factory=dict)
    """Type name -> the sides that write it: the caller writes a request's params, the handler
    its result, the sender a notification, and whoever writes a type writes what it refers to
    (a type no method reaches is absent: either side may write it)."""
    definition_order: tuple[str, ...] = ()
    """The definitions' names in the order the schema writes them (the models module keeps it)."""
    builders: tuple[Builder, ...] = ()
    """The functions of the ``builders`` module (:mod:`acpgen.ir.builders`)."""
    session: SessionFold = field(default_factory=lambda: SessionFold(False, "not derived"))
    """How a session's state folds (``SessionState``), or why there is none."""
    messages: tuple[MessageUnion, ...] = ()
    """The branches of the schema's root, in its order: the members of ``AcpMessage``."""
    requirements: tuple[Requirement, ...] = ()
    """The conformance requirements of the build, derived and curated, by id."""
    root: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The schema document without its definitions (read-only): its root union of the message
    envelopes, which the models renderer turns into the top-level message unions."""

    @property
    def build(self) -> str:
        """What the build holds, for headers and messages: ``stable``, ``unstable``, or the stable
        protocol with the selected features (``stable + session_fork, session_system_prompt``)."""
        if not self.selected:
            return self.variant
        return "stable + " + (", ".join(self.features) or "no unstable feature")

    def type(self, wire: str) -> TypeDef:
        """The type named ``wire`` in ``$defs``."""
        for t in self.types:
            if t.wire == wire:
                return t
        raise KeyError(wire)
