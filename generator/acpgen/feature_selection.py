"""Choose unstable features: names -> the features with their dependencies -> the unstable items to keep.

A build of a selection holds the stable protocol plus exactly the items its features own, and
the features they need. No feature is the stable build; every feature is the unstable build.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acpgen.errors import AcpgenError, Problem
from acpgen.features import Manifest


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
