"""``errors.py`` is generated from the schema's ``ErrorCode``: every code, named from its title,
documented with its description, while the runtime's ``RequestError`` and standard codes are the
very objects of ``._rpc``."""

from __future__ import annotations

import ast
import importlib
import itertools
from typing import Any

import pytest

from tests.support.bindings import PACKAGES, ROOT, SCHEMA_FILES, schema

SCHEMAS = SCHEMA_FILES


def _codes(variant: str) -> list[dict[str, Any]]:
    return [b for b in schema(variant)["$defs"]["ErrorCode"]["anyOf"] if "const" in b]


def _docstrings(module_file: str) -> dict[str, str]:
    """Module-level ``NAME = ...`` followed by a string: the attribute docstrings an editor shows."""
    body = ast.parse((ROOT / "generated" / module_file).read_text(encoding="utf-8")).body
    found = {}
    for node, after in itertools.pairwise(body):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            found[target.id] = str(after.value.value)
    return found


@pytest.mark.parametrize("variant", sorted(SCHEMAS))
def test_every_error_code_of_the_schema_is_a_documented_constant(variant: str) -> None:
    errors = importlib.import_module(f"{PACKAGES[variant]}.errors")
    docs = _docstrings(f"{PACKAGES[variant]}/errors.py")
    codes = _codes(variant)
    assert len(codes) >= 8
    for branch in codes:
        name = branch["title"].upper().replace(" ", "_")  # "Method not found" -> METHOD_NOT_FOUND
        assert getattr(errors, name) == branch["const"], name
        assert name in errors.__all__
        assert branch["description"].splitlines()[0] in docs[name], name
        assert errors.ERROR_CODES[branch["const"]] == branch["title"]


@pytest.mark.parametrize("variant", sorted(SCHEMAS))
def test_errors_keeps_the_runtime_objects(variant: str) -> None:
    errors = importlib.import_module(f"{PACKAGES[variant]}.errors")
    rpc = importlib.import_module(f"{PACKAGES[variant]}._runtime.wire.rpc")
    assert errors.RequestError is rpc.RequestError
    for name in ("PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR"):
        assert getattr(errors, name) == getattr(rpc, name) and name in errors.__all__
    assert errors.REQUEST_CANCELLED == rpc.REQUEST_CANCELLED


def _protocol(codes: list[dict[str, Any]]) -> Any:
    from acpgen import ir
    from acpgen.ir.build import build_protocol

    doc = {"$defs": {"ErrorCode": {"anyOf": [*codes, {"title": "Other", "type": "integer"}]}}}
    source = ir.Source(package="fixture", version="0", file="schema.json", sha256="0" * 64)
    return build_protocol(doc, variant="stable", source=source, protocol_version=1, unstable_items=frozenset())


def test_a_schema_code_that_contradicts_the_runtime_fails_generation() -> None:
    from acpgen.errors import AcpgenError
    from acpgen.render.error_codes import error_code_views

    with pytest.raises(AcpgenError, match="Parse error"):
        error_code_views(_protocol([{"title": "Parse error", "type": "integer", "const": -1}]))
    with pytest.raises(AcpgenError, match="both be named"):
        error_code_views(_protocol([{"title": "Gone", "const": -1}, {"title": "gone", "const": -2}]))


def test_an_untitled_code_is_named_from_the_bold_lead_of_its_description() -> None:
    from acpgen.render.error_codes import error_code_views

    views = error_code_views(_protocol([{"description": "**Rate limited**: slow down.", "const": -32029}]))
    assert (views[0].constant, views[0].value, views[0].runtime) == ("RATE_LIMITED", -32029, False)
    assert {v.constant for v in views if v.runtime} >= {"PARSE_ERROR", "REQUEST_CANCELLED"}
