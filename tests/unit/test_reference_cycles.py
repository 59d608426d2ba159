"""Types that refer to themselves: legal recursion generates working models, impossible cycles are refused.

A definition may refer to itself (or to one that refers back) through a property, an array item
or a map value: the generated package imports and validates nested instances. A definition that
*is* itself (``$ref``), extends itself (``allOf``) or contains itself as a union branch, directly
or through others, can be no Python class: generation exits 2 naming the cycle, before writing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_OK
from tests.unit.test_errors import OBJECT_DEF, Workspace, assert_message, populate_out, run_failing, schema_doc


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


RECURSIVE: dict[str, Any] = {
    "Tree": {
        "type": "object",
        "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": ref("Tree")}},
        "required": ["value"],
    },
    "Chain": {
        "type": "object",
        "properties": {"next": {"anyOf": [ref("Chain"), {"type": "null"}]}, "label": {"type": "string"}},
        "required": ["label"],
    },
    "Left": {"type": "object", "properties": {"right": ref("Right")}},
    "Right": {"type": "object", "properties": {"left": ref("Left")}},
    "Wrapped": {"type": "object", "properties": {"inner": {"description": "itself", "allOf": [ref("Wrapped")]}}},
    "Registry": {
        "type": "object",
        "properties": {"entries": {"type": "object", "additionalProperties": ref("Registry")}},
    },
    "Expr": {
        "oneOf": [
            {
                "type": "object",
                "title": "Num",
                "properties": {"op": {"const": "num"}, "value": {"type": "integer"}},
                "required": ["op", "value"],
            },
            {
                "type": "object",
                "title": "Add",
                "properties": {"op": {"const": "add"}, "args": {"type": "array", "items": ref("Expr")}},
                "required": ["op", "args"],
            },
        ]
    },
    "Json": {"anyOf": [{"type": "string"}, {"type": "array", "items": ref("Json")}]},
}
"""One definition per way of referring to oneself legally (property, nullable property, mutual, wrapped in
allOf, map value, a tagged union's branch, a union of scalars and arrays of itself)."""

NESTED_INSTANCES = """
from pydantic import TypeAdapter, ValidationError
from acp_bindings import models as m

tree = m.Tree.model_validate({"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]})
assert tree.children[0].children[0].value == 3 and isinstance(tree.children[0], m.Tree)
try:
    m.Tree.model_validate({"value": 1, "children": [{"children": []}]})
except ValidationError as error:
    assert error.errors()[0]["loc"] == ("children", 0, "value"), error
else:
    raise AssertionError("a nested node without its required value was accepted")
chain = m.Chain.model_validate({"label": "a", "next": {"label": "b", "next": None}})
assert chain.next_.label == "b" and chain.next_.next_ is None
left = m.Left.model_validate({"right": {"left": {"right": {}}}})
assert isinstance(left.right.left.right, m.Right)
assert isinstance(m.Wrapped.model_validate({"inner": {"inner": {}}}).inner.inner, m.Wrapped)
registry = m.Registry.model_validate({"entries": {"a": {"entries": {"b": {}}}}})
assert isinstance(registry.entries["a"].entries["b"], m.Registry)
expr_json = {"op": "add", "args": [{"op": "num", "value": 1}, {"op": "add", "args": []}]}
expr = TypeAdapter(m.Expr).validate_python(expr_json)
assert expr.args[0].value == 1 and expr.args[1].args == []
assert TypeAdapter(m.Json).validate_python(["a", ["b", []]]) == ["a", ["b", []]]
try:
    TypeAdapter(m.Json).validate_python(["a", [1]])
except ValidationError:
    pass
else:
    raise AssertionError("a number deep inside Json was accepted")
assert m.Tree.model_validate(tree.model_dump(mode="json")) == tree
print("ok")
"""


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.acpgen]\n", encoding="utf-8")
    out = tmp_path / "out"
    return Workspace(root=tmp_path, pyproject=pyproject, out=out, before=populate_out(out))


def test_recursive_types_generate_models_that_validate_nested_instances(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(ws.generate(ws.schema(schema_doc(RECURSIVE)), "--stable"))
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    result = subprocess.run(
        [sys.executable, "-c", NESTED_INSTANCES], cwd=ws.out, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


CYCLES: list[tuple[str, dict[str, Any], str, str]] = [
    # (id, definitions, the cycle as reported, the pointer of the reference that starts it)
    (
        "inheritance",
        {
            "A": {"allOf": [ref("B")], "type": "object", "properties": {"a": {"type": "string"}}},
            "B": {"allOf": [ref("A")], "type": "object", "properties": {"b": {"type": "string"}}},
        },
        "A -> B -> A",
        "/$defs/A/allOf/0/$ref",
    ),
    ("extends-itself", {"A": {"allOf": [ref("A")], "type": "object"}}, "A -> A", "/$defs/A/allOf/0/$ref"),
    ("alias", {"A": ref("B"), "B": ref("A")}, "A -> B -> A", "/$defs/A/$ref"),
    ("union-contains-itself", {"A": {"anyOf": [ref("A"), {"type": "string"}]}}, "A -> A", "/$defs/A/anyOf/0/$ref"),
    (
        "through-a-union-branch",
        {
            "Shape": {"oneOf": [ref("Circle"), ref("Square")]},
            "Circle": OBJECT_DEF,
            "Square": {"allOf": [ref("Shape")], "properties": {"side": {"type": "number"}}},
        },
        "Shape -> Square -> Shape",
        "/$defs/Shape/oneOf/1/$ref",
    ),
    (
        "nested-combinators",
        {
            "A": {"oneOf": [{"type": "null"}, {"allOf": [{"anyOf": [ref("C"), OBJECT_DEF]}]}]},
            "C": {"allOf": [ref("A")]},
        },
        "A -> C -> A",
        "/$defs/A/oneOf/1/allOf/0/anyOf/0/$ref",
    ),
]


@pytest.mark.parametrize(("defs", "chain", "where"), [c[1:] for c in CYCLES], ids=[c[0] for c in CYCLES])
def test_a_cycle_no_class_can_express_is_refused(
    defs: dict[str, Any], chain: str, where: str, ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = ws.schema(schema_doc(defs))
    err = run_failing(ws.generate(schema, "--both"), capsys, ws.out, ws.before)
    assert_message(
        err,
        what=f"definitions {chain} form a cycle",
        where=f"schema.json#{where}",
        hint="a type may refer to itself only through a property, an array item or a map value",
    )


def test_the_diff_refuses_a_cycle_too(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """The diff builds the same IR: a revision with a cycle is refused with the same message."""
    old = ws.schema(schema_doc({"A": OBJECT_DEF}), "old.json")
    new = ws.schema(schema_doc(CYCLES[0][1]), "new.json")
    argv = ["--config", str(ws.pyproject), "diff", str(old), str(new)]
    err = run_failing(argv, capsys, ws.out, ws.before)
    assert_message(err, what="definitions A -> B -> A form a cycle", where=f"{new}#/$defs/A/allOf/0", hint="Break")
    assert json.loads(old.read_text(encoding="utf-8"))["$defs"] == {"A": OBJECT_DEF}
