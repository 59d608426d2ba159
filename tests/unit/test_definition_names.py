"""Definition names that are not Python identifiers get legal, deterministic class names, or a clear error.

A PascalCase ASCII name is kept; any other is made PascalCase from its words (accents dropped, other
letters spelled by code point); a name the models module needs for itself gets the suffix ``Type``.
Two definitions that would get one class name, or a name with no letter or digit, are refused.
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
from acpgen.ir import naming
from tests.unit.test_errors import OBJECT_DEF, Workspace, assert_message, populate_out, run_failing, schema_doc

EXPECTED = {
    "x.y": "XY",
    "ü": "U",
    "Ärger": "Arger",
    "日本": "U65e5U672c",
    "123": "T123",
    "class": "Class",
    "None": "NoneType",
    "OmitNone": "OmitNoneType",
    "WireModel": "WireModelType",
    "Field": "FieldType",
    "AcpMessage": "AcpMessageType",
    "Foo_Bar": "FooBar",
    "a/b": "AB",
    "c~d": "CD",
    "session-update": "SessionUpdate",
    "Ärger Response": "ArgerResponse",
}
"""Definition name -> class name."""


def pointer_ref(name: str) -> dict[str, str]:
    return {"$ref": "#/$defs/" + name.replace("~", "~0").replace("/", "~1")}


def odd_schema(order: list[str]) -> dict[str, Any]:
    """A definition of each odd name (in ``order``), a `Holder` with an optional property of each,
    and a method whose params and result are odd names."""
    defs: dict[str, Any] = {name: OBJECT_DEF for name in order}
    defs["Holder"] = {
        "type": "object",
        "properties": {f"p{i}": pointer_ref(name) for i, name in enumerate(sorted(EXPECTED))},
    }
    defs["x.y"] = {**OBJECT_DEF, "x-method": "thing/do", "x-side": "agent"}
    defs["Ärger Response"] = {**OBJECT_DEF, "x-method": "thing/do", "x-side": "agent"}
    return schema_doc(defs)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.acpgen]\n", encoding="utf-8")
    out = tmp_path / "out"
    return Workspace(root=tmp_path, pyproject=pyproject, out=out, before=populate_out(out))


@pytest.mark.parametrize(("def_name", "class_name"), sorted(EXPECTED.items()))
def test_class_name(def_name: str, class_name: str) -> None:
    assert naming.type_class_name(def_name) == class_name


CHECK = """
import json, sys
from acp_bindings import builders, methods, models
expected = json.loads(sys.argv[1])
for wire, cls in expected.items():
    assert cls in models.__all__ and isinstance(getattr(models, cls), type), (wire, cls)
holder = models.Holder.model_validate({"p0": {"x": "a"}, "p1": {"x": "b"}})
assert holder.model_dump(mode="json") == {"p0": {"x": "a"}, "p1": {"x": "b"}}, holder  # OmitNone still the rule
spec = next(m for m in methods.METHODS if m.wire == "thing/do")
assert spec.params is models.XY and spec.result is models.ArgerResponse, spec
print("ok")
"""


def test_odd_names_generate_importable_models(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(ws.generate(ws.schema(odd_schema(list(EXPECTED))), "--stable"))
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    result = subprocess.run(
        [sys.executable, "-c", CHECK, json.dumps(EXPECTED)], cwd=ws.out, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    first = models_body(ws.out)
    code = main(ws.generate(ws.schema(odd_schema(list(reversed(EXPECTED)))), "--stable", "--force"))
    assert code == EXIT_OK, capsys.readouterr().err
    assert models_body(ws.out) == first, "names depend on the order of the definitions"


def models_body(out: Path) -> list[str]:
    """The lines of the models module in sorted order (classes follow the schema's order) without its
    header (which names the schema's sha256)."""
    return sorted((out / "acp_bindings" / "models.py").read_text(encoding="utf-8").splitlines()[3:])


@pytest.mark.parametrize(
    ("names", "what", "where"),
    [
        (["fooBar", "FooBar"], "two types would get the same Python name 'FooBar'", "fooBar"),
        (["u", "ü"], "two types would get the same Python name 'U'", "ü"),
        (["x.y", "x-y"], "two types would get the same Python name 'XY'", "x.y"),
        (["NoneType", "None"], "two types would get the same Python name 'NoneType'", "NoneType"),
    ],
    ids=["case", "accent", "punctuation", "suffix"],
)
def test_names_that_collide_after_normalising_are_refused(
    names: list[str], what: str, where: str, ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = ws.schema(schema_doc({name: OBJECT_DEF for name in names}))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(err, what=what, where=f"schema.json#/$defs/{where}", hint="Rename one of the definitions")


@pytest.mark.parametrize("name", ["", "_", "!!", " ", "·"])
def test_a_name_with_no_letter_or_digit_is_refused(
    name: str, ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = ws.schema(schema_doc({name: OBJECT_DEF, "Other": OBJECT_DEF}))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(
        err,
        what=f"definition name {name!r} has no letter or digit",
        where=f"schema.json#/$defs/{name}",
        hint="Rename the definition",
    )


@pytest.mark.parametrize(
    ("wire", "constant"), [("2fa/start", "METHOD_2FA_START"), ("methods", "METHOD_METHODS"), ("!!", "METHOD")]
)
def test_method_constants_are_identifiers(wire: str, constant: str) -> None:
    assert naming.constant_name(wire) == constant


def test_two_wire_names_with_one_constant_are_refused(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    defs = {
        "ARequest": {**OBJECT_DEF, "x-method": "a/b", "x-side": "agent"},
        "BRequest": {**OBJECT_DEF, "x-method": "a_b", "x-side": "client"},
    }
    err = run_failing(ws.generate(ws.schema(schema_doc(defs))), capsys, ws.out, ws.before)
    assert_message(
        err,
        what="methods 'a/b' and 'a_b' would both be named by the constant A_B",
        where="schema.json#/$defs/BRequest/x-method",
        hint="Rename one of the methods",
    )
