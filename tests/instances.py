"""Hypothesis strategies for JSON values valid against one ``$defs`` entry of the ACP schema.

A small stand-in for hypothesis-jsonschema, limited to the keywords the ACP schema uses. Every
union (``anyOf``/``oneOf``) is resolved by drawing one branch and merging it, with ``$ref`` and
``allOf`` parts, into a single combinator-free object schema; the value is then generated from
that. Past ``max_depth`` optional properties are left out, arrays and maps stay empty and unions
prefer their null or scalar branches, which bounds the recursion. The catch-all branch of an
extensible union (``not`` of the known tags) gets a ``_x_``-prefixed tag, ``additionalProperties``
or ``unevaluatedProperties: true`` sometimes adds vendor keys, integer formats hit their bounds.
The result is finally filtered with a Draft 2020-12 validator of the target, so only schema-valid
values come out; the generator is built so that the filter (almost) never rejects.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

__all__ = ["instances", "union_size", "validator"]

Schema = dict[str, Any]

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
URIS = ["file:///home/user/project/README.md", "https://example.com/docs?q=1#top", "mcp://server/resource"]
EXTRA_KEYS = ["_x", "x-vendor", "example.com/flag"]
JSON_LEAVES = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False)
)
ANY_JSON: st.SearchStrategy[Any] = st.recursive(
    JSON_LEAVES | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
# Resolved by flattening. Other keywords a generator does not need (description, default,
# discriminator, title, x-*) are carried along and ignored.
COMBINATORS = ("$ref", "allOf", "anyOf", "oneOf")


def instances(root: Schema, def_name: str, *, max_depth: int = 4, branch: int | None = None) -> st.SearchStrategy[Any]:
    """JSON values valid against ``{"$ref": "#/$defs/<def_name>", "$defs": root["$defs"]}``.

    ``branch`` pins the top-level union of the definition to one branch (see ``union_size``), so a
    test can give every branch its own examples.
    """
    start: Schema = {"$ref": f"#/$defs/{def_name}"}
    if branch is not None:
        start = dict(root["$defs"][def_name])
        key = "oneOf" if "oneOf" in start else "anyOf"
        start[key] = [start[key][branch]]
    check = validator(root, def_name)
    return _Generator(root["$defs"], max_depth).value(start, 0).filter(check.is_valid)


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


class _Generator:
    def __init__(self, defs: dict[str, Schema], max_depth: int) -> None:
        self.defs = defs
        self.max_depth = max_depth

    def resolve(self, ref: str) -> Schema:
        prefix = "#/$defs/"
        assert ref.startswith(prefix), f"unsupported $ref {ref}"
        return self.defs[ref.removeprefix(prefix)]

    def value(self, schema: Schema, depth: int) -> st.SearchStrategy[Any]:
        return _drawn(self, schema, depth)

    def flatten(self, draw: st.DrawFn, schema: Schema, depth: int) -> Schema:
        """Draws one combinator-free schema out of ``schema``: $ref and allOf merged, one branch per union."""
        out: Schema = {k: v for k, v in schema.items() if k not in COMBINATORS and k != "not"}
        out["_not"] = [schema["not"]] if "not" in schema else []
        parts = [self.resolve(schema["$ref"])] if "$ref" in schema else []
        parts += schema.get("allOf", [])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                parts.append(draw(st.sampled_from(self._branches(schema[key], depth))))
        for part in parts:
            _merge(out, self.flatten(draw, part, depth))
        return out

    def _branches(self, branches: list[Schema], depth: int) -> list[Schema]:
        """All branches, or past max_depth only the shallow ones (null/scalar) when there are some."""
        if depth < self.max_depth:
            return branches
        shallow = [b for b in branches if not ({"$ref", "allOf", "properties", "items"} & b.keys())]
        return shallow or branches

    # -- generation from a flat schema ---------------------------------------------------------------

    def generate(self, flat: Schema, depth: int) -> st.SearchStrategy[Any]:
        if "const" in flat:
            return st.just(flat["const"])
        if "enum" in flat:
            return st.sampled_from(flat["enum"])
        types = flat.get("type")
        if types is None:
            types = ["object"] if {"properties", "required"} & flat.keys() else ["array"] if "items" in flat else []
        elif isinstance(types, str):
            types = [types]
        if not types:  # any JSON value; null and {} first, they are the edge cases of an untyped property
            return st.sampled_from([None, {}]) | ANY_JSON
        if depth >= self.max_depth and "null" in types:
            types = ["null"]
        return st.one_of([self._typed(t, flat, depth) for t in types])

    def _typed(self, kind: str, flat: Schema, depth: int) -> st.SearchStrategy[Any]:
        match kind:
            case "null":
                return st.none()
            case "boolean":
                return st.booleans()
            case "integer":
                return _integers(flat)
            case "number":
                return _integers(flat) | _floats(flat)
            case "string":
                return _strings(flat)
            case "array":
                return self._array(flat, depth)
            case "object":
                return self._object(flat, depth)
        raise AssertionError(f"unsupported type {kind!r}")

    def _array(self, flat: Schema, depth: int) -> st.SearchStrategy[list[Any]]:
        low = flat.get("minItems", 0)
        high = flat.get("maxItems", low + 3) if depth < self.max_depth else low
        items = self.value(flat["items"], depth + 1) if "items" in flat else ANY_JSON
        return st.lists(items, min_size=low, max_size=high)

    def _object(self, flat: Schema, depth: int) -> st.SearchStrategy[dict[str, Any]]:
        properties: dict[str, Schema] = flat.get("properties", {})
        forbidden = _forbidden_tags(flat["_not"])
        fields: dict[str, st.SearchStrategy[Any]] = {
            name: _other_tag() if name in forbidden else self.value(sub, depth + 1) for name, sub in properties.items()
        }
        fields |= {name: ANY_JSON for name in flat.get("required", []) if name not in fields}
        required = {name: fields[name] for name in flat.get("required", [])}
        optional = {name: s for name, s in fields.items() if name not in required} if depth < self.max_depth else {}
        known = st.fixed_dictionaries(required, optional=optional)
        extra = flat.get("additionalProperties", flat.get("unevaluatedProperties"))
        if depth >= self.max_depth or extra in (None, False):
            return known
        if extra is True:
            keys, values = st.sampled_from([k for k in EXTRA_KEYS if k not in properties]), ANY_JSON
        else:
            keys, values = st.text(max_size=10).filter(lambda k: k not in properties), self.value(extra, depth + 1)
        extras = st.dictionaries(keys, values, max_size=2)
        return st.builds(_with_extras, known, extras)


@st.composite
def _drawn(draw: st.DrawFn, generator: _Generator, schema: Schema, depth: int) -> Any:
    return draw(generator.generate(generator.flatten(draw, schema, depth), depth))


def _with_extras(known: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    return extras | known


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


def _other_tag() -> st.SearchStrategy[str]:
    """A tag no known branch uses: the known tags never start with ``_x_``."""
    return st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", max_size=8).map(lambda s: f"_x_{s}")


def _integers(flat: Schema) -> st.SearchStrategy[int]:
    low, high = INT_FORMATS.get(flat.get("format", ""), (None, None))
    if "minimum" in flat:
        low = flat["minimum"] if low is None else max(low, flat["minimum"])
    if "maximum" in flat:
        high = flat["maximum"] if high is None else min(high, flat["maximum"])
    edges = [
        v for v in (low, high, 0, 1) if v is not None and (low is None or v >= low) and (high is None or v <= high)
    ]
    return st.sampled_from(edges) | st.integers(low, high) if edges else st.integers(low, high)


def _floats(flat: Schema) -> st.SearchStrategy[float]:
    return st.floats(flat.get("minimum"), flat.get("maximum"), allow_nan=False, allow_infinity=False)


def _strings(flat: Schema) -> st.SearchStrategy[str]:
    if "pattern" in flat:
        pattern: str = flat["pattern"]
        return st.from_regex(pattern, fullmatch=True)
    low, high = flat.get("minLength", 0), flat.get("maxLength")
    text = st.text(min_size=low, max_size=high if high is not None else low + 20)
    samples = URIS if flat.get("format") == "uri" else REALISTIC + URIS
    fitting = [s for s in samples if low <= len(s) and (high is None or len(s) <= high)]
    if flat.get("format") == "uri":
        return st.sampled_from(fitting) if fitting else text
    return text | st.sampled_from(fitting) if fitting else text
