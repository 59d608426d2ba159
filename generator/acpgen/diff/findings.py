"""Findings and the recorder that makes them from rules.

A finding takes its category and usual level from its rule (:mod:`acpgen.diff.catalogue`); the
recorder lowers the level where the reader tolerates the change or the item is unstable, marks
changes to types that no method sends as source-only, says whom a change breaks from the
sides that write the type, and names the unstable feature an item belongs to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from acpgen.diff.catalogue import LEVELS, Level, rule
from acpgen.diff.relations import Context
from acpgen.diff.snapshot import BOTH, Snapshot, Writer
from acpgen.load.inventory import item_owner

PEER: dict[Writer, Writer] = {"agent": "client", "client": "agent"}
_UNSTABLE_NOTE = "unstable item: no compatibility promise"


@dataclass(frozen=True, slots=True)
class Finding:
    """One classified change."""

    rule: str
    level: Level
    category: str
    item: str
    """The item key (``field:NewSessionRequest.cwd``) or rule subject it is about."""
    stability: str
    """``stable`` or ``unstable``: the item's stability in the new revision (the old one if removed)."""
    message: str
    affects: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    old: Any = None
    new: Any = None
    feature: str | None = None
    """The unstable feature the item belongs to (in the new revision, else the old one), if known."""

    def sort_key(self) -> tuple[int, str, str]:
        return LEVELS.index(self.level), self.rule, self.item


@dataclass
class Recorder:
    old: Snapshot
    new: Snapshot
    ctx: Context
    findings: list[Finding] = field(default_factory=list)

    def add(
        self,
        rule_id: str,
        item: str,
        message: str,
        *,
        stability: str,
        writers: Iterable[Writer] = (),
        notes: Iterable[str] = (),
        level: Level | None = None,
        old: Any = None,
        new: Any = None,
        feature: str | None = None,
    ) -> None:
        r = rule(rule_id)
        chosen = level or r.level
        notes = list(notes)
        category = r.category
        if category == "wire" and self.off_the_wire(item):
            category = "source"
            notes.append("not part of any method's params or result")
        if stability == "unstable" and chosen == "breaking":
            chosen = "warning"
            notes.append(_UNSTABLE_NOTE)
        self.findings.append(
            Finding(
                rule=rule_id,
                level=chosen,
                category=category,
                item=item,
                stability=stability,
                message=message,
                affects=_affects(r.direction, category, chosen, frozenset(writers)),
                notes=tuple(notes),
                old=old,
                new=new,
                feature=feature or self.new.feature_of(item) or self.old.feature_of(item),
            )
        )

    def off_the_wire(self, item: str) -> bool:
        """Whether an item belongs to a type that no method of either revision sends (routing
        types such as ``AgentRequest``); only when the revisions name their methods at all."""
        kind = item.split(":", 1)[0]
        if kind not in ("type", "field", "variant", "value") or not (self.old.methods or self.new.methods):
            return False
        owner = item_owner(item)
        return owner not in self.old.writers and owner not in self.new.writers


def _affects(direction: str, category: str, level: Level, writers: frozenset[Writer]) -> tuple[str, ...]:
    if level == "info":
        return ()
    if category == "source":
        return ("code using the generated bindings",)
    pairs = []
    for writer in sorted(writers or BOTH):
        reader = PEER[writer]
        if direction in ("old-writer", "both"):
            pairs.append(f"old {writer}s -> new {reader}s")
        if direction in ("new-writer", "both"):
            pairs.append(f"new {writer}s -> old {reader}s")
    return tuple(sorted(pairs))


def item_label(key: str) -> str:
    """An item key without its kind: ``field:Plan.entries`` -> ``Plan.entries``."""
    return key.split(":", 1)[1]
