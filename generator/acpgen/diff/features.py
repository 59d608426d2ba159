"""Unstable features compared as wholes: a feature stabilised, added, removed or destabilised.

Each side's features come from its manifest (``unstable-features.json`` beside the schema), read
as far as it matches that side's schema. A feature of the old revision that the new manifest no
longer lists is *stabilised* when every item it owned that the new revision still has is stable
there (at least one), and *removed* otherwise; read backwards, a feature the new manifest adds is
*destabilised* when every item it owns was stable in the old revision, and *added* otherwise.
Findings on single items name their feature themselves (:class:`~acpgen.diff.findings.Finding`).
Without a manifest on one side only stabilisation and destabilisation can be told, since a
missing feature means nothing there.
"""

from __future__ import annotations

from collections.abc import Mapping

from acpgen.diff.findings import Recorder
from acpgen.diff.snapshot import Snapshot

__all__ = ["compare_features"]


def compare_features(diff: Recorder) -> None:
    """The feature-level findings between the two sides of ``diff``."""
    old, new = diff.old, diff.new
    for name, owned in sorted((old.features or {}).items()):
        if new.features is None or name not in new.features:
            _left(diff, name, owned, kept_in=new, leaving=True, manifest=new.features)
    for name, owned in sorted((new.features or {}).items()):
        if old.features is None or name not in old.features:
            _left(diff, name, owned, kept_in=old, leaving=False, manifest=old.features)


def _left(
    diff: Recorder,
    name: str,
    owned: frozenset[str],
    *,
    kept_in: Snapshot,
    leaving: bool,
    manifest: Mapping[str, frozenset[str]] | None,
) -> None:
    """A feature one side has and the other does not: ``kept_in`` is the other side (the new
    one for a feature that is ``leaving``, the old one for a feature that came)."""
    present = [key for key in owned if key in kept_in.items]
    stable = sum(kept_in.items[key].stability == "stable" for key in present)
    fate = _fate(len(owned), present, stable, kept_in, then="now" if leaving else "before")
    item = f"feature:{name}"
    if present and stable == len(present):
        if leaving:
            message = f"feature {name} is stable now ({fate})"
            diff.add("feature-stabilised", item, message, stability="stable", feature=name)
        else:
            message = f"feature {name} is new and its items were stable ({fate})"
            diff.add("feature-destabilised", item, message, stability="unstable", feature=name)
    elif manifest is not None or not present:
        if leaving:
            diff.add(
                "feature-removed", item, f"feature {name} was removed ({fate})", stability="unstable", feature=name
            )
        else:
            diff.add("feature-added", item, f"feature {name} was added ({fate})", stability="unstable", feature=name)


def _fate(total: int, present: list[str], stable: int, other: Snapshot, *, then: str) -> str:
    """What the other side makes of a feature's ``total`` items: how many it lacks, holds as
    stable, or gives to another feature."""
    elsewhere = sorted({f for key in present if (f := other.feature_of(key)) is not None})
    parts = []
    if total - len(present):
        parts.append(f"{total - len(present)} absent {then}")
    if stable:
        parts.append(f"{stable} stable {then}")
    if elsewhere:
        parts.append(f"{len(present) - stable} in {', '.join(elsewhere)} {then}")
    return f"of its {total} items, " + ", ".join(parts) if parts else f"{total} items"
