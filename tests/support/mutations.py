"""Break a generated instance in one chosen place, the way a faulty or newer peer would.

Each mutation kind applies to some *sites* of an instance (its values with their flattened
schema, from :func:`tests.support.instances.sample`). :func:`mutate` picks a kind among those that apply
somewhere in the instance, then one site of that kind, both from a seeded ``random.Random``, so
a seed always gives the same mutant. The kinds (``KINDS``):

==================  ================================================================================
wrong-type          a value of another JSON type than the site admits
null                ``null`` where the site does not admit it
missing-required    a required property removed
extra-field         an unknown property added to an object
unknown-tag         a union's tag set to a value no branch has (``_x_...``)
malformed-tag       a union's tag set to a value that is not a string
bad-enum            an enum (or constant) string set to a value it does not list
integral-float      an integer written as a float with no fraction (``3.0``)
fraction            an integer given a fraction (``3.5``)
out-of-range        an integer just outside the range of its format (uint16, uint32, int64, ...)
bad-item            a malformed item inserted into a ``x-deserialize-skip-invalid-items`` array
bad-lenient         a value of another type in a ``x-deserialize-default-on-error`` property
null-default        ``null`` in a ``x-deserialize-default-on-null`` property
bad-meta            a ``_meta`` that is not an object
==================  ================================================================================
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.instances import INT_FORMATS, Path, Schema, Site

DEFAULT_ON_ERROR = "x-deserialize-default-on-error"
SKIP_INVALID_ITEMS = "x-deserialize-skip-invalid-items"
DEFAULT_ON_NULL = "x-deserialize-default-on-null"
UNKNOWN_TAG = "_x_unknown"
UNKNOWN_VALUE = "_x_not_listed"
UNKNOWN_KEY = "xUnknownField"
# One value or two of each JSON type, to put where another type belongs.
SAMPLES: dict[str, list[Any]] = {
    "string": ["x", ""],
    "integer": [7, -1],
    "number": [2.5],
    "boolean": [True, False],
    "array": [[], ["x"]],
    "object": [{}, {"k": 1}],
}
NOT_STRINGS: list[Any] = [[], ["x"], {}, {"k": "v"}, 1, True, None]


@dataclass(frozen=True, slots=True)
class Mutant:
    """A broken copy of an instance: which kind of break, at which site."""

    kind: str
    site: Site
    value: Any


@dataclass(frozen=True, slots=True)
class Context:
    """What a kind may look at besides the site: every site by path, the names of union tags."""

    sites: dict[Path, Site]
    tags: frozenset[str]


Applies = Callable[[Site, Any, Context], bool]
Apply = Callable[[Site, Any, Context, random.Random], tuple[Path, Any]]
"""-> (the path whose value changes, its new value)"""


def mutate(instance: Any, sites: list[Site], tags: frozenset[str], rng: random.Random) -> Mutant | None:
    """A mutant of ``instance`` (None when no kind applies anywhere)."""
    context = Context({s.path: s for s in sites}, tags)
    candidates: dict[str, list[Site]] = {}
    for site in sites:
        value = _at(instance, site.path)
        for name, (applies, _) in KINDS.items():
            if applies(site, value, context):
                candidates.setdefault(name, []).append(site)
    if not candidates:
        return None
    kind = rng.choice(sorted(candidates))
    site = rng.choice(candidates[kind])
    path, new = KINDS[kind][1](site, _at(instance, site.path), context, rng)
    return Mutant(kind, site, _replaced(instance, path, new))


def json_types(flat: Schema) -> set[str]:
    """The JSON types a flattened schema admits (empty: any type)."""
    declared = flat.get("type")
    if isinstance(declared, str):
        declared = [declared]
    if isinstance(declared, list):
        return set(declared) | ({"integer"} if "number" in declared else set())
    values = [flat["const"]] if "const" in flat else flat.get("enum", [])
    found = {_type_of(v) for v in values}
    if "properties" in flat or "required" in flat:
        found.add("object")
    if "items" in flat:
        found.add("array")
    return found


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _at(instance: Any, path: Path) -> Any:
    for step in path:
        instance = instance[step]
    return instance


def _replaced(instance: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(instance)
    _at(out, path[:-1])[path[-1]] = value
    return out


# -- where each kind applies ----------------------------------------------------------------------


def _typed(site: Site, value: Any, context: Context) -> bool:
    return bool(json_types(site.flat))


def _not_nullable(site: Site, value: Any, context: Context) -> bool:
    return bool(json_types(site.flat)) and "null" not in json_types(site.flat)


def _has_required(site: Site, value: Any, context: Context) -> bool:
    return isinstance(value, dict) and bool(set(site.flat.get("required", [])) & value.keys())


def _is_object(site: Site, value: Any, context: Context) -> bool:
    return isinstance(value, dict) and UNKNOWN_KEY not in site.flat.get("properties", {})


def _tag_path(site: Site, value: Any, context: Context) -> Path | None:
    if not isinstance(value, dict):
        return None
    for name in sorted(context.tags & value.keys()):
        child = context.sites.get((*site.path, name))
        if child is not None and isinstance(child.flat.get("const"), str):
            return child.path
    return None


def _has_tag(site: Site, value: Any, context: Context) -> bool:
    return _tag_path(site, value, context) is not None


def _listed(site: Site, value: Any, context: Context) -> bool:
    is_tag = bool(site.path) and site.path[-1] in context.tags and "const" in site.flat
    return isinstance(value, str) and ("enum" in site.flat or "const" in site.flat) and not is_tag


def _integer(site: Site, value: Any, context: Context) -> bool:
    return "integer" in json_types(site.flat) and type(value) is int and abs(value) < 2**52


def _bounded(site: Site, value: Any, context: Context) -> bool:
    return _integer(site, value, context) and bool(_outside(site))


def _skipping(site: Site, value: Any, context: Context) -> bool:
    return isinstance(value, list) and site.flat.get(SKIP_INVALID_ITEMS) is True


def _lenient(site: Site, value: Any, context: Context) -> bool:
    return site.flat.get(DEFAULT_ON_ERROR) is True and _typed(site, value, context)


def _null_default(site: Site, value: Any, context: Context) -> bool:
    return site.flat.get(DEFAULT_ON_NULL) is True


def _meta(site: Site, value: Any, context: Context) -> bool:
    return site.path[-1:] == ("_meta",)


# -- what each kind does --------------------------------------------------------------------------


def _other_type(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    allowed = json_types(site.flat)
    return site.path, rng.choice([v for kind, values in SAMPLES.items() if kind not in allowed for v in values])


def _null(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    return site.path, None


def _without_required(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    name = rng.choice(sorted(set(site.flat.get("required", [])) & value.keys()))
    return site.path, {k: v for k, v in value.items() if k != name}


def _with_extra(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    return site.path, {**value, UNKNOWN_KEY: rng.choice([1, "x", None, {"a": []}])}


def _unknown_tag(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    path = _tag_path(site, value, context)
    assert path is not None
    return path, UNKNOWN_TAG


def _malformed_tag(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    path = _tag_path(site, value, context)
    assert path is not None
    return path, rng.choice(NOT_STRINGS)


def _unlisted(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    return site.path, UNKNOWN_VALUE


def _as_float(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    return site.path, float(value)


def _with_fraction(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    return site.path, value + 0.5


def _outside(site: Site) -> list[int]:
    low, high = INT_FORMATS.get(site.flat.get("format", ""), (None, None))
    low = site.flat.get("minimum", low)
    high = site.flat.get("maximum", high)
    return [edge for edge in (None if low is None else low - 1, None if high is None else high + 1) if edge is not None]


def _out_of_range(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    return site.path, rng.choice(_outside(site))


def _bad_item(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    item_types = json_types(site.flat.get("items", {}))
    bad = rng.choice([7, {"k": 1}, None] if "string" in item_types else ["x", 7, None])
    items = list(value)
    items.insert(rng.randint(0, len(items)), bad)
    return site.path, items


def _not_object(site: Site, value: Any, context: Context, rng: random.Random) -> tuple[Path, Any]:
    return site.path, rng.choice(["x", 5, [], True])


KINDS: dict[str, tuple[Applies, Apply]] = {
    "wrong-type": (_typed, _other_type),
    "null": (_not_nullable, _null),
    "missing-required": (_has_required, _without_required),
    "extra-field": (_is_object, _with_extra),
    "unknown-tag": (_has_tag, _unknown_tag),
    "malformed-tag": (_has_tag, _malformed_tag),
    "bad-enum": (_listed, _unlisted),
    "integral-float": (_integer, _as_float),
    "fraction": (_integer, _with_fraction),
    "out-of-range": (_bounded, _out_of_range),
    "bad-item": (_skipping, _bad_item),
    "bad-lenient": (_lenient, _other_type),
    "null-default": (_null_default, _null),
    "bad-meta": (_meta, _not_object),
}
