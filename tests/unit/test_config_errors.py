"""A configuration (``[tool.acpgen]`` in pyproject.toml) that no run could use is refused before anything
is read or written: exit 2, what and where (the file and the setting's pointer), what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_OK
from tests.unit.test_errors import DIALECT, OBJECT_DEF, Workspace, assert_message, populate_out, run_failing

CASES: list[tuple[str, bytes, str, str, str]] = [
    # (id, pyproject bytes, what, pointer below the file, hint)
    ("tool-not-a-table", b"tool = 3\n", "`tool` in the configuration must be a table", "#/tool", "[tool.acpgen]"),
    (
        "acpgen-not-a-table",
        b"[tool]\nacpgen = [1, 2]\n",
        "`tool.acpgen` in the configuration must be a table",
        "#/tool/acpgen",
        "[tool.acpgen]",
    ),
    ("not-utf8", b'[tool.acpgen]\npackage = "\xff"\n', "cannot read the configuration", "", "Fix the file."),
    (
        "package-with-a-dash",
        b'[tool.acpgen]\npackage = "acp-bindings"\n',
        "setting 'package' must be a Python package name, not 'acp-bindings'",
        "#/tool/acpgen/package",
        "Use an identifier",
    ),
    (
        "package-outside-the-output",
        b'[tool.acpgen]\nunstable-package = "../evil"\n',
        "setting 'unstable-package' must be a Python package name",
        "#/tool/acpgen/unstable-package",
        "Use an identifier",
    ),
    (
        "empty-package",
        b'[tool.acpgen]\npackage = ""\n',
        "setting 'package' must be a Python package name",
        "#/tool/acpgen/package",
        "Use an identifier",
    ),
    (
        "keyword-package",
        b'[tool.acpgen]\npackage = "class"\n',
        "setting 'package' must be a Python package name",
        "#/tool/acpgen/package",
        "Use an identifier",
    ),
    (
        "one-package-for-both-builds",
        b'[tool.acpgen]\npackage = "acp"\nunstable-package = "acp"\n',
        "settings 'package' and 'unstable-package' are both 'acp'",
        "#/tool/acpgen/unstable-package",
        "a package name of its own",
    ),
    (
        "nul-in-a-path",
        b'[tool.acpgen]\nschema-dir = "sche\\u0000ma"\n',
        "setting 'schema-dir' contains a NUL character",
        "#/tool/acpgen/schema-dir",
        "Remove it.",
    ),
    (
        "negative-protocol-version",
        b"[tool.acpgen]\nprotocol-version = -1\n",
        "setting 'protocol-version' must be a protocol version (0 to 65535), not -1",
        "#/tool/acpgen/protocol-version",
        "the integer `initialize` carries",
    ),
    (
        "protocol-version-beyond-uint16",
        b"[tool.acpgen]\nprotocol-version = 65536\n",
        "setting 'protocol-version' must be a protocol version",
        "#/tool/acpgen/protocol-version",
        "the integer `initialize` carries",
    ),
]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    pyproject = tmp_path / "pyproject.toml"
    out = tmp_path / "out"
    return Workspace(root=tmp_path, pyproject=pyproject, out=out, before=populate_out(out))


@pytest.mark.parametrize(("text", "what", "below", "hint"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_unusable_configuration(
    text: bytes, what: str, below: str, hint: str, ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws.pyproject.write_bytes(text)
    schema = ws.schema({"$schema": DIALECT, "$defs": {"Foo": OBJECT_DEF}})
    err = run_failing(ws.generate(schema, "--both"), capsys, ws.out, ws.before)
    assert_message(err, what=what, where=f"{ws.pyproject}{below}", hint=hint)


def test_every_setting_at_its_limit_is_accepted(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """Control: the extreme values that are still valid generate (protocol version 0 and 65535 alike)."""
    ws.pyproject.write_text(
        '[tool.acpgen]\npackage = "p0"\nunstable-package = "p1"\nprotocol-version = 65535\n', encoding="utf-8"
    )
    schema = ws.schema({"$schema": DIALECT, "$defs": {"Foo": OBJECT_DEF}})
    code = main(ws.generate(schema, "--stable"))
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    assert "PROTOCOL_VERSION: Final = 65535" in (ws.out / "p0" / "_version.py").read_text(encoding="utf-8")
