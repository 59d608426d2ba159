"""Bad input is reported, not crashed on: exit code 2, what/where/hint on stderr, output untouched.

Every case runs the real command line (``acpgen.cli.main``) against an output folder that
already holds a sentinel package; a failure must leave that folder byte-identical, with no
new files and no leftover staging folders.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acpgen.cli import main
from acpgen.errors import EXIT_BAD_INPUT, EXIT_OK

ROOT = Path(__file__).resolve().parents[1]
PINNED_SCHEMA_DIR = ROOT / "schema"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
SENTINEL = "# sentinel written by tests/test_errors.py: acpgen must not touch this file\nVALUE = 42\n"
OBJECT_DEF: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
TAGGED_BRANCH: dict[str, Any] = {
    "type": "object",
    "properties": {"kind": {"type": "string", "const": "a"}, "x": {"type": "string"}},
    "required": ["kind", "x"],
}
"""An inline union branch tagged `kind: "a"`: in a union `Thing` it is named `AThing`, else `ThingA`."""

Snapshot = dict[str, bytes | None]
"""Every entry below a folder (POSIX relative path) -> file bytes, or None for a folder."""


@dataclass(frozen=True, slots=True)
class Workspace:
    """A scratch project: a pyproject.toml, a pre-populated output folder and its snapshot."""

    root: Path
    pyproject: Path
    out: Path
    before: Snapshot

    def schema(self, content: Any, name: str = "schema.json") -> Path:
        """Write ``content`` (a JSON value, or raw text when a str) as a schema file; return its path."""
        path = self.root / name
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), encoding="utf-8")
        return path

    def generate(self, schema: Path, *more: str) -> list[str]:
        """The argv of ``acpgen generate`` for a local schema file into this workspace's output folder."""
        return ["--config", str(self.pyproject), "generate", "--schema", str(schema), "--out", str(self.out), *more]


def snapshot(folder: Path) -> Snapshot:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() if path.is_file() else None
        for path in sorted(folder.rglob("*"))
    }


def populate_out(out: Path) -> Snapshot:
    """Put the sentinel package into ``out`` and return the snapshot to compare against."""
    package = out / "acp_bindings"
    package.mkdir(parents=True)
    (package / "models.py").write_text(SENTINEL, encoding="utf-8")
    return snapshot(out)


