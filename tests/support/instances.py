"""Generate JSON values valid against one ``$defs`` entry of the ACP schema.

A small stand-in for hypothesis-jsonschema, limited to the keywords the ACP schema uses. Every
union (``anyOf``/``oneOf``) is resolved by drawing one branch and merging it, with ``$ref`` and
``allOf`` parts, into a single combinator-free object schema; the value is then generated from
that. Past ``max_depth`` optional properties are left out, arrays and maps stay empty and unions
prefer their null or scalar branches, which bounds the recursion. The catch-all branch of an
extensible union (``not`` of the known tags) gets a ``_x_``-prefixed tag, ``additionalProperties``
or ``unevaluatedProperties: true`` sometimes adds vendor keys, integer formats hit their bounds.

One generator, two sources of choices: hypothesis (``instances``: a strategy, filtered with a
Draft 2020-12 validator so only schema-valid values come out, and shrinkable) and a seeded
``random.Random`` (``sample``: one value plus the *sites* it was built from, each value's path
and flattened schema, which :mod:`tests.support.mutations` uses to break it in a chosen place).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

__all__ = ["Choices", "RandomChoices", "Site", "instances", "sample", "union_size", "validator"]

Schema = dict[str, Any]
Path = tuple[str | int, ...]
T = TypeVar("T")

INT_FORMATS: dict[str, tuple[int, int]] = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
REALISTIC = [
    "",
    "hello",
    "Hello, world!",
    "/home/user/project/src/main.py",
    "sess_01HZX3",
    "tool-call-7",
    "text/plain",
    "image/png",
    "2025-01-01T00:00:00Z",
    "line 1\nline 2",
    "émoji 🙂 漢字",
    "  ",
    "null",
]
SAFE = 2**53 - 1
"""The largest integer a double (a JavaScript number) holds exactly."""
URIS = ["file:///home/user/project/README.md", "https://example.com/docs?q=1#top", "mcp://server/resource"]
EXTRA_KEYS = ["_x", "x-vendor", "example.com/flag"]
# Characters of random text: letters, digits, JSON's special characters, controls, non-ASCII and
# astral code points (never a lone surrogate, which is no Unicode text).
ALPHABET = 'abcXYZ019 _-./:"\\\n\t\x00\x1féü漢🙂\u2028'
# Resolved by flattening. Other keywords a generator does not need (description, default,
# discriminator, title, x-*) are carried along and ignored.
COMBINATORS = ("$ref", "allOf", "anyOf", "oneOf")


class Choices(Protocol):
    """Where the generator's decisions come from."""

    def choice(self, options: Sequence[T]) -> T: ...
    def integer(self, low: int, high: int) -> int: ...
    def number(self, low: float | None, high: float | None) -> float: ...
    def text(self, low: int, high: int) -> str: ...
    def regex(self, pattern: str) -> str: ...


class _Drawn:
    """Choices drawn by hypothesis (shrinkable)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def choice(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def number(self, low: float | None, high: float | None) -> float:
        return self.draw(st.floats(low, high, allow_nan=False, allow_infinity=False))

    def text(self, low: int, high: int) -> str:
        return self.draw(st.text(min_size=low, max_size=high))

    def regex(self, pattern: str) -> str:
        return self.draw(st.from_regex(pattern, fullmatch=True))


class RandomChoices:
    """Choices from a seeded ``random.Random``: the same seed gives the same values on every run."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, low: int, high: int) -> int:
        roll = self.rng.random()
        if roll < 0.5 and low <= 100 and high >= -100:  # small values are the common case on the wire
            return self.rng.randint(max(low, -100), min(high, 100))
        if roll < 0.9 and low <= SAFE and high >= -SAFE:  # then values a double holds exactly
            return self.rng.randint(max(low, -SAFE), min(high, SAFE))
        return self.rng.randint(low, high)

    def number(self, low: float | None, high: float | None) -> float:
        low = -1e12 if low is None else low
        high = 1e12 if high is None else high
        value = self.choice([0.5, -0.0, 1e-7, 3.141592653589793, 2.0**60, 1e300])
        if self.rng.random() < 0.5 and low <= value <= high:
            return value
        return self.rng.uniform(low, high)

    def text(self, low: int, high: int) -> str:
        return "".join(self.choice(ALPHABET) for _ in range(self.rng.randint(low, high)))

    def regex(self, pattern: str) -> str:
        raise NotImplementedError(f"no seeded generator for pattern {pattern!r} (the ACP schema uses none)")


@dataclass(frozen=True, slots=True)
class Site:
    """A value of a generated instance: where it is, and the flattened schema it was made from."""

    path: Path
    flat: Schema
    required: bool
    """A required property of its object (always true for the root and for array items)."""


