"""How each session update kind folds into a session's state, derived from the IR's types and methods.

Nothing here is a list of update kinds: every rule follows from the ``SessionUpdate`` union's
variants, their members and what the schema says of each (required, nullable, its type), and
from two naming conventions of the schema (a kind named ``..._chunk`` is a piece of a thing,
one named ``..._removed`` removes one). A variant that fits none of the rules (a chunk with two
pieces, a removal that carries more than its id, a kind with two ids) fails generation with a
problem naming it, where it is, and what to do; a new kind or member that fits them is folded
with no change here.

- A kind's **key** is its one required member whose name ends in ``Id`` and that holds a
  string (``toolCallId``), or the one such member of every branch of a required object member
  (``plan.planId``); a chunk may have an optional one (``messageId``). Kinds keyed by members
  of the same name share a slot named after it (``toolCallId`` -> ``tool_calls``); a kind
  with no key has a slot of its own, named after it (``usage_update`` -> ``usage``).
- **append** (``..._chunk``): the one required member besides the key is the piece; it joins
  the list member of the slot's other kinds that holds items of its type
  (``compaction_summary_chunk``'s ``content`` -> ``summary``), or a list of its own name.
- **remove** (``..._removed``): a keyed kind that carries nothing but its key.
- **patch**: a keyed kind, or one whose members are all optional (``session_info_update``).
- **whole**: a kind with no key and a required member (the plan, the usage, a notice).
- A null clears a member only where every kind of the slot that declares it admits null.
- An **open map** (a member every kind of the slot that declares it declares as an object of
  any members, with none named: ``_meta``) merges member by member rather than being replaced,
  and every map sent is kept in order (what an agent streams there accumulates).

Methods about a session (their params or result have the session id that ``session/update``
has) fold what they carry: a member whose type is an update kind's payload folds as that kind
(a permission request's ``toolCall``), one of the type of a member of a session-wide slot
patches that member (``configOptions``, ``session/set_mode``'s ``modeId``), and an object that
holds such a member patches the slot with all of its members (``session/new``'s ``modes``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from acpgen import ir
from acpgen.errors import Problem, pointer
from acpgen.ir import naming
from acpgen.ir.shapes import shape_key

UNION = "SessionUpdate"
"""The union of update kinds (``session/update``'s ``update``)."""
UPDATE_METHOD = "session/update"
META = "_meta"
OPEN_MAP = shape_key({"type": "object"})
"""The shape of an object of any members, none named (``_meta``)."""
HINT = (
    "acpgen derives how each update kind folds from its members (see docs/session-state.md); "
    "if the schema is right, teach acpgen.ir.session_fold the new shape."
)


@dataclass(frozen=True, slots=True)
class Member:
    """A member of an update kind (or of a type a method carries), as folding sees it."""

    wire: str
    required: bool
    nullable: bool
    shape: str
    """The member's wire shape without null (:func:`acpgen.ir.shapes.shape_key`)."""
    ref: str | None
    item_ref: str | None
    """The type of a list's items, for a list of a named type."""
    plain: bool
    """A string, number or boolean (no named type)."""


def session_fold(protocol: ir.Protocol) -> ir.SessionFold:
    """How the sessions of ``protocol`` fold, or why they do not (no ``SessionUpdate`` union)."""
    union = next((t for t in protocol.types if t.wire == UNION and t.kind == "union"), None)
    notify = next((m for m in protocol.methods if m.wire == UPDATE_METHOD), None)
    if union is None or notify is None:
        what = f"no {UNION} union" if union is None else f"no {UPDATE_METHOD} notification"
        reason = f"The schema ({protocol.source.file}) has {what}: there is no session update to fold."
        return ir.SessionFold(False, reason)
    return _Derivation(protocol, union, notify).rules()


@dataclass
class _Derivation:
    protocol: ir.Protocol
    union: ir.TypeDef
    notify: ir.Method
    problems: list[Problem] = field(default_factory=list)

    def rules(self) -> ir.SessionFold:
        notification = self.protocol.type(self.notify.params)
        session = _id_member(notification.fields, self.protocol)
        update = next((f for f in notification.fields if f.ref == UNION), None)
        if session is None or update is None:
            self._fail(notification.wire, f"{notification.wire} has no session id or no {UNION} member")
            return self._failed()
        kinds = [k for v in self.union.variants if not v.catch_all and (k := self._kind(v)) is not None]
        kinds = self._placed(kinds)
        slots = self._slots(kinds)
        methods = self._methods(session.wire, kinds, slots)
        slots = self._with_method_readers(slots, methods)
        if self.problems:
            return self._failed()
        return ir.SessionFold(
            available=True,
            reason="",
            kinds=tuple(kinds),
            slots=tuple(slots.values()),
            methods=tuple(methods),
            notification=notification.class_name,
            session=(session.attr, session.wire),
            update=(update.attr, update.wire),
            tag=self.union.discriminator,
            trackers=tuple(self._trackers(kinds)),
        )

    # -- update kinds

    def _kind(self, variant: ir.UnionVariant) -> ir.FoldKind | None:
        members = self._variant_members(variant)
        kind = variant.tag if variant.tag is not None else variant.key
        where = pointer("$defs", variant.payload or UNION)
        snake = naming.snake(kind)
        key = self._key(kind, members, where, chunk=snake.endswith("_chunk"), removal=snake.endswith("_removed"))
        if isinstance(key, bool):
            return None
        path, required = key if key is not None else ((), True)
        rest = [m for m in members if m.wire not in (path[:1]) and m.wire != META]
        how, piece = self._how(kind, snake, path, rest, members, where)
        if how is None:
            return None
        slot = naming.slot_name(self._key_name(members, path), snake)
        payload = self.protocol.type(variant.payload) if variant.payload else None
        return ir.FoldKind(
            kind=kind,
            how=how,
            slot=slot,
            key=path,
            key_required=required,
            tag=self.union.discriminator if variant.tag is not None else None,
            declared=tuple(sorted({m.wire for m in members})) if how == "whole" else (),
            piece=piece.wire if piece is not None else None,
            into=None,
            classes=tuple(cls for _, cls, _ in variant.spread) or (variant.class_name,),
            reader=_reader(payload, variant, self.union.discriminator) if how != "append" else None,
            richness=sum(1 for m in members if m.required),
            payload=variant.payload,
            piece_type=self._annotation(piece) if piece is not None else None,
        )

    def _how(
        self, kind: str, snake: str, path: tuple[str, ...], rest: list[Member], members: list[Member], where: str
    ) -> tuple[str | None, Member | None]:
        if snake.endswith("_chunk"):
            pieces = [m for m in rest if m.required]
            if len(pieces) != 1:
                named = ", ".join(m.wire for m in pieces) or "none"
                self._fail(
                    where,
                    f"the chunk update kind {kind!r} has {len(pieces)} required members besides its id "
                    f"({named}), not one piece",
                )
                return None, None
            return "append", pieces[0]
        if snake.endswith("_removed"):
            if not path or rest:
                extra = ", ".join(m.wire for m in rest)
                why = "has no id" if not path else f"carries more than its id: {extra}"
                self._fail(where, f"the update kind {kind!r} removes a thing but {why}")
                return None, None
            return "remove", None
        if path or not any(m.required for m in members):
            return "patch", None
        return "whole", None

    def _key(
        self, kind: str, members: list[Member], where: str, *, chunk: bool, removal: bool
    ) -> tuple[tuple[str, ...], bool] | bool | None:
        """The key's path and whether it is required; ``None`` for no key, ``False`` after a problem."""
        required = [m for m in members if m.required and self._is_id(m)]
        if len(required) > 1:
            named = ", ".join(m.wire for m in required)
            self._fail(
                where, f"the update kind {kind!r} has {len(required)} ids ({named}): which thing it is about is unclear"
            )
            return False
        if required:
            others = [m for m in members if m.wire not in (required[0].wire, META)]
            if others or chunk or removal:
                return (required[0].wire,), True
            return None  # it carries nothing but the id: the id is its value (``currentModeId``)
        nested = self._nested_key(members)
        if nested is not None:
            return nested, True
        optional = [m for m in members if not m.required and self._is_id(m)]
        if chunk and len(optional) == 1:
            return (optional[0].wire,), False
        return None

    def _nested_key(self, members: list[Member]) -> tuple[str, str] | None:
        for member in members:
            if not member.required or member.ref is None:
                continue
            branches = self._branches(self.protocol.type(member.ref))
            ids = {m.wire for b in branches for m in b if m.required and self._is_id(m)}
            if branches and len(ids) == 1 and all(any(m.wire in ids and m.required for m in b) for b in branches):
                return member.wire, next(iter(ids))
        return None

    def _is_id(self, member: Member) -> bool:
        """A member holding a thing's id: named ``...Id`` and holding a string, or named ``id`` and
        holding an id type (``PlanId``)."""
        target = self._type(member.ref)
        id_type = target is not None and target.kind == "alias" and shape_key(target.shape) == '{"type": "string"}'
        if member.wire == "id":
            return id_type and target is not None and target.wire.endswith("Id")
        if not member.wire.endswith("Id") or member.wire[:-2].endswith("_"):
            return False
        return id_type or member.shape == '{"type": "string"}'

    def _key_name(self, members: list[Member], path: tuple[str, ...]) -> str:
        """What a key is named after: its id type (``ToolCallId``), else its member."""
        if not path:
            return ""
        found: list[Member] = members
        for step in path[:-1]:
            holder = next(m for m in found if m.wire == step)
            holder_type = self._type(holder.ref)
            found = [m for b in (self._branches(holder_type) if holder_type is not None else []) for m in b]
        leaf = next((m for m in found if m.wire == path[-1]), None)
        target = self._type(leaf.ref if leaf is not None else None)
        return target.wire if target is not None and target.wire.endswith("Id") else path[-1]

    def _placed(self, kinds: list[ir.FoldKind]) -> list[ir.FoldKind]:
        """Chunk kinds with the list their piece joins."""
        placed = []
        for rule in kinds:
            if rule.how == "append":
                rule = _replace(rule, into=self._into(rule, kinds))
            placed.append(rule)
        return placed

    def _into(self, chunk: ir.FoldKind, kinds: list[ir.FoldKind]) -> str:
        assert chunk.piece is not None
        variant = self._variant(chunk.kind)
        piece = next(m for m in self._variant_members(variant) if m.wire == chunk.piece)
        lists = {
            m.wire
            for rule in kinds
            if rule.slot == chunk.slot and rule.how in ("patch", "whole")
            for m in self._variant_members(self._variant(rule.kind))
            if m.item_ref is not None and m.item_ref == piece.ref
        }
        if len(lists) > 1:
            self._fail(
                pointer("$defs", UNION),
                f"the chunk kind {chunk.kind!r} could join any of the lists {', '.join(sorted(lists))}",
            )
        return min(lists) if lists else chunk.piece

    # -- slots

    def _slots(self, kinds: list[ir.FoldKind]) -> dict[str, ir.FoldSlot]:
        slots: dict[str, ir.FoldSlot] = {}
        taken: dict[str, str] = {}
        for name in sorted({k.slot for k in kinds}):
            mine = [k for k in kinds if k.slot == name]
            attr = naming.state_property(name)
            if attr in taken:
                self._fail(
                    pointer("$defs", UNION), f"the slots {taken[attr]!r} and {name!r} would both be SessionState.{attr}"
                )
            taken[attr] = name
            chunks = [k for k in mine if k.how == "append"]
            readers = self._readers(mine)
            slots[name] = ir.FoldSlot(
                name=name,
                attr=attr,
                keyed=any(k.key for k in mine),
                clears=self._clears(mine),
                merges=self._merges(mine),
                readers=readers,
                into=chunks[0].into if chunks else None,
                kinds=tuple(k.kind for k in mine),
            )
            if len({k.into for k in chunks}) > 1:
                self._fail(pointer("$defs", UNION), f"the chunk kinds of {name!r} join different lists")
        return slots

    def _readers(self, kinds: Sequence[ir.FoldKind]) -> tuple[tuple[str, ir.Reader], ...]:
        owners = [k for k in kinds if k.reader is not None]
        rows: list[tuple[int, int, str, tuple[object, ...], ir.Reader]] = []
        for index, rule in enumerate(kinds):
            if rule.reader is not None:
                rows.append((-rule.richness, index, rule.kind, _order(rule.reader), rule.reader))
            elif rule.how == "append":
                for owner in owners:
                    assert owner.reader is not None
                    rows.append((-owner.richness, index, rule.kind, _order(owner.reader), owner.reader))
        return tuple((kind, reader) for _, _, kind, _, reader in sorted(rows, key=lambda row: row[:4]))

    def _clears(self, kinds: Sequence[ir.FoldKind]) -> tuple[str, ...]:
        declared: dict[str, list[bool]] = {}
        for rule in kinds:
            for m in self._variant_members(self._variant(rule.kind)):
                declared.setdefault(m.wire, []).append(m.nullable)
        return tuple(sorted(name for name, nullable in declared.items() if all(nullable)))

    def _merges(self, kinds: Sequence[ir.FoldKind]) -> tuple[str, ...]:
        shapes: dict[str, set[str]] = {}
        for rule in kinds:
            for m in self._variant_members(self._variant(rule.kind)):
                shapes.setdefault(m.wire, set()).add(m.shape)
        return tuple(sorted(name for name, found in shapes.items() if found == {OPEN_MAP}))

    # -- methods

    def _methods(self, session: str, kinds: list[ir.FoldKind], slots: Mapping[str, ir.FoldSlot]) -> list[ir.FoldMethod]:
        found = []
        for method in self.protocol.methods:
            if method.wire == UPDATE_METHOD:
                continue
            params = self.protocol.type(method.params)
            result = self.protocol.type(method.result) if method.result else None
            where = _session_source(session, params, result)
            if where is None:
                continue
            fields = [
                rule
                for source, t in (("params", params), ("result", result))
                if t is not None
                for m in t.fields
                if m.wire not in (session, META) and (rule := self._field(source, m, kinds, slots)) is not None
            ]
            found.append(ir.FoldMethod(method.wire, where, tuple(fields)))
        return sorted(found, key=lambda m: m.method)

    def _field(
        self, source: str, field_: ir.Field, kinds: list[ir.FoldKind], slots: Mapping[str, ir.FoldSlot]
    ) -> ir.FoldField | None:
        member = _member(field_)
        as_kind = [k for k in kinds if k.how in ("patch", "whole") and self._variant(k.kind).payload == member.ref]
        if member.ref is not None and len(as_kind) == 1:
            return ir.FoldField(source, member.wire, kind=as_kind[0].kind)
        target = self._singleton_member(member, kinds, slots)
        if target is not None:
            return ir.FoldField(source, member.wire, slot=target[0], target=target[1], label=target[2])
        inner = self._type(member.ref)
        if inner is not None and inner.kind == "object":
            found = {t[0] for m in inner.fields if (t := self._singleton_member(_member(m), kinds, slots)) is not None}
            if len(found) == 1:
                return ir.FoldField(source, member.wire, slot=found.pop(), label=inner.wire)
        return None

    def _singleton_member(
        self, member: Member, kinds: list[ir.FoldKind], slots: Mapping[str, ir.FoldSlot]
    ) -> tuple[str, str, str] | None:
        if member.wire == META:
            return None
        found = set()
        for rule in kinds:
            if slots[rule.slot].keyed or rule.how not in ("patch", "whole"):
                continue
            for m in self._variant_members(self._variant(rule.kind)):
                same_type = m.shape == member.shape and not member.plain
                if m.wire != META and (same_type or (m.wire == member.wire and m.shape == member.shape)):
                    found.add((rule.slot, m.wire, rule.kind))
        return found.pop() if len(found) == 1 else None

    def _with_method_readers(
        self, slots: dict[str, ir.FoldSlot], methods: list[ir.FoldMethod]
    ) -> dict[str, ir.FoldSlot]:
        extra: dict[str, dict[str, ir.Reader]] = {}
        for method in methods:
            for f in method.fields:
                if f.slot is not None and f.target is None and f.label is not None:
                    t = self.protocol.type(f.label)
                    extra.setdefault(f.slot, {})[f.label] = ir.Reader(t.class_name)
        for name, labels in extra.items():
            slot = slots[name]
            ranked = sorted(
                labels.items(), key=lambda item: -sum(1 for m in self.protocol.type(item[0]).fields if m.required)
            )
            readers = (*ranked, *slot.readers)
            slots[name] = _replace_slot(slot, readers=readers)
        return slots

    # -- trackers

    def _trackers(self, kinds: list[ir.FoldKind]) -> Iterator[ir.Tracker]:
        for slot in sorted({k.slot for k in kinds}):
            mine = [k for k in kinds if k.slot == slot and k.how == "patch" and k.key and len(k.key) == 1]
            patch = next((k for k in mine if k.richness == 1 and len(k.classes) == 1), None)
            if patch is None:
                continue
            create = max(mine, key=lambda k: k.richness)
            members = [
                m for m in self._variant_fields(self._variant(patch.kind)) if m.wire not in (patch.key[0], patch.tag)
            ]
            key_attr = next(f.attr for f in self._variant_fields(self._variant(patch.kind)) if f.wire == patch.key[0])
            yield ir.Tracker(
                name=naming.tracker_class_name(slot),
                slot=slot,
                key=patch.key[0],
                key_attr=key_attr,
                create_kind=create.kind,
                create_class=create.classes[0],
                patch_kind=patch.kind,
                patch_class=patch.classes[0],
                members=tuple((m.attr, m.wire) for m in members),
            )

    # -- reading the IR

    def _variant(self, kind: str) -> ir.UnionVariant:
        return next(v for v in self.union.variants if (v.tag if v.tag is not None else v.key) == kind)

    def _variant_fields(self, variant: ir.UnionVariant) -> list[ir.Field]:
        own = [f for f in variant.fields if variant.tag is None or f.wire != self.union.discriminator]
        payload = self._type(variant.payload)
        inherited = list(payload.fields) if payload is not None else []
        names = {f.wire for f in own}
        return sorted([f for f in inherited if f.wire not in names] + own, key=lambda f: f.wire)

    def _variant_members(self, variant: ir.UnionVariant) -> list[Member]:
        members = [_member(f) for f in self._variant_fields(variant)]
        payload = self._type(variant.payload)
        if payload is not None and payload.kind == "union":
            members += [m for branch in self._branches(payload) for m in branch]
        return members

    def _branches(self, union: ir.TypeDef) -> list[list[Member]]:
        if union.kind == "object":
            return [[_member(f) for f in union.fields]]
        branches = []
        for variant in union.variants:
            fields = [_member(f) for f in variant.fields]
            payload = self._type(variant.payload)
            if payload is not None:
                fields += [_member(f) for f in payload.fields]
            branches.append(fields)
        return branches if union.kind == "union" else []

    def _type(self, name: str | None) -> ir.TypeDef | None:
        if name is None:
            return None
        try:
            return self.protocol.type(name)
        except KeyError:
            return None

    def _annotation(self, member: Member) -> ir.PythonType:
        target = self._type(member.ref)
        if target is not None:
            return ir.PythonType(target.class_name, model=True)
        builtin = {'{"type": "string"}': "str", '{"type": "boolean"}': "bool"}.get(member.shape, "Any")
        return ir.PythonType(builtin, model=False)

    def _failed(self) -> ir.SessionFold:
        reason = f"The session updates of the schema ({self.protocol.source.file}) do not fold: see the problems."
        return ir.SessionFold(False, reason, problems=tuple(self.problems))

    def _fail(self, where: str, what: str) -> None:
        location = f"{self.protocol.source.file}#{where}"
        self.problems.append(Problem(what=what, where=location, hint=HINT))


def _member(f: ir.Field) -> Member:
    shape = {k: v for k, v in f.shape.items() if k != "null"}
    items = shape.get("items") if shape.get("type") == "array" else None
    item_ref = items.get("ref") if isinstance(items, Mapping) else None
    plain = "ref" not in shape and item_ref is None
    return Member(f.wire, f.required, f.nullable, shape_key(shape), shape.get("ref"), item_ref, plain)


def _id_member(fields: Iterable[ir.Field], protocol: ir.Protocol) -> ir.Field | None:
    return next((f for f in fields if f.required and f.wire.endswith("Id")), None)


def _session_source(session: str, params: ir.TypeDef, result: ir.TypeDef | None) -> str | None:
    if result is not None and any(f.wire == session and f.required for f in result.fields):
        return "result"
    if any(f.wire == session and f.required for f in params.fields):
        return "params"
    return None


def _reader(payload: ir.TypeDef | None, variant: ir.UnionVariant, tag: str | None) -> ir.Reader:
    """How a kind's record is read: as its payload's model (an alias when the payload is no object), else
    as its variant's class (selected by its tag, in a tagged union)."""
    if payload is not None:
        return ir.Reader(payload.class_name, alias=payload.kind != "object")
    if variant.tag is not None and tag is not None:
        return ir.Reader(variant.class_name, tag=(tag, variant.tag))
    return ir.Reader(variant.class_name)


def _order(reader: ir.Reader) -> tuple[object, ...]:
    """Among readers of equal rank: aliases first, then by class, the untagged before the tagged."""
    return (not reader.alias, reader.class_name, reader.tag is not None, reader.tag or ("", ""))


def _replace(rule: ir.FoldKind, **changes: object) -> ir.FoldKind:
    import dataclasses

    return dataclasses.replace(rule, **changes)  # type: ignore[arg-type]


def _replace_slot(slot: ir.FoldSlot, **changes: object) -> ir.FoldSlot:
    import dataclasses

    return dataclasses.replace(slot, **changes)  # type: ignore[arg-type]
