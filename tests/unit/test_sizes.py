"""Files under 600 lines and functions under 60, in generator/ (the runtime included): where a
reader still holds the whole thing (issue 44, item 5; the brief's "small modules")."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "generator"
MOST_LINES = 600
"""Lines of a Python file."""
MOST_FUNCTION_LINES = 60
"""Lines of a function or method, from its ``def`` to its last line (nested ones counted too)."""


def _functions(text: str) -> list[tuple[str, int, int]]:
    """``(name, first line, lines)`` of every function of ``text``, nested ones on their own: from
    its ``def`` (its decorators left out) to its last line."""
    return [
        (node.name, node.lineno, (node.end_lineno or node.lineno) - node.lineno + 1)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def _sizes() -> list[tuple[str, str]]:
    """``(path below generator/, what is too long)`` for every file and function over its limit."""
    found = []
    for path in sorted(GENERATOR.rglob("*.py")):
        name = path.relative_to(GENERATOR).as_posix()
        text = path.read_text(encoding="utf-8")
        if (lines := len(text.splitlines())) > MOST_LINES:
            found.append((name, f"{lines} lines"))
        found += [(name, f"{f}() at line {at}: {n} lines") for f, at, n in _functions(text) if n > MOST_FUNCTION_LINES]
    return found


def test_no_file_and_no_function_is_over_its_limit() -> None:
    over = [f"{name}: {what}" for name, what in _sizes()]
    assert not over, "over the limits (split them where their seams are):\n" + "\n".join(over)


def test_the_measure_counts_each_function_from_its_def_to_its_last_line() -> None:
    body = "\n".join(f"    x{n} = {n}" for n in range(MOST_FUNCTION_LINES - 1))
    nested = body.replace("\n", "\n    ")
    text = f"@decorated\ndef exactly():\n{body}\n\ndef outer():\n    def inner():\n    {nested}\n        x = 0\n"
    assert _functions(text) == [("exactly", 2, 60), ("outer", 63, 62), ("inner", 64, 61)]