def instances(root: Schema, def_name: str, *, max_depth: int = 4, branch: int | None = None) -> st.SearchStrategy[Any]:
    """JSON values valid against ``{"$ref": "#/$defs/<def_name>", "$defs": root["$defs"]}``.

    ``branch`` pins the top-level union of the definition to one branch (see ``union_size``), so a
    test can give every branch its own examples.
    """
    start = _start(root, def_name, branch)
    check = validator(root, def_name)

    @st.composite
    def drawn(draw: st.DrawFn) -> Any:
        return _Generator(root["$defs"], max_depth, _Drawn(draw)).value(start)

    return drawn().filter(check.is_valid)


def sample(root: Schema, def_name: str, rng: random.Random, *, max_depth: int = 3) -> tuple[Any, list[Site]]:
    """One value for ``def_name`` from seeded choices, and the sites it is made of (root first).

    Almost always schema-valid; a caller that needs validity checks it (``validator``).
    """
    generator = _Generator(root["$defs"], max_depth, RandomChoices(rng), record=True)
    value = generator.value(_start(root, def_name, None))
    return value, generator.sites


def union_size(root: Schema, def_name: str) -> int:
    """How many branches the top-level union (``oneOf``, else ``anyOf``) of a definition has; 0 if none."""
    definition = root["$defs"][def_name]
    return len(definition.get("oneOf", definition.get("anyOf", [])))


def validator(root: Schema, def_name: str) -> Draft202012Validator:
    """A Draft 2020-12 validator of ``$defs[def_name]`` (cached per schema content)."""
    return _validator(json.dumps(root["$defs"], sort_keys=True), def_name)


@cache
def _validator(defs_json: str, def_name: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"#/$defs/{def_name}", "$defs": json.loads(defs_json)})


def _start(root: Schema, def_name: str, branch: int | None) -> Schema:
    if branch is None:
        return {"$ref": f"#/$defs/{def_name}"}
    start = dict(root["$defs"][def_name])
    key = "oneOf" if "oneOf" in start else "anyOf"
    start[key] = [start[key][branch]]
    return start


