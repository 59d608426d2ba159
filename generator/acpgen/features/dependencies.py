"""The dependency checks of the feature manifest.

A feature's dependencies name features of the manifest, never itself, and have no cycles. A
feature whose items refer to a type that another feature owns (a field of that type, a variant
with that payload, a method with those params or result) needs that feature, directly or
through another dependency: a build with the feature alone would otherwise refer to a type it
does not have.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from acpgen.errors import Problem, pointer
from acpgen.features.items import references
from acpgen.features.model import Feature, Manifest
from acpgen.load.inventory import Node


def dependency_problems(manifest: Manifest, defs: Mapping[str, Node], items: Mapping[str, Node]) -> list[Problem]:
    """Every problem with the features' dependencies."""
    return _declared(manifest) + _cycles(manifest) + _missing(manifest, defs, items)


def _declared(manifest: Manifest) -> list[Problem]:
    names = manifest.names()
    problems = []
    for feature in manifest.features:
        for index, name in enumerate(feature.dependencies):
            where = f"{manifest.origin}#{pointer('features', feature.name, 'dependencies', index)}"
            if name == feature.name:
                problems.append(Problem(f"feature {name} depends on itself", where, "Remove it from its dependencies."))
            elif name not in names:
                problems.append(
                    Problem(
                        f"feature {feature.name} depends on {name!r}, which is not a feature of the manifest",
                        where,
                        f"Correct the name; the features are: {', '.join(names)}.",
                    )
                )
    return problems


def _cycles(manifest: Manifest) -> list[Problem]:
    """One problem per dependency cycle (self-dependencies aside), named from its smallest feature."""
    graph = {f.name: [d for d in f.dependencies if d != f.name and d in manifest.names()] for f in manifest.features}
    found: set[tuple[str, ...]] = set()
    for start in sorted(graph):
        _walk(graph, [start], found)
    return [
        Problem(
            f"features depend on each other in a cycle: {' -> '.join((*cycle, cycle[0]))}",
            f"{manifest.origin}#{pointer('features', cycle[0], 'dependencies')}",
            "Break the cycle: a feature cannot need a feature that needs it; merge them, or move the shared "
            "types into one of them.",
        )
        for cycle in sorted(found)
    ]


def _walk(graph: Mapping[str, list[str]], path: list[str], found: set[tuple[str, ...]]) -> None:
    for name in graph[path[-1]]:
        if name in path:
            cycle = path[path.index(name) :]
            turn = cycle.index(min(cycle))
            found.add(tuple(cycle[turn:] + cycle[:turn]))
        else:
            _walk(graph, [*path, name], found)


def _missing(manifest: Manifest, defs: Mapping[str, Node], items: Mapping[str, Node]) -> list[Problem]:
    counts = Counter(key for f in manifest.features for key in f.owns)
    owners = {key: f.name for f in manifest.features for key in f.owns if counts[key] == 1}  # else an overlap
    problems = []
    for feature in manifest.features:
        needed = manifest.closure([feature.name])
        reported: set[str] = set()
        for key in sorted(k for k in feature.owns if k in owners):
            for ref in sorted(references(defs, items, key)):
                owner = owners.get(f"type:{ref}")
                if owner is None or owner in needed or owner in reported:
                    continue
                reported.add(owner)
                problems.append(_missing_problem(manifest, feature, owner, key, ref))
    return problems


def _missing_problem(manifest: Manifest, feature: Feature, owner: str, key: str, ref: str) -> Problem:
    return Problem(
        f"feature {feature.name} needs feature {owner}: its item {key} refers to type:{ref}, which {owner} owns",
        f"{manifest.origin}#{pointer('features', feature.name, 'dependencies')}",
        f'Add "{owner}" to the dependencies of {feature.name} (or, if only {feature.name} uses type:{ref}, '
        f"move it into {feature.name}).",
    )
