"""Meta-validation: the fast check agrees with the jsonschema reference validator."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from acpgen.errors import AcpgenError
from acpgen.load.schema import check_schema, meta_error

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PINNED = json.loads((ROOT / "schema" / "v1" / "schema.unstable.json").read_text(encoding="utf-8"))


def _reference_valid(doc: Any) -> bool:
    try:
        Draft202012Validator.check_schema(doc)
    except SchemaError:
        return False
    return True


def _props(doc: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = doc["$defs"]["AgentCapabilities"]["properties"]
    return props


MUTATIONS: dict[str, Callable[[dict[str, Any]], object]] = {
    "type-is-a-number": lambda d: _props(d)["loadSession"].__setitem__("type", 12),
    "required-is-a-string": lambda d: d["$defs"]["AgentCapabilities"].__setitem__("required", "loadSession"),
    "required-repeats": lambda d: d["$defs"]["AgentCapabilities"].__setitem__("required", ["a", "a"]),
    "minimum-is-a-string": lambda d: _props(d)["loadSession"].__setitem__("minimum", "a"),
    "allOf-is-an-object": lambda d: d["$defs"]["SessionUpdate"].__setitem__("allOf", {}),
    "pattern-is-not-a-regex": lambda d: _props(d)["loadSession"].__setitem__("pattern", "["),
    "patternProperties-key-is-not-a-regex": lambda d: d["$defs"]["AgentCapabilities"].__setitem__(
        "patternProperties", {"(": {}}
    ),
}


def test_pinned_schemas_pass_the_fast_check() -> None:
    for name in ("schema.json", "schema.unstable.json"):
        doc = json.loads((ROOT / "schema" / "v1" / name).read_text(encoding="utf-8"))
        assert meta_error(doc) is None and _reference_valid(doc)


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_fast_check_rejects_what_the_reference_rejects(mutate: Callable[[dict[str, Any]], object]) -> None:
    doc = copy.deepcopy(PINNED)
    mutate(doc)
    assert not _reference_valid(doc)
    assert meta_error(doc) is not None
    with pytest.raises(AcpgenError) as caught:
        check_schema(doc, "x.json")
    problem = caught.value.problems[0]
    assert "not a valid JSON Schema 2020-12 document" in problem.what and problem.where.startswith("x.json#/$defs/")


def test_history_agrees(acp_schemas: Path) -> None:
    files = sorted(acp_schemas.rglob("schema*.json"))
    assert len(files) > 100
    for path in files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert meta_error(doc) is None, path
