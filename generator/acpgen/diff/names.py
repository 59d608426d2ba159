"""What users import: the generated classes of the items on both sides compared, and the other
generated names (builders, ``SessionState`` properties, trackers, message unions' classes).

The wire can stay the same while the code generated for it changes (a union variant titled
differently gets another class name; a variant that stops adding anything to the type it
refers to loses its own class; a type renamed renames the builder of its class). Such changes
break code using the bindings, not the wire.
"""

from __future__ import annotations

from collections.abc import Mapping

from acpgen.diff.findings import Recorder, item_label
from acpgen.diff.snapshot import NAME_KINDS, GeneratedName, Item, NameKind


def compare_names(diff: Recorder, old_items: Mapping[str, Item], new_items: Mapping[str, Item]) -> None:
    """Findings for the types and variants on both sides whose generated class changed (a
    field's attribute follows its wire name, and a method's Python name is compared with the
    method: see :mod:`acpgen.diff.methods`)."""
    for key in sorted(old_items.keys() & new_items.keys()):
        before, after = old_items[key], new_items[key]
        if before.name == after.name or not key.startswith(("type:", "variant:")):
            continue
        label = item_label(key)
        if before.name is None:
            _add(diff, "class-added", key, f"{label} now has a class of its own, {after.name}", before, after)
        elif after.name is None:
            _add(diff, "class-removed", key, f"{label} no longer has its class {before.name}", before, after)
        else:
            _add(diff, "class-renamed", key, f"the class of {label} is now {after.name}", before, after)


def _add(diff: Recorder, rule_id: str, key: str, message: str, before: Item, after: Item) -> None:
    diff.add(
        rule_id,
        key,
        f"{message} (was {before.name})" if rule_id.endswith("renamed") else message,
        stability=after.stability,
        old=before.name,
        new=after.name,
    )


RENAMED: dict[NameKind, str] = {
    "builder": "builder-renamed",
    "state property": "state-property-renamed",
    "tracker": "tracker-renamed",
    "message class": "message-class-renamed",
}
_WHAT: dict[NameKind, str] = {
    "builder": "the builder",
    "state property": "the SessionState property",
    "tracker": "the tracker class",
    "message class": "the message union class",
}


_CLASS_CHANGES = frozenset({"class-renamed", "class-removed", "class-added"})


def compare_generated_names(diff: Recorder) -> None:
    """A finding for each generated name that names the same thing on both sides, renamed (the
    old side's type names read through the type renames); once per old and new name, and not for
    a builder whose class's change is reported already."""
    renames = diff.ctx.renames
    for kind in NAME_KINDS:
        old = {_through(n.identity, renames): n for n in diff.old.names if n.kind == kind}
        new = {n.identity: n for n in diff.new.names if n.kind == kind}
        told: set[tuple[str, str]] = set()
        classes = {f.item for f in diff.findings if f.rule in _CLASS_CHANGES}
        for identity in sorted(old.keys() & new.keys()):
            before, after = old[identity], new[identity]
            if before.name == after.name or (before.name, after.name) in told:
                continue
            if kind == "builder" and after.item in classes:
                continue  # the builder follows its class, whose change is reported on the item
            told.add((before.name, after.name))
            _rename(diff, kind, before, after)


def _through(identity: tuple[str, ...], renames: Mapping[str, str]) -> tuple[str, ...]:
    return (identity[0], *(renames.get(part, part) for part in identity[1:]))


def _rename(diff: Recorder, kind: NameKind, before: GeneratedName, after: GeneratedName) -> None:
    def shown(name: str) -> str:
        return f"{name}()" if kind == "builder" else name

    diff.add(
        RENAMED[kind],
        after.item,
        f"{_WHAT[kind]} {shown(before.name)} is now {shown(after.name)} ({item_label(after.item)})",
        stability=after.stability,
        old=before.name,
        new=after.name,
    )
