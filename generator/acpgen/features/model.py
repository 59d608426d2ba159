"""Unstable features: named groups of the schema's unstable items, like the Rust crate's cargo features.

The schema marks nothing per feature, so a curated manifest (``schema/unstable-features.json``,
read by :mod:`acpgen.features.manifest`, checked against the schema by :mod:`acpgen.features.check`)
assigns every unstable item to one feature, named after the Rust crates' cargo feature without its
``unstable_`` prefix (``schema/upstream-features.json`` records the names checked). This module
holds the checked result; :mod:`acpgen.features.selection` turns a choice of names into the
items a build keeps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Feature:
    """One feature of the manifest, checked against the schema."""

    name: str
    description: str
    link: str | None
    dependencies: tuple[str, ...]
    """The features it needs, as the manifest declares them."""
    items: tuple[str, ...]
    """Item keys as the manifest lists them (``type:X`` stands for the type with everything in it)."""
    capabilities: tuple[str, ...]
    """Capability paths as the manifest lists them."""
    owns: frozenset[str]
    """Every unstable item key the feature owns: its items, what its types hold, its capabilities' properties."""
    rationale: str | None = None
    """Why the feature exists although the Rust crates have no cargo feature of that name."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """Every feature, by name, each unstable item owned by exactly one of them."""

    features: tuple[Feature, ...]
    """Sorted by name."""
    origin: str = ""
    """The manifest file, for messages."""

    def names(self) -> tuple[str, ...]:
        """The feature names, sorted."""
        return tuple(f.name for f in self.features)

    def feature(self, name: str) -> Feature:
        """The feature called ``name``."""
        for feature in self.features:
            if feature.name == name:
                return feature
        raise KeyError(name)

    def owner(self, key: str) -> str | None:
        """The feature that owns an item key, if any."""
        return next((f.name for f in self.features if key in f.owns), None)

    def owners(self) -> dict[str, str]:
        """Every owned item key -> the feature that owns it."""
        return {key: f.name for f in self.features for key in sorted(f.owns)}

    def closure(self, names: Iterable[str]) -> tuple[str, ...]:
        """``names`` and every feature they need, directly or not, sorted."""
        by_name = {f.name: f for f in self.features}
        found: set[str] = set()
        pending = [n for n in names if n in by_name]
        while pending:
            name = pending.pop()
            if name not in found:
                found.add(name)
                pending.extend(d for d in by_name[name].dependencies if d in by_name)
        return tuple(sorted(found))
