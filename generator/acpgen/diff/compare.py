"""Compare two snapshots and classify every change by a rule.

The order of the work: find renamed types (a removed and an added type of the same shape),
then compare methods (:mod:`~acpgen.diff.methods`), then every other item present on either
side (:mod:`~acpgen.diff.items`), then the generated names no item carries (:mod:`~acpgen.diff.names`),
then the capability rule tables
(:mod:`~acpgen.diff.capability_rules`), then the unstable features as wholes
(:mod:`~acpgen.diff.features`).
"""

from __future__ import annotations

from acpgen.diff.capability_rules import compare_capability_rules
from acpgen.diff.features import compare_features
from acpgen.diff.findings import Finding, Recorder
from acpgen.diff.items import compare_items
from acpgen.diff.methods import compare_methods
from acpgen.diff.names import compare_generated_names
from acpgen.diff.relations import Context
from acpgen.diff.renames import find_renames
from acpgen.diff.snapshot import Snapshot

__all__ = ["Finding", "compare"]


def compare(old: Snapshot, new: Snapshot) -> list[Finding]:
    """Every finding between ``old`` and ``new``, most severe first, then by rule and item."""
    renames = find_renames(old, new)
    diff = Recorder(old=old, new=new, ctx=Context(old_types=old.shapes, new_types=new.shapes, renames=renames))
    for old_name, new_name in sorted(renames.items()):
        diff.add(
            "type-renamed",
            f"type:{new_name}",
            f"type {old_name} is now named {new_name} (same shape)",
            stability=new.items[f"type:{new_name}"].stability,
            old=old_name,
            new=new_name,
        )
    compare_methods(diff)
    compare_items(diff)
    compare_generated_names(diff)
    compare_capability_rules(diff)
    compare_features(diff)
    return sorted(diff.findings, key=Finding.sort_key)