class _Generator:
    def __init__(self, defs: dict[str, Schema], max_depth: int, choices: Choices, *, record: bool = False) -> None:
        self.defs = defs
        self.max_depth = max_depth
        self.choices = choices
        self.record = record
        self.sites: list[Site] = []

    def value(self, schema: Schema, depth: int = 0, path: Path = (), required: bool = True) -> Any:
        flat = self.flatten(schema, depth)
        if self.record:
            self.sites.append(Site(path, flat, required))
        return self.generate(flat, depth, path)

    def resolve(self, ref: str) -> Schema:
        prefix = "#/$defs/"
        assert ref.startswith(prefix), f"unsupported $ref {ref}"
        return self.defs[ref.removeprefix(prefix)]

    def flatten(self, schema: Schema, depth: int) -> Schema:
        """One combinator-free schema out of ``schema``: $ref and allOf merged, one branch per union."""
        out: Schema = {k: v for k, v in schema.items() if k not in COMBINATORS and k != "not"}
        out["_not"] = [schema["not"]] if "not" in schema else []
        if "$ref" in schema:
            out["_def"] = schema["$ref"].removeprefix("#/$defs/")  # the most specific wins in the merge
        parts = [self.resolve(schema["$ref"])] if "$ref" in schema else []
        parts += schema.get("allOf", [])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                parts.append(self.choices.choice(self._branches(schema[key], depth)))
        for part in parts:
            _merge(out, self.flatten(part, depth))
        return out

    def _branches(self, branches: list[Schema], depth: int) -> list[Schema]:
        """All branches, or past max_depth only the shallow ones (null/scalar) when there are some."""
        if depth < self.max_depth:
            return branches
        shallow = [b for b in branches if not ({"$ref", "allOf", "properties", "items"} & b.keys())]
        return shallow or branches

    # -- generation from a flat schema ---------------------------------------------------------------

    def generate(self, flat: Schema, depth: int, path: Path) -> Any:
        if "const" in flat:
            return flat["const"]
        if "enum" in flat:
            return self.choices.choice(flat["enum"])
        types = flat.get("type")
        if types is None:
            types = ["object"] if {"properties", "required"} & flat.keys() else ["array"] if "items" in flat else []
        elif isinstance(types, str):
            types = [types]
        if not types:  # any JSON value; null and {} first, they are the edge cases of an untyped property
            return self.choices.choice([lambda: None, lambda: {}, self.any_json])()
        if depth >= self.max_depth and "null" in types:
            types = ["null"]
        return self._typed(self.choices.choice(types), flat, depth, path)

    def _typed(self, kind: str, flat: Schema, depth: int, path: Path) -> Any:
        match kind:
            case "null":
                return None
            case "boolean":
                return self.choices.choice([False, True])
            case "integer":
                return self._integer(flat)
            case "number":
                return self.choices.choice([self._integer, self._number])(flat)
            case "string":
                return self._string(flat)
            case "array":
                return self._array(flat, depth, path)
            case "object":
                return self._object(flat, depth, path)
        raise AssertionError(f"unsupported type {kind!r}")

    def _array(self, flat: Schema, depth: int, path: Path) -> list[Any]:
        low = flat.get("minItems", 0)
        high = flat.get("maxItems", low + 3) if depth < self.max_depth else low
        size = self.choices.integer(low, high)
        if "items" not in flat:
            return [self.any_json() for _ in range(size)]
        return [self.value(flat["items"], depth + 1, (*path, index)) for index in range(size)]

    def _object(self, flat: Schema, depth: int, path: Path) -> dict[str, Any]:
        properties: dict[str, Schema] = flat.get("properties", {})
        forbidden = _forbidden_tags(flat["_not"])
        required = flat.get("required", [])
        names = [name for name in properties if name in required or depth < self.max_depth]
        names += [name for name in required if name not in properties]
        out: dict[str, Any] = {}
        for name in names:
            if name not in required and not self.choices.choice([False, True]):
                continue
            if name in forbidden:
                out[name] = "_x_" + self.choices.text(0, 8)
            elif name in properties:
                out[name] = self.value(properties[name], depth + 1, (*path, name), name in required)
            else:
                out[name] = self.any_json()
        return self._extras(flat, depth, path, properties) | out

    def _extras(self, flat: Schema, depth: int, path: Path, properties: dict[str, Schema]) -> dict[str, Any]:
        extra = flat.get("additionalProperties", flat.get("unevaluatedProperties"))
        if depth >= self.max_depth or extra in (None, False):
            return {}
        extras: dict[str, Any] = {}
        for _ in range(self.choices.integer(0, 2)):
            if extra is True:
                key = self.choices.choice([k for k in EXTRA_KEYS if k not in properties])
                extras[key] = self.any_json()
            else:
                key = self.choices.text(0, 10)
                if key not in properties:
                    extras[key] = self.value(extra, depth + 1, (*path, key))
        return extras

    def any_json(self, budget: int = 6) -> Any:
        """Any JSON value, of at most about ``budget`` leaves."""
        kind = self.choices.choice(["null", "bool", "int", "float", "text", "list", "dict"] if budget > 1 else ["null"])
        leaves: dict[str, Callable[[], Any]] = {
            "null": lambda: None,
            "bool": lambda: self.choices.choice([False, True]),
            "int": lambda: self.choices.integer(-(2**63), 2**64 - 1),
            "float": lambda: self.choices.number(None, None),
            "text": lambda: self.choices.text(0, 8),
        }
        if kind in leaves:
            return leaves[kind]()
        size = self.choices.integer(0, 3)
        if kind == "list":
            return [self.any_json(budget // 2) for _ in range(size)]
        return {self.choices.text(0, 5): self.any_json(budget // 2) for _ in range(size)}

    def _integer(self, flat: Schema) -> int:
        low, high = _integer_range(flat)
        edges = [v for v in (low, high, 0, 1) if low <= v <= high]
        if edges and self.choices.choice([True, False, False, False]):
            return self.choices.choice(edges)
        return self.choices.integer(low, high)

    def _number(self, flat: Schema) -> float:
        return self.choices.number(flat.get("minimum"), flat.get("maximum"))

    def _string(self, flat: Schema) -> str:
        if "pattern" in flat:
            return self.choices.regex(flat["pattern"])
        low, high = flat.get("minLength", 0), flat.get("maxLength")
        high = high if high is not None else low + 20
        samples = URIS if flat.get("format") == "uri" else REALISTIC + URIS
        fitting = [s for s in samples if low <= len(s) <= high]
        if flat.get("format") == "uri" and fitting:
            return self.choices.choice(fitting)
        if fitting and self.choices.choice([False, True]):
            return self.choices.choice(fitting)
        return self.choices.text(low, high)


def _integer_range(flat: Schema) -> tuple[int, int]:
    """The range of an integer schema: its format's, narrowed by ``minimum``/``maximum``."""
    low, high = INT_FORMATS.get(flat.get("format", ""), (-(2**63), 2**64 - 1))
    if "minimum" in flat:
        low = max(low, flat["minimum"])
    if "maximum" in flat:
        high = min(high, flat["maximum"])
    return low, high


def _merge(into: Schema, part: Schema) -> None:
    """Merges the flat schema ``part`` into ``into`` (both describe the same value)."""
    for key, value in part.items():
        if key == "type" and "type" in into:
            mine = {into["type"]} if isinstance(into["type"], str) else set(into["type"])
            theirs = {value} if isinstance(value, str) else set(value)
            into["type"] = sorted(mine & theirs)
        elif key == "properties":
            merged = dict(into.get("properties", {}))
            for name, sub in value.items():
                merged[name] = {"allOf": [merged[name], sub]} if name in merged else sub
            into["properties"] = merged
        elif key in ("required", "_not"):
            into[key] = [*into.get(key, []), *(v for v in value if v not in into.get(key, []))]
        else:
            into[key] = value


def _forbidden_tags(nots: list[Schema]) -> set[str]:
    """Properties that a ``not`` pins to consts (the tag of an extensible union's catch-all branch)."""
    found: set[str] = set()
    for schema in nots:
        for alternative in schema.get("anyOf", [schema]):
            found |= {name for name, sub in alternative.get("properties", {}).items() if "const" in sub}
    return found
