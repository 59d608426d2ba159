"""Reference cycles that no Python type can express, refused before anything is built from them.

A definition may refer to itself through a property, an array item or a map value (a tree
node's ``children``): the generated class then refers to itself by name, which pydantic
resolves once the module is loaded. It may not *be* itself: a definition that is a reference
to (``$ref``), extends (``allOf``) or is a union containing (``anyOf``/``oneOf``) a definition
that in turn is, extends or contains the first. Such a cycle becomes classes that inherit from
each other or type aliases that are their own value, which no module can define.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.load.inventory import def_name

Path = tuple[str | int, ...]
_COMBINATORS = ("allOf", "anyOf", "oneOf")


def check_reference_cycles(defs: Mapping[str, Any]) -> None:
    """Raise :class:`AcpgenError` naming one cycle of definitions that are (or extend, or contain) each other."""
    edges = {name: list(_structural_refs(node)) for name, node in sorted(defs.items())}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in edges:
        found = _cycle_from(start, edges, state, defs)
        if found is not None:
            raise AcpgenError(_problem(found))


def _structural_refs(node: Any) -> Iterator[tuple[str, Path]]:
    """(definition, path of its ``$ref`` below the node) for the references that make up the node
    itself: its own ``$ref`` and those of its ``allOf``/``anyOf``/``oneOf`` members, at any depth."""
    pending: list[tuple[Any, Path]] = [(node, ())]
    while pending:
        current, path = pending.pop()
        if not isinstance(current, Mapping):
            continue
        ref = current.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield def_name(ref), (*path, "$ref")
        for keyword in reversed(_COMBINATORS):
            members = current.get(keyword)
            if isinstance(members, list):
                pending.extend(((m, (*path, keyword, i)) for i, m in reversed(list(enumerate(members)))))


_Step = tuple[str, Path]
"""A definition, and the path (below it) of the reference to the next one in a cycle."""


def _cycle_from(
    start: str, edges: Mapping[str, list[_Step]], state: dict[str, int], defs: Mapping[str, Any]
) -> list[_Step] | None:
    """A cycle reachable from ``start`` (depth first, without recursion), or None."""
    if state.get(start):
        return None
    trail: list[_Step] = []
    stack: list[tuple[str, Iterator[_Step]]] = [(start, iter(edges[start]))]
    state[start] = 1
    while stack:
        name, targets = stack[-1]
        step = next(targets, None)
        if step is None:
            state[name] = 2
            stack.pop()
            if trail:
                trail.pop()
            continue
        target, path = step
        if target not in defs:
            continue
        if state.get(target) == 1:
            names = [n for n, _ in stack]
            trail.append((name, path))
            first = names.index(target)
            return trail[first:]
        if not state.get(target):
            trail.append((name, path))
            state[target] = 1
            stack.append((target, iter(edges[target])))
    return None


def _problem(cycle: list[_Step]) -> Problem:
    names = [name for name, _ in cycle]
    chain = " -> ".join([*names, names[0]])
    first, path = cycle[0]
    return Problem(
        what=f"definitions {chain} form a cycle: each is, extends or contains the next "
        "(through $ref, allOf, anyOf or oneOf), so none of them can be defined first",
        where=pointer("$defs", first, *path),
        hint="Break the cycle in the schema: a type may refer to itself only through a property, "
        "an array item or a map value.",
    )
