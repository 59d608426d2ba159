"""Plausible texts for the realistic turn (``bench.turn_writer``), made deterministically.

An agent's turn carries mostly text: source files shown or edited, test runs, search results,
and its own prose. This module makes them from a seeded ``random.Random``, so that the same
seed gives the same bytes on every machine and Python version (only ``randrange`` is used,
whose results Python keeps stable across versions).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

VERBS = (
    "build", "parse", "send", "read", "write", "open", "close", "resolve", "encode", "decode",
    "upload", "download", "stream", "merge", "split", "validate", "normalise", "refresh", "sign",
    "schedule", "collect", "flush", "drain", "acquire", "release", "render", "load", "store",
)  # fmt: skip
NOUNS = (
    "request", "response", "headers", "body", "chunk", "session", "token", "url", "payload",
    "manifest", "part", "bucket", "object", "lease", "cursor", "batch", "digest", "range",
    "policy", "credentials", "endpoint", "pool", "checksum", "listing", "prefix", "upload",
)  # fmt: skip
TYPES = ("str", "int", "bytes", "float", "bool", "Headers", "Mapping[str, str]", "Timeout", "Part | None")
ERRORS = ("TransportError", "HarborError", "ChecksumMismatch", "LeaseExpired")


@dataclass(frozen=True, slots=True)
class Function:
    """One function of a generated module: its name, its parameters and its source lines."""

    name: str
    params: tuple[str, ...]
    lines: tuple[str, ...]


def pick(rng: random.Random, items: tuple[str, ...]) -> str:
    return items[rng.randrange(len(items))]


def _statements(rng: random.Random, params: tuple[str, ...], indent: str) -> list[str]:
    first = params[0] if params else "self"
    noun = pick(rng, NOUNS)
    templates = (
        f"{noun} = {first}.get({noun!r})",
        f'if {first} is None:\n{indent}    raise {pick(rng, ERRORS)}(f"missing {noun} for {{{first}!r}}")',
        f'log.debug("{pick(rng, VERBS)} %s: %d bytes", {first}, len({noun}))',
        f"for index, item in enumerate({first}):\n{indent}    {noun}[index] = item.strip()",
        f"deadline = time.monotonic() + {rng.randrange(2, 120)}",
        f"{noun} = {{key: value for key, value in {first}.items() if value is not None}}",
        f"while not {noun}.done():\n{indent}    time.sleep(min(0.05 * attempt, 1.0))",
        f"with self._lock:\n{indent}    self._{noun}s.append({noun})",
        f"{noun} = {pick(rng, VERBS)}_{pick(rng, NOUNS)}({first}, timeout=timeout)",
        f'headers["x-harbor-{noun}"] = str({first})',
        f"if len({noun}) > MAX_{noun.upper()}_BYTES:\n{indent}    {noun} = {noun}[:MAX_{noun.upper()}_BYTES]",
        f"# {pick(rng, VERBS)} the {noun} before the {pick(rng, NOUNS)}: the server may reorder them",
    )
    count = 3 + rng.randrange(9)
    chosen = [templates[rng.randrange(len(templates))] for _ in range(count)]
    return [f"{indent}{statement}" for statement in chosen] + [f"{indent}return {noun}"]


def function(rng: random.Random, used: set[str], indent: str = "") -> Function:
    """A function (a method when ``indent`` is set) with a typed signature and a docstring."""
    while (name := f"{pick(rng, VERBS)}_{pick(rng, NOUNS)}") in used:
        pass
    used.add(name)
    params = tuple(dict.fromkeys(pick(rng, NOUNS) for _ in range(1 + rng.randrange(3))))
    typed = ", ".join(f"{p}: {pick(rng, TYPES)}" for p in params)
    receiver = "self, " if indent else ""
    head = f"{indent}def {name}({receiver}{typed}, *, timeout: Timeout = DEFAULT_TIMEOUT) -> {pick(rng, TYPES)}:"
    doc = f'{indent}    """{name.replace("_", " ").capitalize()} for one {params[0]}, within ``timeout``."""'
    return Function(name, params, (head, doc, *_statements(rng, params, indent + "    ")))


def module(rng: random.Random, title: str, functions: int) -> str:
    """A Python module of about ``functions`` functions and methods, with imports and a class."""
    used: set[str] = set()
    lines = [
        f'"""{title}"""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        "import time",
        "from collections.abc import Mapping",
        "from dataclasses import dataclass, field",
        "",
        f"from harbor.errors import {', '.join(ERRORS)}",
        "from harbor.types import DEFAULT_TIMEOUT, Headers, Part, Timeout",
        "",
        "log = logging.getLogger(__name__)",
        "",
    ]
    for index in range(functions):
        if index % 6 == 0:  # a top-level function, then a class whose methods follow
            lines += ["", "", *function(rng, used).lines, "", ""]
            lines += ["@dataclass", f"class {pick(rng, NOUNS).capitalize()}{pick(rng, NOUNS).capitalize()}:"]
            lines += [f'    """State of one {pick(rng, NOUNS)} between calls."""', ""]
            lines += [f"    {noun}: {pick(rng, TYPES)} = None" for noun in (pick(rng, NOUNS), pick(rng, NOUNS))]
            lines += ["    _lock: object = field(default_factory=object, repr=False)"]
        else:
            lines += ["", *function(rng, used, "    ").lines]
    return "\n".join(lines) + "\n"


def numbered(text: str, first: int = 1) -> str:
    """``text`` with line numbers, as a file-reading tool shows it."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.splitlines(), first))


