"""Break a schema document the way a careless edit, a bad merge or a hostile file would.

:func:`mutate` applies one mutation of a kind (``KINDS``) chosen by a :class:`Choose`, so hypothesis
(shrinkable) and a seeded ``random.Random`` drive the same code. A mutation never changes its input:
it copies the containers on the path it edits and shares the rest.

==================  ==============================================================================
delete              remove an object member or a list item anywhere
replace             put a copy of another node of the document in a node's place
duplicate           copy a node next to itself (a list item twice, an object member under a new key)
retype              put a value of another JSON type (or an odd string) in a node's place
keyword             give one keyword the schema relies on (``properties``, ``required``, ``anyOf``,
                    ``x-method``, ``x-side``, ``default``, ``const``, ``enum``, ``$ref``, ...) a value of
                    the wrong type or an odd value
rename-definition   rename a definition to an odd name, its references following or not
add-definition      add a definition (a copy of another, or an odd node) under an odd name
remove-definition   remove a definition
cycle               make definitions refer to themselves: inheritance (``allOf``) and alias cycles,
                    unions that contain themselves, recursive properties (legal)
nest                wrap a node in levels of ``allOf``, ``anyOf``, ``items``, ``properties``, ``not``
                    (from one level to thousands: the deepest only exist as text, see ``Mutant``)
break-reference     point a ``$ref`` at nothing, at another document or at a non-definition
change-keyword      rename a keyword (``oneOf`` to ``anyOf``, ``properties`` to ``patternProperties``,
                    ``const`` to ``enum``, ``x-method`` to ``x-side``, ...) or change a ``type``
==================  ==============================================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
Path = tuple[str | int, ...]
Doc = Any

ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**64,
    -(2**63) - 1,
    1e308,
    "",
    "x",
    "ü",
    "\ud800",
    'a"b',
    "a\\b",
    '"""',
    "'''",
    "line\nbreak",
    "nul\x00",
    "{x}",
    "x" * 3000,
    [],
    [None],
    [1, "a"],
    ["a", "a"],
    {},
    {"a": 1},
    {"type": "string"},
    {"$ref": "#/$defs/Nowhere"},
    {"type": "object", "properties": {"x": {"type": "integer"}}},
]
ODD_NAMES = [
    "x.y",
    "a/b",
    "a~b",
    "ü",
    "Ärger",
    "日本",
    "\ufb01le",
    "123",
    "1st",
    "",
    " ",
    "a b",
    "class",
    "None",
    "Any",
    "Field",
    "BaseModel",
    "WireModel",
    "OmitNone",
    "AcpMessage",
    "Literal",
    "model_config",
    "_meta",
    "__init__",
    "fooBar",
    "FooBar",
    "foo_bar",
    "FOO_BAR",
    "str",
    "x" * 200,
]
KEYWORDS = [
    "properties",
    "required",
    "anyOf",
    "oneOf",
    "allOf",
    "x-method",
    "x-side",
    "default",
    "const",
    "enum",
    "$ref",
    "type",
    "items",
    "additionalProperties",
    "title",
    "description",
    "discriminator",
    "format",
    "not",
    "x-deserialize-default-on-error",
    "x-deserialize-skip-invalid-items",
    "x-deserialize-default-on-null",
]
RENAMED_KEYWORDS = {
    "oneOf": ["anyOf", "allOf", "not"],
    "anyOf": ["oneOf", "allOf", "prefixItems"],
    "allOf": ["anyOf", "oneOf"],
    "properties": ["patternProperties", "$defs", "dependentSchemas"],
    "const": ["enum", "default", "examples"],
    "enum": ["const", "examples"],
    "$ref": ["$dynamicRef", "$anchor", "$id"],
    "items": ["prefixItems", "contains", "additionalProperties"],
    "additionalProperties": ["unevaluatedProperties", "items", "propertyNames"],
    "required": ["dependentRequired", "x-required"],
    "x-method": ["x-side", "title"],
    "x-side": ["x-method"],
    "title": ["description", "x-method"],
    "type": ["format", "x-type"],
}
TYPE_NAMES = [
    "string",
    "integer",
    "number",
    "boolean",
    "object",
    "array",
    "null",
    ["string", "null"],
    ["object", "array"],
]
BROKEN_REFS = [
    "#/$defs/Nowhere",
    "#/definitions/Thing",
    "other.json#/$defs/Thing",
    "#",
    "#/$defs/",
    "#/$defs",
    "#/$defs/ContentBlock/oneOf/0",
    "#thing",
    "",
    "https://example.com/schema.json",
]
WRAPPERS = ["allOf", "anyOf", "oneOf", "items", "properties", "not", "additionalProperties"]
DEPTHS = [1, 2, 3, 5, 20, 45, 60, 200, 600, 3000]
"""Levels of ``nest``: within the nesting limit (100 JSON levels) and beyond it, in structures Python's
JSON encoder writes and (past about 450) in text only."""
TEXT_DEPTH = 450
DEEP_MARK = "\u0000acp-deep\u0000"


