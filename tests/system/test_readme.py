"""The README's Python snippets run as a user pasting them would (issue 23, item 3).

Every ```python block of README.md is run, in the order it appears, in one folder of its own (the
user's project), where the bindings are vendored as ``myapp._acp`` (``src/`` on ``PYTHONPATH``,
as after ``acpgen vendor --package myapp._acp --out src/myapp/_acp``), with this environment's
interpreter. An HTML comment on the line before a block says how to run it:

- none, or ``<!-- readme-test: run -->``: saved as a script of its own and run; it must exit 0
  without a traceback; ``<!-- readme-test: run; prints: TEXT -->`` also wants TEXT in its output;
- ``<!-- readme-test: save NAME -->``: saved in the folder as NAME for the blocks that use it
  (such as an agent a later client spawns); it must compile, and a later block must name it;
- ``<!-- readme-test: run beside WORDS -->``: the command WORDS is started in the folder first,
  its first line of output is handed to the block as the environment variable ``README_PEER``
  (the URL a server prints, say), and it is stopped after the block;
- ``<!-- readme-test: not run: REASON -->``: compiled only, and reported as skipped with its
  reason (never silently).

``run; prints:`` and ``run beside`` combine (``run beside WORDS; prints: TEXT``).
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import select
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LIMIT = 120
"""Seconds for one block: only stops a hang."""
_FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!--\s*readme-test:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One ```python block and how the README says to run it."""

    line: int
    code: str
    mode: str
    """``run``, ``save`` or ``not run``."""
    argument: str = ""
    """The file name (``save``) or the reason (``not run``)."""
    prints: str = ""
    beside: str = ""

    @property
    def name(self) -> str:
        return f"line{self.line}"


def blocks(markdown: str) -> list[Block]:
    """Every ```python block of ``markdown``, with its marker read."""
    found = []
    for match in _FENCE.finditer(markdown):
        line = markdown.count("\n", 0, match.start()) + 1
        above = markdown[: match.start()].rstrip("\n").rpartition("\n")[2]
        marker = _MARKER.search(above)
        found.append(_block(line, match.group(1), marker.group(1) if marker else "run"))
    return found


def _block(line: int, code: str, marker: str) -> Block:
    head, _, prints = marker.partition("; prints:")
    head, prints = head.strip(), prints.strip()
    if head == "run":
        return Block(line, code, "run", prints=prints)
    if head.startswith("run beside "):
        return Block(line, code, "run", prints=prints, beside=head.removeprefix("run beside ").strip())
    if head.startswith("save ") and not prints:
        return Block(line, code, "save", argument=head.removeprefix("save ").strip())
    if head.startswith("not run:") and head.removeprefix("not run:").strip():
        return Block(line, code, "not run", argument=head.removeprefix("not run:").strip())
    raise ValueError(f"README.md:{line}: unknown readme-test marker {marker!r} (see tests/system/test_readme.py)")


@contextlib.contextmanager
def _started(words: str, folder: Path, env: dict[str, str]) -> Iterator[str]:
    """Run ``words`` in ``folder`` for the duration of the block; its first line of output."""
    process = subprocess.Popen(
        shlex.split(words), cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], LIMIT)
        line = process.stdout.readline().strip() if ready else ""
        assert line, f"{words!r} printed nothing within {LIMIT} s"
        yield line
    finally:
        process.terminate()
        try:
            process.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def run_block(block: Block, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one ``run`` block in ``folder`` as a user would run the file they pasted it into."""
    script = folder / f"readme_{block.name}.py"
    script.write_text(block.code, encoding="utf-8")
    with _started(block.beside, folder, env) if block.beside else contextlib.nullcontext("") as peer:
        extra = {"README_PEER": peer} if peer else {}
        done = subprocess.run(
            [sys.executable, script.name],
            cwd=folder,
            env=env | extra,
            capture_output=True,
            text=True,
            timeout=LIMIT,
            check=False,
        )
    assert done.returncode == 0 and "Traceback" not in done.stderr, (
        f"README.md:{block.line} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    )
    assert block.prints in done.stdout, f"README.md:{block.line} did not print {block.prints!r}:\n{done.stdout}"
    return done


README_BLOCKS = blocks(README.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The user's project: the bindings vendored as ``myapp._acp``, and every saved block."""
    from acpgen.commands import main

    folder = tmp_path_factory.mktemp("readme-project")
    (folder / "src" / "myapp").mkdir(parents=True)
    (folder / "src" / "myapp" / "__init__.py").write_text("", encoding="utf-8")
    with contextlib.chdir(folder):
        assert main(["vendor", "--package", "myapp._acp", "--out", "src/myapp/_acp"]) == 0
    for block in README_BLOCKS:
        if block.mode == "save":
            (folder / block.argument).write_text(block.code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "ACP_TRACE")}
    return folder, env | {"PYTHONPATH": str(folder / "src")}


def test_the_readme_has_python_blocks_and_each_is_run_or_says_why_not() -> None:
    assert [b for b in README_BLOCKS if b.mode == "run"], "the README shows no runnable Python"
    for block in README_BLOCKS:
        ast.parse(block.code, f"README.md:{block.line}")  # every block is valid Python
        if block.mode == "save":
            later = [b for b in README_BLOCKS if b.line > block.line and block.argument in b.code]
            assert later, f"README.md:{block.line} is saved as {block.argument}, which no later block uses"


@pytest.mark.parametrize("block", [b for b in README_BLOCKS if b.mode != "save"], ids=lambda b: b.name)
def test_readme_block_runs(block: Block, project: tuple[Path, dict[str, str]]) -> None:
    if block.mode == "not run":
        pytest.skip(f"README.md:{block.line} is not run: {block.argument}")
    run_block(block, *project)


# --- the markers themselves, on a made-up README ------------------------------------------------

MADE_UP = """
<!-- readme-test: save peer_name.py -->
```python
NAME = "made-up"
```

```python
from peer_name import NAME
print(NAME)
```

<!-- readme-test: run beside {python} -c "print('peer-1', flush=True); import time; time.sleep(60)"; prints: peer-1 -->
```python
import os
print(os.environ["README_PEER"])
```

<!-- readme-test: not run: it needs a terminal -->
```python
input()
```
"""


def test_the_markers_read_and_run_as_documented(tmp_path: Path) -> None:
    found = blocks(MADE_UP.format(python=sys.executable))
    assert [(b.mode, b.argument, b.prints, bool(b.beside)) for b in found] == [
        ("save", "peer_name.py", "", False),
        ("run", "", "", False),
        ("run", "", "peer-1", True),
        ("not run", "it needs a terminal", "", False),
    ]
    (tmp_path / "peer_name.py").write_text(found[0].code, encoding="utf-8")
    env = dict(os.environ) | {"PYTHONPATH": str(tmp_path)}
    assert run_block(found[1], tmp_path, env).stdout == "made-up\n"
    assert run_block(found[2], tmp_path, env).stdout == "peer-1\n"
    with pytest.raises(AssertionError, match="did not print"):
        run_block(Block(1, "print('other')", "run", prints="expected"), tmp_path, env)
    with pytest.raises(ValueError, match="unknown readme-test marker"):
        blocks("<!-- readme-test: sometimes -->\n```python\npass\n```\n")
