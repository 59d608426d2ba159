"""The generated models agree with the JSON schema on schema-generated instances.

For every method payload (``x-method``) and every union of both builds: (a) every value the schema
accepts is accepted by the model, and (b) what the model sends (``wire``) is accepted by the schema
too, without pydantic serializer warnings. Instances come from ``tests/support/instances.py``; a union gets
examples for each of its branches. Runs are derandomized, so CI sees the same examples every time.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from pydantic import ValidationError

from tests.support import bindings
from tests.support.bindings import SCHEMA_FILES, read, schema, wire
from tests.support.instances import instances, union_size, validator

pytestmark = pytest.mark.slow

SCHEMAS = SCHEMA_FILES
UNIONS = (
    "SessionUpdate",
    "ContentBlock",
    "ToolCallContent",
    "McpServer",
    "RequestPermissionOutcome",
    "SessionConfigOption",
)
# read/wire build a TypeAdapter per call; this suite calls them thousands of times, so it reuses them.
CACHED_ADAPTER = cache(bindings.adapter)
EXAMPLES = 25
MIN_EXAMPLES_PER_BRANCH = 5


def targets(variant: str) -> list[str]:
    """The ``$defs`` checked for ``variant``: the method payloads, the main unions, then every other union.

    Nested unions are checked on their own too: reached through a payload, a branch several unions
    deep would rarely be drawn in 25 examples.
    """
    defs = schema(variant)["$defs"]
    methods = [name for name, sub in defs.items() if "x-method" in sub]
    nested = [name for name, sub in defs.items() if {"anyOf", "oneOf"} & sub.keys() and name not in methods]
    return methods + list(UNIONS) + [name for name in nested if name not in UNIONS]


CASES = [pytest.param(variant, name, id=f"{variant}-{name}") for variant in SCHEMAS for name in targets(variant)]


def test_targets_cover_the_methods() -> None:
    methods = {
        variant: [name for name, sub in schema(variant)["$defs"].items() if "x-method" in sub] for variant in SCHEMAS
    }
    assert len(methods["stable"]) >= 45 and len(methods["unstable"]) >= 70
    assert all(set(methods[variant]) <= set(targets(variant)) for variant in SCHEMAS)
    assert all(name in schema(variant)["$defs"] for variant in SCHEMAS for name in UNIONS)


# A serializer warning means the dump took a branch other than the value's own: a disagreement too.
@pytest.mark.filterwarnings("error:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize(("variant", "def_name"), CASES)
def test_model_agrees_with_schema(variant: str, def_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bindings, "adapter", CACHED_ADAPTER)
    root = schema(variant)
    check = validator(root, def_name)
    branches = union_size(root, def_name)
    examples = max(EXAMPLES // branches, MIN_EXAMPLES_PER_BRANCH) if branches else EXAMPLES
    for branch in range(branches) if branches else [None]:

        @settings(max_examples=examples, deadline=None, derandomize=True, database=None)
        @given(instances(root, def_name, branch=branch))
        def agree(value: Any) -> None:
            try:
                obj = read(variant, def_name, value)
            except ValidationError as error:
                pytest.fail(f"the model refuses a schema-valid {def_name}: {json.dumps(value)}\n{error}")
            sent = wire(variant, def_name, obj)
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in check.iter_errors(sent)]
            assert not errors, f"the model sends a schema-invalid {def_name}: {json.dumps(sent)}\n" + "\n".join(errors)

        agree()
