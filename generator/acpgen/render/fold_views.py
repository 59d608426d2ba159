"""Template data of ``session_state.py`` and ``trace.py``: the IR's session fold
(:attr:`acpgen.ir.Protocol.session`, derived in :mod:`acpgen.ir.session_fold`) with the Python
expressions the templates print: how each slot's records are read (``_validator(models.X)``),
their annotations, and each property's docstring."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acpgen import ir
from acpgen.errors import AcpgenError


@dataclass(frozen=True, slots=True)
class SlotView:
    """A slot of the fold, as ``SessionState`` reads it."""

    name: str
    attr: str
    keyed: bool
    clears: tuple[str, ...]
    merges: tuple[str, ...]
    readers: tuple[tuple[str, str], ...]
    """``(kind, validator expression)``: the models its things are read as, richest first."""
    record_type: str
    piece_type: str
    into: str | None
    kinds: tuple[str, ...]
    doc: str


@dataclass(frozen=True, slots=True)
class FoldViews:
    """Everything ``session_state.py`` is rendered from (the IR's fold, its slots as views)."""

    available: bool
    reason: str
    kinds: tuple[ir.FoldKind, ...]
    slots: tuple[SlotView, ...]
    methods: tuple[ir.FoldMethod, ...]
    notification: str
    session: tuple[str, str]
    update: tuple[str, str]
    tag: str | None
    trackers: tuple[ir.Tracker, ...]


def fold_views(fold: ir.SessionFold) -> FoldViews:
    """The template data of a protocol's session fold; :class:`AcpgenError` with its problems when
    the schema's session updates do not fold."""
    if fold.problems:
        raise AcpgenError(*fold.problems)
    return FoldViews(
        available=fold.available,
        reason=fold.reason,
        kinds=fold.kinds,
        slots=tuple(_slot(slot, [k for k in fold.kinds if k.slot == slot.name]) for slot in fold.slots),
        methods=fold.methods,
        notification=fold.notification,
        session=fold.session,
        update=fold.update,
        tag=fold.tag,
        trackers=fold.trackers,
    )


def _slot(slot: ir.FoldSlot, kinds: Sequence[ir.FoldKind]) -> SlotView:
    chunks = [k for k in kinds if k.how == "append"]
    return SlotView(
        name=slot.name,
        attr=slot.attr,
        keyed=slot.keyed,
        clears=slot.clears,
        merges=slot.merges,
        readers=tuple((kind, validator(reader)) for kind, reader in slot.readers),
        record_type=_union_of([f"models.{reader.class_name}" for _, reader in slot.readers]),
        piece_type=_union_of([annotation(k.piece_type) for k in chunks]),
        into=slot.into,
        kinds=slot.kinds,
        doc="What the update kinds " + ", ".join(f"``{k.kind}`` ({k.how})" for k in kinds) + " fold into.",
    )


def validator(reader: ir.Reader) -> str:
    """The expression that reads a record as the reader's model."""
    if reader.alias:
        return f"_alias_validator(models.{reader.class_name})"
    if reader.tag is not None:
        return f"_validator(models.{reader.class_name}, {reader.tag[0]!r}, {reader.tag[1]!r})"
    return f"_validator(models.{reader.class_name})"


def annotation(python_type: ir.PythonType | None) -> str:
    """A type in an annotation of ``session_state.py`` (``Any`` when none is known)."""
    if python_type is None:
        return "Any"
    return f"models.{python_type.name}" if python_type.model else python_type.name


def _union_of(names: Sequence[str]) -> str:
    unique = list(dict.fromkeys(names))
    return " | ".join(unique) if unique else "Never"
