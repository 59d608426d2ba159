"""Deeply nested input is refused with a pointer to where it nests too deeply, never a RecursionError.

Every file acpgen reads (a schema given to ``generate`` or ``diff``, a capability rule table, a
schema lock, the configuration) is checked against :data:`acpgen.load.nesting.MAX_DEPTH` before
anything recursive reads it; within the limit, generation works.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_OK, AcpgenError
from acpgen.load.nesting import MAX_DEPTH, check_depth, parse
from tests.unit.test_errors import (
    DIALECT,
    OBJECT_DEF,
    PINNED_SCHEMA_DIR,
    Workspace,
    assert_message,
    populate_out,
    run_failing,
)

TOO_DEEP = f"nests objects and arrays deeper than {MAX_DEPTH} levels"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.acpgen]\n", encoding="utf-8")
    out = tmp_path / "out"
    return Workspace(root=tmp_path, pyproject=pyproject, out=out, before=populate_out(out))


def nested_all_of(levels: int, leaf: str) -> str:
    """JSON text of ``levels`` nested ``allOf`` around ``leaf`` (written as text: json.dumps would recurse)."""
    return '{"allOf": [' * levels + leaf + "]}" * levels


def schema_text(property_schema: str) -> str:
    """A schema whose type `A` has one property `p` of the given schema (JSON text), referring to `B`."""
    b = json.dumps(OBJECT_DEF)
    a = '{"type": "object", "properties": {"p": ' + property_schema + "}}"
    return '{"$schema": "' + DIALECT + '", "$defs": {"B": ' + b + ', "A": ' + a + "}}"


def deep_pointer(prefix: str, levels: int) -> str:
    """The pointer of the first container beyond the limit below ``prefix`` (whose depth is given)."""
    return prefix + "/allOf/0" * levels


# --- generate ------------------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [300, 5_000, 100_000])
def test_hundreds_of_nested_all_of_are_refused(levels: int, ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """Python's JSON parser reads 300 levels (600 JSON levels) but copies crash on them; beyond about
    1000 the parser itself gives up. Either way: exit 2 pointing into the nesting."""
    schema = ws.schema(schema_text(nested_all_of(levels, '{"$ref": "#/$defs/B"}')))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    # /$defs/A/properties/p is at depth 4: 96 more levels are 48 allOf/0 pairs
    where = f"{schema}#" + deep_pointer("/$defs/A/properties/p", (MAX_DEPTH - 4) // 2)
    assert_message(err, what=TOO_DEEP, where=where, hint="Fix the JSON")


def test_deep_arrays_in_an_extension_keyword(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """Depth counts every container, also in values no schema keyword reads (here `x-data`)."""
    text = '{"$schema": "' + DIALECT + '", "$defs": {"A": {"x-data": ' + "[" * 2_000 + "]" * 2_000 + "}}}"
    schema = ws.schema(text)
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(err, what=TOO_DEEP, where=f"{schema}#/$defs/A/x-data" + "/0" * (MAX_DEPTH - 3), hint="Fix")


def test_nesting_within_the_limit_generates(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """Control: 40 nested allOf (80 JSON levels) around a reference is correct output: `p` reads as `B`."""
    schema = ws.schema(schema_text(nested_all_of(40, '{"$ref": "#/$defs/B"}')))
    code = main(ws.generate(schema, "--stable"))
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    check = (
        "from acp_bindings.models import A, B\n"
        "a = A.model_validate({'p': {'x': 'y'}})\n"
        "assert isinstance(a.p, B) and a.p.x == 'y', a\n"
    )
    result = subprocess.run([sys.executable, "-c", check], cwd=ws.out, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


# --- diff ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [300, 100_000])
@pytest.mark.parametrize("as_folder", [False, True], ids=["file", "folder"])
def test_diff_of_a_deeply_nested_file(
    levels: int, as_folder: bool, ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = ws.root / "side"
    folder.mkdir()
    deep = folder / "schema.json"
    deep.write_text(schema_text(nested_all_of(levels, '{"$ref": "#/$defs/B"}')), encoding="utf-8")
    side = str(folder if as_folder else deep)
    argv = ["--config", str(ws.pyproject), "diff", str(PINNED_SCHEMA_DIR), side]
    err = run_failing(argv, capsys, ws.out, ws.before)
    assert_message(err, what=TOO_DEEP, where=f"{deep}#/$defs/A/properties/p/allOf/0", hint="Fix the JSON")


def test_diff_with_a_deeply_nested_rule_table(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    folder = ws.root / "side"
    shutil.copytree(PINNED_SCHEMA_DIR, folder)
    rules = folder / "capability-rules.json"
    rules.write_text('{"rules": ' + "[" * 5_000 + "]" * 5_000 + "}", encoding="utf-8")
    argv = ["--config", str(ws.pyproject), "diff", str(PINNED_SCHEMA_DIR), str(folder)]
    err = run_failing(argv, capsys, ws.out, ws.before)
    assert_message(err, what=TOO_DEEP, where=f"{rules}#/rules" + "/0" * (MAX_DEPTH - 1), hint="Fix or restore")


# --- the pinned folder and the configuration ---------------------------------------------------------


@pytest.fixture
def pinned(tmp_path: Path) -> Workspace:
    shutil.copytree(PINNED_SCHEMA_DIR, tmp_path / "schema")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.acpgen]\nschema-dir = "schema"\noutput-dir = "out"\n', encoding="utf-8")
    out = tmp_path / "out"
    return Workspace(root=tmp_path, pyproject=pyproject, out=out, before=populate_out(out))


def test_deeply_nested_lock(pinned: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    lock = pinned.root / "schema" / "schema.lock.json"
    lock.write_text('{"files": ' + "[" * 5_000 + "]" * 5_000 + "}", encoding="utf-8")
    err = run_failing(["--config", str(pinned.pyproject), "generate", "--both"], capsys, pinned.out, pinned.before)
    assert_message(err, what=TOO_DEEP, where=f"{lock}#/files", hint="make schema")


@pytest.mark.parametrize("value", ["[" * 5_000 + "]" * 5_000, "{a = " * 5_000 + "1" + "}" * 5_000])
def test_deeply_nested_configuration(value: str, ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ws.pyproject.write_text(f"[tool.acpgen]\npackage = {value}\n", encoding="utf-8")
    schema = ws.schema({"$schema": DIALECT, "$defs": {"Foo": OBJECT_DEF}})
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(err, what="nested too deeply", where=str(ws.pyproject), hint="Fix the TOML")


# --- the limit itself ------------------------------------------------------------------------------


def nested_lists(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_the_limit_is_inclusive() -> None:
    """MAX_DEPTH levels are read; one more is refused, at the pointer of the container that is one too many."""
    assert parse(nested_lists(MAX_DEPTH), "f", what="the file", hint="h") is not None
    with pytest.raises(AcpgenError) as caught:
        parse(nested_lists(MAX_DEPTH + 1), "f", what="the file", hint="h")
    assert caught.value.problems[0].where == "f#" + "/0" * MAX_DEPTH


def test_text_and_document_agree_on_the_place() -> None:
    """The place found by the token scanner (for text the parser cannot read) is the one found in the document."""
    body = '{"a": [1, {"b~/c": [0, ' + nested_lists(MAX_DEPTH) + "]}]}"
    with pytest.raises(AcpgenError) as from_document:
        check_depth(json.loads(body), "f", what="w", hint="h")
    deep = '{"a": [1, {"b~/c": [0, ' + nested_lists(5_000) + "]}]}"
    with pytest.raises(AcpgenError) as from_text:
        parse(deep, "f", what="w", hint="h")
    expected = "f#/a/1/b~0~1c/1" + "/0" * (MAX_DEPTH - 4)
    assert from_document.value.problems[0].where == expected
    assert from_text.value.problems[0].where == expected
