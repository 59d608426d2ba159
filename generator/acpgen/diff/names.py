"""What users import: the generated classes of the items on both sides compared.

The wire can stay the same while the code generated for it changes (a union variant titled
differently gets another class name; a variant that stops adding anything to the type it
refers to loses its own class). Such changes break code using the bindings, not the wire.
"""

from __future__ import annotations

from collections.abc import Mapping

from acpgen.diff.findings import Recorder, item_label
from acpgen.diff.snapshot import Item


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
