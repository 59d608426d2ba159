"""Choose unstable features: names -> the features with their dependencies -> the unstable items to keep.

A build of a selection holds the stable protocol plus exactly the items its features own, and
the features they need. No feature is the stable build; every feature is the unstable build.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acpgen.errors import AcpgenError, Problem
from acpgen.features.model import Manifest
from acpgen.load.inventory import const_of, ref_name, union_branches, variant_keys
from acpgen.load.stability import drop_default_members, drop_property, without_types


@dataclass(frozen=True, slots=True)
class Selection:
    """The features of one build and the unstable items it keeps."""

    requested: tuple[str, ...]
    """The names asked for, in order, each once."""
    features: tuple[str, ...]
    """Those and every feature they need, sorted: what the build records (``FEATURES``)."""
    items: frozenset[str]
    """The unstable item keys the build keeps: every item the features own."""
    capabilities: tuple[str, ...]
    """The unstable capabilities the build keeps, sorted."""

    def dropped(self, unstable: frozenset[str]) -> frozenset[str]:
        """The unstable items a build of this selection leaves out."""
        return unstable - self.items


def select(manifest: Manifest, names: Sequence[str], origin: str) -> Selection:
    """The selection of ``names``; ``origin`` says where they were given (``--unstable-feature``, or a
    JSON pointer into the settings, to which each name's index is appended)."""
    known = manifest.names()
    problems = [
        Problem(
            f"unknown unstable feature {name!r}",
            f"{origin}/{index}" if "#" in origin else origin,
            f"The features are: {', '.join(known)} (`acpgen features` lists what each holds).",
        )
        for index, name in enumerate(names)
        if name not in known
    ]
    if problems:
        raise AcpgenError(*problems)
    chosen = manifest.closure(names)
    features = [manifest.feature(n) for n in chosen]
    return Selection(
        requested=tuple(dict.fromkeys(names)),
        features=chosen,
        items=frozenset().union(*(f.owns for f in features)),
        capabilities=tuple(sorted(p for f in features for p in f.capabilities)),
    )


def selected_schema(doc: Mapping[str, Any], dropped: frozenset[str]) -> tuple[dict[str, Any], list[str]]:
    """The schema of a selection: the unstable schema ``doc`` without the ``dropped`` items, without
    the union branches (at any depth: envelopes' ``params``, the root's message groups) that refer
    to a dropped type, and without dropped fields in default values; with the JSON pointers of
    those branches."""
    result, gone = without_types(doc, dropped)
    fields: set[tuple[str, str]] = set()
    for name, node in result["$defs"].items():
        _drop_branches(name, node, dropped)
        for prop in [p for p in node.get("properties", {}) if f"field:{name}.{p}" in dropped]:
            fields.add((name, prop))
            drop_property(node, prop)
    pruned: list[str] = []
    _prune(result, gone, "", pruned)
    drop_default_members(result, fields)
    return result, pruned


def _drop_branches(name: str, node: dict[str, Any], dropped: frozenset[str]) -> None:
    found = union_branches(node)
    if found is None:
        return
    keys = {id(b): k for b, k in zip(found[1], variant_keys(found[1]), strict=True)}
    node[found[0]] = [
        b
        for b in node[found[0]]
        if f"variant:{name}[{keys.get(id(b))}]" not in dropped and f"value:{name}={const_of(b)}" not in dropped
    ]


def _prune(node: Any, gone: set[str], where: str, pruned: list[str]) -> bool:
    """Drop union branches that refer to a gone type, anywhere; True when ``node`` then admits nothing."""
    if isinstance(node, list):
        for index, value in enumerate(node):
            _prune(value, gone, f"{where}/{index}", pruned)
        return False
    if not isinstance(node, dict):
        return False
    empty = False
    for keyword in ("oneOf", "anyOf"):
        if isinstance(node.get(keyword), list):
            kept = []
            for index, branch in enumerate(node[keyword]):
                place = f"{where}/{keyword}/{index}"
                if isinstance(branch, dict) and (ref_name(branch) in gone or _prune(branch, gone, place, pruned)):
                    pruned.append(f"{place} -> {ref_name(branch)}")
                else:
                    kept.append(branch)
            node[keyword] = kept
            empty = empty or not kept
    for key, value in node.items():
        if key not in ("oneOf", "anyOf"):
            _prune(value, gone, f"{where}/{key}", pruned)
    return empty
