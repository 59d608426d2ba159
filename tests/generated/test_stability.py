"""The stable build holds no unstable item; the unstable build holds them all and marks them.

"Unstable" is what the IR derives by comparing schema.json with schema.unstable.json.
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import TypeAdapter, ValidationError

from acpgen import ir
from acpgen.pipeline import Revision, read_schema_file
from tests.support.bindings import field_doc, models

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def revision() -> Revision:
    def pinned(name: str) -> Any:
        return read_schema_file(ROOT / "schema" / name, package="p", version="v", name=name)

    return Revision(stable=pinned("v1/schema.json"), unstable=pinned("v1/schema.unstable.json"), protocol_version=1)


@functools.cache
def protocols() -> tuple[ir.Protocol, ir.Protocol]:
    return revision().protocol("stable"), revision().protocol("unstable")


def _items(kind: str) -> list[str]:
    return sorted(k for k in protocols()[1].unstable_items if k.startswith(kind + ":"))


def _owner_is_stable(name: str) -> bool:
    return f"type:{name}" not in protocols()[1].unstable_items


def test_there_are_unstable_items_of_every_kind() -> None:
    for kind in ("type", "field", "variant", "value", "method"):
        assert _items(kind), f"no unstable {kind} in the pinned schema: the tests below would prove nothing"


@pytest.mark.parametrize("key", _items("type"))
def test_unstable_type_is_absent_from_the_stable_build(key: str) -> None:
    t = protocols()[1].type(key.removeprefix("type:"))
    assert not hasattr(models("stable"), t.class_name)
    assert hasattr(models("unstable"), t.class_name)


@pytest.mark.parametrize("key", [k for k in _items("field") if _owner_is_stable(k[6:].split(".")[0])])
def test_unstable_field_is_absent_from_the_stable_build(key: str) -> None:
    owner, wire = key.removeprefix("field:").split(".", 1)
    stable_type, unstable_type = protocols()[0].type(owner), protocols()[1].type(owner)
    holders = [stable_type.class_name] if stable_type.kind == "object" else []
    holders += [v.class_name for v in stable_type.variants if v.hoisted]
    for holder in holders:
        aliases = {f.alias or name for name, f in getattr(models("stable"), holder).model_fields.items()}
        assert wire not in aliases, f"{holder} of the stable build has unstable field {wire}"
    unstable_holder = (
        unstable_type.class_name if unstable_type.kind == "object" else unstable_type.variants[0].class_name
    )
    holder_class = getattr(models("unstable"), unstable_holder)
    attr = next(name for name, f in holder_class.model_fields.items() if (f.alias or name) == wire)
    owner_class = next(c for c in holder_class.__mro__ if attr in inspect.get_annotations(c))
    assert "UNSTABLE" in field_doc(owner_class, attr), f"{key} is not marked in the unstable build"


@pytest.mark.parametrize("key", [k for k in _items("variant") if _owner_is_stable(k[8:].split("[")[0])])
def test_unstable_variant_is_absent_from_the_stable_build(key: str) -> None:
    union, variant_key = key.removeprefix("variant:").rstrip("]").split("[", 1)
    unstable_variant = next(v for v in protocols()[1].type(union).variants if v.key == variant_key)
    stable_union = protocols()[0].type(union)
    assert variant_key not in {v.key for v in stable_union.variants}
    if unstable_variant.hoisted:
        assert not hasattr(models("stable"), unstable_variant.class_name)
    if unstable_variant.tag is not None and stable_union.discriminator and not stable_union.open:
        with pytest.raises(ValidationError):
            TypeAdapter(getattr(models("stable"), stable_union.class_name)).validate_python(
                {stable_union.discriminator: unstable_variant.tag}
            )


def test_unstable_enum_values_are_absent_from_the_stable_build() -> None:
    # In 2.4.0 every unstable value belongs to an unstable enum; the fixture pair covers a stable enum
    # gaining a value (tests/generated/test_snapshots.py). This checks whatever the pinned schema has.
    for key in _items("value"):
        enum, value = key.removeprefix("value:").split("=", 1)
        if not _owner_is_stable(enum):
            continue
        stable_enum = protocols()[0].type(enum)
        assert value not in stable_enum.enum_values
        alias = getattr(models("stable"), stable_enum.class_name)
        assert value not in {str(a) for arg in get_args(alias.__value__) for a in (get_args(arg) or (arg,))}


@pytest.mark.parametrize("key", _items("method"))
def test_unstable_method_is_absent_from_the_stable_ir(key: str) -> None:
    _, side, wire = key.split(":", 2)
    assert (side, wire) not in {(m.side, m.wire) for m in protocols()[0].methods}
    assert any(not m.stable for m in protocols()[1].methods if (m.side, m.wire) == (side, wire))


def test_stable_build_records_no_unstable_items() -> None:
    import importlib

    assert frozenset() == importlib.import_module("acp_bindings.stability").UNSTABLE_ITEMS
    unstable = importlib.import_module("acp_bindings_unstable.stability").UNSTABLE_ITEMS
    assert unstable == protocols()[1].unstable_items


@pytest.mark.parametrize("key", _items("type"))
def test_unstable_types_are_marked_in_the_unstable_build(key: str) -> None:
    t = protocols()[1].type(key.removeprefix("type:"))
    obj = getattr(models("unstable"), t.class_name)
    doc = obj.__doc__ if isinstance(obj, type) else _alias_doc(t.class_name)
    assert "UNSTABLE" in (doc or ""), f"{t.class_name} carries no UNSTABLE marker"


def _alias_doc(name: str) -> str:
    text = (ROOT / "generated" / "acp_bindings_unstable" / "models.py").read_text()
    start = text.index(f"\n{name} = TypeAliasType(")
    return text[start:].split('"""')[1]