def schema_doc(defs: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": DIALECT, "$defs": defs}


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "scratch"\n\n[tool.acpgen]\n', encoding="utf-8")
    out = tmp_path / "out"
    return Workspace(root=tmp_path, pyproject=pyproject, out=out, before=populate_out(out))


def assert_untouched(out: Path, before: Snapshot) -> None:
    after = snapshot(out)
    assert sorted(after) == sorted(before), "files or folders were added to or removed from the output folder"
    assert after == before, "a file in the output folder changed"
    assert (out / "acp_bindings" / "models.py").read_text(encoding="utf-8") == SENTINEL
    leftovers = [rel for rel in after if any(part.startswith(".") for part in rel.split("/"))]
    assert leftovers == [], f"staging or backup folders were left behind: {leftovers}"


def run_failing(argv: list[str], capsys: pytest.CaptureFixture[str], out: Path, before: Snapshot) -> str:
    """Run the CLI, expect exit code 2 and an untouched output folder; return stderr."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT, f"exit code {code}, stderr:\n{err}"
    errors = [line for line in err.splitlines() if line.startswith("acpgen: error: ")]
    assert errors, f"no `acpgen: error:` line on stderr:\n{err}"
    assert "Traceback" not in err
    assert_untouched(out, before)
    return err


def assert_message(err: str, *, what: str, where: str, hint: str) -> None:
    """One error paragraph says what is wrong, where (`(at ...)`) and what to do."""
    matching = [line for line in err.splitlines() if what in line]
    assert matching, f"no error says {what!r}:\n{err}"
    line = matching[0]
    assert f"(at {where}" in line, f"the error does not point at {where!r}:\n{line}"
    assert hint in line.split(f"(at {where}", 1)[1], f"the error gives no hint {hint!r} after the location:\n{line}"


# --- positive control ---------------------------------------------------------------------------


def test_valid_schema_generates(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """The harness can pass: a tiny valid schema renders into the output folder (exit 0)."""
    schema = ws.schema(schema_doc({"Foo": OBJECT_DEF}))
    code = main(ws.generate(schema, "--stable"))
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    assert "error" not in err
    models = ws.out / "acp_bindings" / "models.py"
    assert models.is_file()
    assert models.read_text(encoding="utf-8") != SENTINEL
    assert "class Foo(" in models.read_text(encoding="utf-8")
    assert [rel for rel in snapshot(ws.out) if rel.startswith(".") or "/." in rel] == []


# --- 1. invalid JSON ----------------------------------------------------------------------------


def test_truncated_json(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    text = json.dumps(schema_doc({"Foo": OBJECT_DEF}), indent=2)
    schema = ws.schema(text[: len(text) // 2])
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(err, what="not valid JSON", where=f"{schema}#", hint="Fix the JSON")
    assert "line " in err and "column " in err


# --- 2. not an object ---------------------------------------------------------------------------


def test_schema_is_an_array(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    schema = ws.schema([schema_doc({"Foo": OBJECT_DEF})])
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(err, what="must be a JSON object, not list", where=f"{schema}#", hint="Point acpgen at")


# --- 3. dangling $ref ---------------------------------------------------------------------------


def test_dangling_ref(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    foo = {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}, "required": ["x"]}
    schema = ws.schema(schema_doc({"Foo": foo}))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(
        err,
        what="'#/$defs/Missing' points at no definition",
        where=f"{schema}#/$defs/Foo/properties/x/$ref",
        hint="Define the referenced type under `$defs` or correct the reference.",
    )


# --- 4. duplicate x-method ----------------------------------------------------------------------


def test_duplicate_x_method(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    request = {**OBJECT_DEF, "x-method": "foo/bar", "x-side": "agent"}
    schema = ws.schema(schema_doc({"FooRequest": request, "BarRequest": dict(request)}))
    err = run_failing(ws.generate(schema, "--both"), capsys, ws.out, ws.before)
    assert_message(
        err,
        what="duplicate x-method 'foo/bar' for side agent: both BarRequest and FooRequest",
        where="schema.json#/$defs/FooRequest",
        hint="rename or remove one of them in the schema.",
    )


# --- 5. name collisions -------------------------------------------------------------------------


def test_variant_class_name_collides_with_both_candidates(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """The inline branch `a` of `Thing` would be `AThing`, else `ThingA`; both are definitions already."""
    thing = {"oneOf": [TAGGED_BRANCH, {"$ref": "#/$defs/Other"}]}
    defs = {"Thing": thing, "Other": OBJECT_DEF, "AThing": OBJECT_DEF, "ThingA": OBJECT_DEF}
    schema = ws.schema(schema_doc(defs))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(
        err,
        what="two types would get the same Python name 'ThingA'",
        where="schema.json#/$defs/ThingA",
        hint="Rename one of the definitions (or give the union branch another title) in the schema.",
    )
    assert "branch 'a' of Thing and ThingA" in err


def test_variant_class_name_falls_back_when_only_the_first_is_taken(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    """Control for the case above: with only `AThing` taken, the branch becomes `ThingA` and generation succeeds."""
    defs = {"Thing": {"oneOf": [TAGGED_BRANCH, {"$ref": "#/$defs/Other"}]}, "Other": OBJECT_DEF, "AThing": OBJECT_DEF}
    code = main(ws.generate(ws.schema(schema_doc(defs))))
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    assert "class ThingA(" in (ws.out / "acp_bindings" / "models.py").read_text(encoding="utf-8")


def test_properties_collide_on_attribute(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    foo = {
        "type": "object",
        "properties": {"fooBar": {"type": "string"}, "foo_bar": {"type": "string"}},
        "required": ["fooBar"],
    }
    schema = ws.schema(schema_doc({"Foo": foo}))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(
        err,
        what="properties 'fooBar' and 'foo_bar' of Foo would both become the attribute 'foo_bar'",
        where="schema.json#/$defs/Foo/properties/foo_bar",
        hint="Rename one of the properties in the schema.",
    )


# --- 6. schema lock -----------------------------------------------------------------------------


@pytest.fixture
def pinned(tmp_path: Path) -> Workspace:
    """A project with a copy of the pinned schema folder and output-dir = "out"."""
    shutil.copytree(PINNED_SCHEMA_DIR, tmp_path / "schema")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.acpgen]\nschema-dir = "schema"\noutput-dir = "out"\n', encoding="utf-8")
    out = tmp_path / "out"
    return Workspace(root=tmp_path, pyproject=pyproject, out=out, before=populate_out(out))


def test_intact_pinned_copy_generates(pinned: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """Control for the lock cases: the copied schema folder and settings are valid as they are."""
    code = main(["--config", str(pinned.pyproject), "generate", "--stable"])
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    assert (pinned.out / "acp_bindings" / "models.py").read_text(encoding="utf-8") != SENTINEL


def test_edited_schema_file_fails_the_lock(pinned: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    path = pinned.root / "schema" / "v1" / "schema.json"
    data = path.read_bytes()
    assert data.startswith(b"{\n")
    path.write_bytes(b"{ " + data[2:])  # one byte changed; still valid JSON, so only the lock can object
    err = run_failing(["--config", str(pinned.pyproject), "generate", "--both"], capsys, pinned.out, pinned.before)
    assert_message(err, what="schema file v1/schema.json has sha256", where=str(path), hint="`make schema")
    assert "schema.unstable.json" not in err, "only the edited file should be reported"


def test_missing_lock(pinned: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    lock = pinned.root / "schema" / "schema.lock.json"
    lock.unlink()
    err = run_failing(["--config", str(pinned.pyproject), "generate", "--both"], capsys, pinned.out, pinned.before)
    assert_message(err, what="schema lock file not found", where=str(lock), hint="`make schema")


def test_a_rule_table_problem_names_the_table_when_the_config_is_an_absolute_path(
    pinned: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--config /abs/pyproject.toml` makes the table's path absolute: the place is still the table's
    file and pointer, not glued behind the schema file's name as if it were a pointer into it."""
    rules = pinned.root / "schema" / "capability-rules.json"
    text = rules.read_text(encoding="utf-8")
    assert '"needs": "agentCapabilities.loadSession"' in text
    rules.write_text(
        text.replace('"needs": "agentCapabilities.loadSession"', '"needs": "agentCapabilities.loadSessionX"')
    )
    err = run_failing(["--config", str(pinned.pyproject), "generate", "--stable"], capsys, pinned.out, pinned.before)
    assert f"(at {rules}#/rules/0)" in err, err


# --- 7. unknown setting -------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["frobnicate", "output_dir"])
def test_unknown_setting(key: str, ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ws.pyproject.write_text(f'[tool.acpgen]\n{key} = "x"\n', encoding="utf-8")
    schema = ws.schema(schema_doc({"Foo": OBJECT_DEF}))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(
        err,
        what=f"unknown setting {key!r} in [tool.acpgen]",
        where=f"{ws.pyproject}#/tool/acpgen/{key}",
        hint="Known settings: ",
    )
    assert "output-dir" in err and "schema-dir" in err


@pytest.mark.parametrize(("key", "value"), [("unstable", '"yes"'), ("protocol-version", '"one"'), ("package", "3")])
def test_mistyped_setting(key: str, value: str, ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ws.pyproject.write_text(f"[tool.acpgen]\n{key} = {value}\n", encoding="utf-8")
    schema = ws.schema(schema_doc({"Foo": OBJECT_DEF}))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(err, what=f"setting {key!r} in [tool.acpgen] must be a", where=f"{ws.pyproject}#", hint="Correct")


def test_broken_toml(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ws.pyproject.write_text("[tool.acpgen\n", encoding="utf-8")
    schema = ws.schema(schema_doc({"Foo": OBJECT_DEF}))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(err, what="the configuration is not valid TOML", where=str(ws.pyproject), hint="Fix the TOML")


# --- 8. meta-validation -------------------------------------------------------------------------


def test_meta_validation_failure(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    schema = ws.schema(schema_doc({"Foo": OBJECT_DEF, "Bad": {"type": 5}}))
    err = run_failing(ws.generate(schema), capsys, ws.out, ws.before)
    assert_message(
        err,
        what="not a valid JSON Schema 2020-12 document",
        where=f"{schema}#/$defs/Bad/type",
        hint="Fix the schema at that place",
    )
