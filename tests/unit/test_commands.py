"""The command line lives in one package, ``acpgen.commands`` (issue 34, item 8): one module per
command and the parser; ``acpgen`` (the console script) and ``python -m acpgen`` both reach it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from acpgen.commands import parser
from acpgen.versions import installed_version

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ROOT / "generator" / "acpgen" / "commands"


def test_python_m_acpgen_runs_the_command_line(tmp_path: Path) -> None:
    """Run from an unrelated folder, as a user would."""
    done = subprocess.run(
        [sys.executable, "-m", "acpgen", "--version"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"acpgen {installed_version('acpgen')}"


def test_python_m_acpgen_reports_a_bad_configuration_as_the_console_script_does(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.acpgen]\npackage = 3\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "acpgen", "generate", "--check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("acpgen: error: setting 'package' in [tool.acpgen] must be a string"), done.stderr


def test_every_command_is_a_module_of_the_commands_package() -> None:
    """Each subcommand of the parser is run by a module of ``acpgen.commands``, one per command."""
    top = parser.parser()
    found: dict[str, str] = {}
    pending = [("", top)]
    while pending:
        prefix, node = pending.pop()
        for action in node._subparsers._group_actions if node._subparsers else ():  # type: ignore[union-attr]
            for name, sub in action.choices.items():
                run = sub.get_default("run")
                if run is None:
                    pending.append((f"{prefix}{name} ", sub))
                else:
                    found[f"{prefix}{name}"] = run.__module__
    assert found == {
        "init": "acpgen.commands.init",
        "generate": "acpgen.commands.generate",
        "schema fetch": "acpgen.commands.schema_fetch",
        "schema bump": "acpgen.commands.bump",
        "diff": "acpgen.commands.diff",
        "vendor": "acpgen.commands.vendor",
        "features": "acpgen.commands.features",
        "conformance": "acpgen.commands.tools",
        "trace": "acpgen.commands.tools",
        "relay": "acpgen.commands.tools",
    }
    modules = {p.stem for p in COMMANDS.glob("*.py")} - {"__init__", "parser"}
    assert modules == {name.rpartition(".")[2] for name in found.values()}