class Choose(Protocol):
    """Where a mutation's decisions come from (``tests.support.instances.RandomChoices`` is one)."""

    def choice(self, options: Sequence[T]) -> T: ...
    def integer(self, low: int, high: int) -> int: ...


class Drawn:
    """Decisions drawn by hypothesis (shrinkable)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def choice(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))


@dataclass(frozen=True, slots=True)
class Mutant:
    """A mutated document, what was done to it, and where."""

    doc: Doc
    kind: str
    path: Path
    detail: str
    deep: tuple[str, int] | None = None
    """A nesting too deep to build as data: (wrapper, levels) to write in place of ``DEEP_MARK`` in the text."""

    def text(self) -> str:
        """The document as JSON text (the deep nesting spliced in as text)."""
        text = json.dumps(self.doc)
        if self.deep is None:
            return text
        wrapper, levels = self.deep
        opening, closing = _wrap_text(wrapper)
        return text.replace(json.dumps(DEEP_MARK), opening * levels + "{}" + closing * levels, 1)


def mutate(doc: Doc, choose: Choose, kind: str | None = None) -> Mutant:
    """One mutant of ``doc`` (a kind chosen unless given)."""
    kind = kind or choose.choice(list(KINDS))
    return KINDS[kind](doc, choose)


# --- paths ---------------------------------------------------------------------------------------


_LAST_PATHS: list[tuple[Doc, list[Path]]] = []
"""The paths of the document last asked about (mutations never change their input, so the pinned
document's paths are computed once, not once per mutant)."""


def paths(node: Doc) -> list[Path]:
    """Every path of the document (not the root), depth first in document order."""
    if _LAST_PATHS and _LAST_PATHS[0][0] is node:
        return _LAST_PATHS[0][1]
    found = _paths(node)
    _LAST_PATHS[:] = [(node, found)]
    return found


def _paths(node: Doc) -> list[Path]:
    found: list[Path] = []
    pending: list[tuple[Doc, Path]] = [(node, ())]
    while pending:
        current, path = pending.pop()
        if path:
            found.append(path)
        children = (
            current.items() if isinstance(current, dict) else enumerate(current) if isinstance(current, list) else ()
        )
        pending.extend(reversed([(value, (*path, key)) for key, value in children]))
    return found


def at(doc: Doc, path: Path) -> Doc:
    for part in path:
        doc = doc[part]
    return doc


def replaced(doc: Doc, path: Path, edit: Callable[[Doc], Doc]) -> Doc:
    """A copy of ``doc`` with the node at ``path`` replaced by ``edit(node)`` (only the spine is copied)."""
    if not path:
        return edit(doc)
    head, rest = path[0], path[1:]
    copy: Any = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[head] = replaced(doc[head], rest, edit)
    return copy


def _parent_edit(doc: Doc, path: Path, edit: Callable[[Doc, str | int], Doc]) -> Doc:
    """Replace the container holding ``path``'s node with ``edit(container copy, key)``."""

    def apply(container: Doc) -> Doc:
        copy: Any = dict(container) if isinstance(container, dict) else list(container)
        return edit(copy, path[-1])

    return replaced(doc, path[:-1], apply)


def _where(doc: Doc, choose: Choose, keep: Callable[[Path], bool] = lambda p: True) -> Path | None:
    found = [p for p in paths(doc) if keep(p)]
    return found[choose.integer(0, len(found) - 1)] if found else None


def _defs(doc: Doc) -> list[str]:
    defs = doc.get("$defs") if isinstance(doc, dict) else None
    return list(defs) if isinstance(defs, dict) else []


def _occurrences(doc: Doc, key: str) -> Iterator[Path]:
    for path in paths(doc):
        if path and path[-1] == key:
            yield path


# --- the kinds -------------------------------------------------------------------------------------


def delete(doc: Doc, choose: Choose) -> Mutant:
    path = _where(doc, choose)
    if path is None:
        return Mutant(doc, "delete", (), "nothing to delete")

    def drop(container: Doc, key: str | int) -> Doc:
        del container[key]
        return container

    return Mutant(_parent_edit(doc, path, drop), "delete", path, "")


def replace(doc: Doc, choose: Choose) -> Mutant:
    all_paths = paths(doc)
    target, donor = (all_paths[choose.integer(0, len(all_paths) - 1)] for _ in range(2))
    value = at(doc, donor)
    return Mutant(replaced(doc, target, lambda _: value), "replace", target, f"with the node at {list(donor)}")


def duplicate(doc: Doc, choose: Choose) -> Mutant:
    path = _where(doc, choose)
    if path is None:
        return Mutant(doc, "duplicate", (), "nothing to duplicate")
    value = at(doc, path)
    name = choose.choice([*ODD_NAMES, f"{path[-1]}Copy"])

    def twice(container: Doc, key: str | int) -> Doc:
        if isinstance(container, list):
            container.insert(int(key), value)
        else:
            container[name] = value
        return container

    return Mutant(_parent_edit(doc, path, twice), "duplicate", path, f"as {name!r}")


def retype(doc: Doc, choose: Choose) -> Mutant:
    path = _where(doc, choose)
    value = choose.choice(ODD_VALUES)
    if path is None:
        return Mutant(value, "retype", (), repr(value)[:60])
    return Mutant(replaced(doc, path, lambda _: value), "retype", path, repr(value)[:60])


def keyword(doc: Doc, choose: Choose) -> Mutant:
    name = choose.choice(KEYWORDS)
    found = list(_occurrences(doc, name))
    if not found:
        return retype(doc, choose)
    path = found[choose.integer(0, len(found) - 1)]
    value = choose.choice([*ODD_VALUES, *TYPE_NAMES, *BROKEN_REFS])
    return Mutant(replaced(doc, path, lambda _: value), "keyword", path, f"{name} = {repr(value)[:60]}")


def rename_definition(doc: Doc, choose: Choose) -> Mutant:
    names = _defs(doc)
    if not names:
        return retype(doc, choose)
    old = choose.choice(names)
    new = choose.choice([*ODD_NAMES, *names, old.lower(), old + "_", old.upper()])
    follow = choose.choice([True, False])
    defs = {(new if k == old else k): v for k, v in doc["$defs"].items()}
    result = {**doc, "$defs": defs}
    if follow:
        result = _rewrite_refs(result, f"#/$defs/{_escape(old)}", f"#/$defs/{_escape(new)}")
    return Mutant(
        result, "rename-definition", ("$defs", old), f"to {new!r}" + (", references follow" if follow else "")
    )


def add_definition(doc: Doc, choose: Choose) -> Mutant:
    names = _defs(doc)
    if not isinstance(doc, dict):
        return retype(doc, choose)
    name = choose.choice(ODD_NAMES)
    value = doc["$defs"][choose.choice(names)] if names and choose.choice([True, False]) else choose.choice(ODD_VALUES)
    defs = dict(doc["$defs"]) if isinstance(doc.get("$defs"), dict) else {}
    defs[name] = value
    return Mutant({**doc, "$defs": defs}, "add-definition", ("$defs", name), repr(value)[:60])


def remove_definition(doc: Doc, choose: Choose) -> Mutant:
    names = _defs(doc)
    if not names:
        return delete(doc, choose)
    name = choose.choice(names)
    defs = {k: v for k, v in doc["$defs"].items() if k != name}
    return Mutant({**doc, "$defs": defs}, "remove-definition", ("$defs", name), "")


def cycle(doc: Doc, choose: Choose) -> Mutant:
    names = [n for n in _defs(doc) if isinstance(doc["$defs"][n], dict)]
    if not names:
        return retype(doc, choose)
    a, b = choose.choice(names), choose.choice(names)
    how = choose.choice(list(_CYCLES))
    defs = dict(doc["$defs"])
    for name, node in _CYCLES[how](a, b, defs).items():
        defs[name] = node
    return Mutant({**doc, "$defs": defs}, "cycle", ("$defs", a), f"{how} with {b}")


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{_escape(name)}"}


def _recursive_property(a: str, b: str, defs: dict[str, Any]) -> dict[str, Any]:
    node = defs[a]
    props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
    children = {"type": "array", "items": _ref(a)}
    return {a: {**node, "type": "object", "properties": {**props, "children": children, "peer": _ref(b)}}}


_CYCLES: dict[str, Callable[[str, str, dict[str, Any]], dict[str, Any]]] = {
    "inheritance": lambda a, b, defs: {
        a: {**defs[a], "allOf": [_ref(b)]},
        b: {**defs[b], "allOf": [_ref(a)]} if a != b else {**defs[a], "allOf": [_ref(a)]},
    },
    "alias": lambda a, b, defs: {a: _ref(b), b: _ref(a)},
    "self-union": lambda a, b, defs: {a: {"anyOf": [_ref(a), _ref(b)]}},
    "recursive-property": _recursive_property,
    "nullable-self": lambda a, b, defs: {
        a: {"type": "object", "properties": {"next": {"anyOf": [_ref(a), {"type": "null"}]}, "value": _ref(b)}}
    },
}


def nest(doc: Doc, choose: Choose) -> Mutant:
    path = _where(doc, choose, lambda p: isinstance(p[-1], str))
    wrapper, levels = choose.choice(WRAPPERS), choose.choice(DEPTHS)
    if path is None:
        return retype(doc, choose)
    detail = f"{levels} levels of {wrapper}"
    if levels >= TEXT_DEPTH:
        return Mutant(replaced(doc, path, lambda _: DEEP_MARK), "nest", path, detail, deep=(wrapper, levels))

    def wrap(node: Doc) -> Doc:
        for _ in range(levels):
            node = _wrap(wrapper, node)
        return node

    return Mutant(replaced(doc, path, wrap), "nest", path, detail)


def _wrap(wrapper: str, node: Doc) -> Doc:
    if wrapper in ("allOf", "anyOf", "oneOf"):
        return {wrapper: [node]}
    if wrapper == "properties":
        return {"type": "object", "properties": {"p": node}}
    return {wrapper: node}


def _wrap_text(wrapper: str) -> tuple[str, str]:
    if wrapper in ("allOf", "anyOf", "oneOf"):
        return '{"' + wrapper + '": [', "]}"
    if wrapper == "properties":
        return '{"type": "object", "properties": {"p": ', "}}"
    return '{"' + wrapper + '": ', "}"


def break_reference(doc: Doc, choose: Choose) -> Mutant:
    found = list(_occurrences(doc, "$ref"))
    if not found:
        return keyword(doc, choose)
    path = found[choose.integer(0, len(found) - 1)]
    target = choose.choice(BROKEN_REFS)
    return Mutant(replaced(doc, path, lambda _: target), "break-reference", path, repr(target))


def change_keyword(doc: Doc, choose: Choose) -> Mutant:
    name = choose.choice(list(RENAMED_KEYWORDS))
    found = list(_occurrences(doc, name))
    if not found:
        return keyword(doc, choose)
    path = found[choose.integer(0, len(found) - 1)]
    if name == "type" and choose.choice([True, False]):
        value = choose.choice(TYPE_NAMES)
        return Mutant(replaced(doc, path, lambda _: value), "change-keyword", path, f"type = {value!r}")
    new = choose.choice(RENAMED_KEYWORDS[name])

    def rename(container: Doc, key: str | int) -> Doc:
        value = container.pop(key)
        if (key, new) == ("const", "enum"):
            value = [value]
        container[new] = value
        return container

    return Mutant(_parent_edit(doc, path, rename), "change-keyword", path, f"{name} -> {new}")


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _rewrite_refs(node: Doc, old: str, new: str) -> Doc:
    if isinstance(node, dict):
        return {k: (new if k == "$ref" and v == old else _rewrite_refs(v, old, new)) for k, v in node.items()}
    if isinstance(node, list):
        return [_rewrite_refs(v, old, new) for v in node]
    return node


KINDS: dict[str, Callable[[Doc, Choose], Mutant]] = {
    "delete": delete,
    "replace": replace,
    "duplicate": duplicate,
    "retype": retype,
    "keyword": keyword,
    "rename-definition": rename_definition,
    "add-definition": add_definition,
    "remove-definition": remove_definition,
    "cycle": cycle,
    "nest": nest,
    "break-reference": break_reference,
    "change-keyword": change_keyword,
}