def grep_output(rng: random.Random, files: tuple[str, ...], pattern: str, hits: int) -> str:
    """The output of ``grep -rn`` over some files."""
    lines = []
    for _ in range(hits):
        path = files[rng.randrange(len(files))]
        snippet = f"{pick(rng, NOUNS)} = {pattern}({pick(rng, NOUNS)}, timeout=timeout)"
        lines.append(f"{path}:{rng.randrange(12, 900)}:        {snippet}")
    return "\n".join(lines)


def pytest_output(rng: random.Random, modules: tuple[str, ...], tests: int, failures: tuple[str, ...]) -> str:
    """A verbose pytest run of ``tests`` tests, with the given tests failing and their tracebacks."""
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.12.7, pytest-8.3.3, pluggy-1.5.0 -- /home/mira/src/harbor/.venv/bin/python",
             "rootdir: /home/mira/src/harbor", "configfile: pyproject.toml", f"collected {tests} items",
             ""]  # fmt: skip
    names = [f"tests/test_{modules[i % len(modules)]}.py::test_{pick(rng, VERBS)}_{pick(rng, NOUNS)}_{i}"
             for i in range(tests - len(failures))] + list(failures)  # fmt: skip
    for index, name in enumerate(sorted(names)):
        outcome = "FAILED" if name in failures else "PASSED"
        lines.append(f"{name} {outcome} {f'[{100 * (index + 1) // tests:>3}%]':>{79 - len(name) - len(outcome)}}")
    for name in failures:
        lines += ["", f"{'_' * 20} {name.split('::')[1]} {'_' * 20}", "", "    def test_retry():"]
        lines += [f">       assert calls == {rng.randrange(2, 6)}", f"E       assert 1 == {rng.randrange(2, 6)}", ""]
        lines += [f"{name.split('::')[0]}:{rng.randrange(20, 200)}: AssertionError"]
    passed, failed = tests - len(failures), len(failures)
    summary = f"{failed} failed, {passed} passed" if failed else f"{passed} passed"
    lines += ["", f"{'=' * 25} {summary} in {rng.randrange(150, 900) / 100:.2f}s {'=' * 25}"]
    return "\n".join(lines) + "\n"


def chunks(rng: random.Random, text: str) -> list[str]:
    """``text`` cut into the small pieces a model streams (one to six words, spaces kept)."""
    words = text.split(" ")
    pieces = []
    while words:
        take = 1 + rng.randrange(6)
        pieces.append(" ".join(words[:take]) + (" " if len(words) > take else ""))
        words = words[take:]
    return pieces


def revise(rng: random.Random, text: str, added: int) -> str:
    """``text`` with ``added`` new top-level functions inserted before a function near its middle."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("def ")]
    at = starts[len(starts) // 2] if starts else len(lines)
    used = {line.split("def ")[1].split("(")[0] for line in lines if line.lstrip().startswith("def ")}
    new: list[str] = []
    for _ in range(added):
        new += [*function(rng, used).lines, "", ""]
    return "\n".join([*lines[:at], *new, *lines[at:]]) + "\n"
