"""The places of a project that repeat the pinned schema version, declared in ``[tool.acpgen.bump]``.

A project that builds from a pinned schema often names the version elsewhere too: a README, a
test harness that installs the same npm package. ``acpgen schema bump`` moves those places with
the lock, and ``acpgen schema bump --check`` says which disagree with it. Each place is a *pin*::

    [tool.acpgen.bump]
    command = "make bump VERSION={version}"   # what the messages tell to run (default: acpgen's)
    pins = [
        # a text in which {version} stands for the version ({package} for the package): every
        # occurrence in the file is a pin, rewritten by the bump (whitespace matches any whitespace)
        {file = "README.md", text = "`{package}` {version}"},
        # a JSON pointer to a string that is the version: checked; a command of `run` moves it
        {file = "package.json", json = "/dependencies/@agentclientprotocol~1sdk"},
    ]
    run = ["npm install --package-lock-only --save-exact {package}@{version}"]

Nothing here changes a file: :func:`moved` says what the text pins' files become (only the
version inside a text pin's matches changes), and the bump writes them
(:func:`acpgen.output.project_files.rewrite_files`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acpgen.errors import AcpgenError, Problem
from acpgen.source.config import acpgen_table
from acpgen.source.fetch import VERSION
from acpgen.source.schema_lock import unsafe_relative_path

TABLE = "bump"
DEFAULT_COMMAND = "acpgen schema bump --version {version}"
_KEYS = frozenset({"command", "pins", "run"})
_PIN_KEYS = frozenset({"file", "text", "json"})


@dataclass(frozen=True, slots=True)
class Pin:
    """One declared place that names the version."""

    file: str
    """The file, relative to the configuration's folder (forward slashes)."""
    text: str = ""
    """A text with ``{version}`` (and optionally ``{package}``): every occurrence is a pin."""
    json: str = ""
    """A JSON pointer to a string holding the version (checked, moved by a command)."""
    origin: str = ""
    """Where it is declared (``pyproject.toml#/tool/acpgen/bump/pins/0``)."""


@dataclass(frozen=True, slots=True)
class BumpConfig:
    """``[tool.acpgen.bump]``: the pins, the commands a bump runs, how messages name the bump."""

    root: Path
    """The configuration's folder: pins and commands are relative to it."""
    origin: str
    """``pyproject.toml#/tool/acpgen/bump``."""
    pins: tuple[Pin, ...] = ()
    run: tuple[str, ...] = ()
    """Commands run (no shell) from ``root`` after the regeneration, ``{version}`` and ``{package}`` filled."""
    command: str = DEFAULT_COMMAND
    """The command that moves every pin to a version (named by the messages)."""

    def bump_command(self, version: str) -> str:
        """The command that moves everything to ``version``."""
        return self.command.replace("{version}", version)


@dataclass(frozen=True, slots=True)
class Sighting:
    """A version a pin names in its file."""

    pin: Pin
    where: str
    """``file:line`` for a text pin, ``file#pointer`` for a JSON pin."""
    version: str
    span: tuple[int, int] = (0, 0)
    """The version's characters in the file (text pins)."""


def load_bump_config(pyproject: Path) -> BumpConfig:
    """The ``[tool.acpgen.bump]`` table of ``pyproject`` (no pins when it has none), checked."""
    origin = f"{pyproject}#/tool/acpgen/{TABLE}"
    table = acpgen_table(pyproject).get(TABLE, {}) if pyproject.is_file() else {}
    if not isinstance(table, dict):
        raise AcpgenError(_bad(origin, "must be a table", "Write it as [tool.acpgen.bump]."))
    problems = [
        _bad(f"{origin}/{key}", f"is not a setting of [tool.acpgen.{TABLE}]", f"Known: {', '.join(sorted(_KEYS))}.")
        for key in sorted(table.keys() - _KEYS)
    ]
    command = table.get("command", DEFAULT_COMMAND)
    if not isinstance(command, str) or "{version}" not in command:
        problems.append(
            _bad(f"{origin}/command", "must be a string naming {version}", 'e.g. "make bump VERSION={version}".')
        )
    run = table.get("run", [])
    if not isinstance(run, list) or not all(isinstance(c, str) and c.strip() for c in run):
        problems.append(_bad(f"{origin}/run", "must be a list of commands (strings)", 'e.g. ["make test"].'))
    raw_pins = table.get("pins", [])
    pins: list[Pin] = []
    if not isinstance(raw_pins, list):
        problems.append(
            _bad(f"{origin}/pins", "must be a list of tables", 'e.g. [{file = "README.md", text = "v{version}"}].')
        )
    else:
        for index, raw in enumerate(raw_pins):
            pin, found = _pin(raw, f"{origin}/pins/{index}")
            problems += found
            if pin is not None:
                pins.append(pin)
    if problems:
        raise AcpgenError(*problems)
    return BumpConfig(root=pyproject.parent, origin=origin, pins=tuple(pins), run=tuple(run), command=str(command))


def _pin(raw: object, origin: str) -> tuple[Pin | None, list[Problem]]:
    """One entry of ``pins``, or the problems with it."""
    shape = 'Write {file = "path", text = "... {version} ..."} or {file = "path", json = "/json/pointer"}.'
    if not isinstance(raw, dict):
        return None, [_bad(origin, "must be a table", shape)]
    problems = [_bad(f"{origin}/{key}", "is not a key of a pin", shape) for key in sorted(raw.keys() - _PIN_KEYS)]
    file, text, pointer_ = raw.get("file"), raw.get("text", ""), raw.get("json", "")
    if not isinstance(file, str) or unsafe_relative_path(file) is not None:
        reason = unsafe_relative_path(file) if isinstance(file, str) else "is missing or not a string"
        problems.append(_bad(f"{origin}/file", f"{reason}: a pin names a file below the configuration's folder", shape))
    if not isinstance(text, str) or not isinstance(pointer_, str) or bool(text) == bool(pointer_):
        problems.append(_bad(origin, "needs exactly one of `text` and `json`, as a string", shape))
    elif text and text.count("{version}") != 1:
        problems.append(_bad(f"{origin}/text", "must hold {version} exactly once", shape))
    elif pointer_ and not pointer_.startswith("/"):
        problems.append(_bad(f"{origin}/json", "must be a JSON pointer (starting with /)", shape))
    if problems:
        return None, problems
    assert isinstance(file, str) and isinstance(text, str) and isinstance(pointer_, str)
    return Pin(file=file, text=text, json=pointer_, origin=origin), []


def _bad(where: str, what: str, hint: str) -> Problem:
    return Problem(what=f"{where.rpartition('#')[2] or 'the table'} {what}", where=where, hint=hint)


def sightings(config: BumpConfig, package: str) -> list[Sighting]:
    """Every version the pins name, in declaration order; AcpgenError naming every pin that names
    none (its file is missing, its text absent, its pointer not a string)."""
    found: list[Sighting] = []
    problems: list[Problem] = []
    for pin in config.pins:
        path = config.root / pin.file
        try:
            content = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            hint = f"Restore the file, or correct or remove the pin ({pin.origin})."
            problems.append(Problem(what=f"cannot read the pinned file: {error}", where=str(path), hint=hint))
            continue
        seen = _json_sightings(pin, content) if pin.json else _text_sightings(pin, content, package)
        if isinstance(seen, Problem):
            problems.append(seen)
        else:
            found += seen
    if problems:
        raise AcpgenError(*problems)
    return found


def _text_sightings(pin: Pin, content: str, package: str) -> list[Sighting] | Problem:
    matches = list(_pattern(pin.text, package).finditer(content))
    if not matches:
        return Problem(
            what=f"{pin.file} holds no {pin.text!r} (with {{version}} a version)",
            where=pin.file,
            hint=f"The text was reworded: correct the pin ({pin.origin}) or the file.",
        )
    return [
        Sighting(
            pin, f"{pin.file}:{content.count(chr(10), 0, m.start('version')) + 1}", m["version"], m.span("version")
        )
        for m in matches
    ]


def _pattern(text: str, package: str) -> re.Pattern[str]:
    """``text`` as a regular expression: ``{version}`` a named group, ``{package}`` the package,
    a run of whitespace any run of whitespace (a paragraph may be rewrapped)."""

    def literal(part: str) -> str:
        tokens = (token for token in re.split(r"(\s+)", part) if token)
        return "".join(
            r"\s+" if token.isspace() else re.escape(package).join(map(re.escape, token.split("{package}")))
            for token in tokens
        )

    before, _, after = text.partition("{version}")
    return re.compile(literal(before) + f"(?P<version>{VERSION.pattern})" + literal(after))


def _json_sightings(pin: Pin, content: str) -> list[Sighting] | Problem:
    where = f"{pin.file}#{pin.json}"
    try:
        value: Any = json.loads(content)
    except ValueError as error:
        return Problem(what=f"{pin.file} is not JSON: {error}", where=pin.file, hint="Fix the file, or the pin.")
    for part in pin.json.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            value = None
            break
    if not isinstance(value, str):
        return Problem(
            what=f"{pin.file} holds no string at {pin.json}",
            where=where,
            hint=f"Correct the pointer of the pin ({pin.origin}), or the file.",
        )
    return [Sighting(pin, where, value)]


def disagreements(found: Sequence[Sighting], package: str, version: str, config: BumpConfig) -> list[Problem]:
    """A problem for every sighting that names another version than ``version``, saying what to run."""
    hint = (
        f"Run `{config.bump_command(version)}`: it moves every pin of [tool.acpgen.{TABLE}] to the locked "
        "version (fetching the schema, regenerating and running the bump's commands)."
    )
    return [
        Problem(
            what=f"{s.where} names {s.version}, but the schema lock pins {package} {version}", where=s.where, hint=hint
        )
        for s in found
        if s.version != version
    ]


def moved(config: BumpConfig, package: str, version: str) -> dict[str, str]:
    """The new text of every file whose text pins name another version than ``version``, by path
    relative to the project (written by :func:`acpgen.output.project_files.rewrite_files`). JSON
    pins are left to the bump's commands (npm writes package.json and its lock)."""
    spans: dict[str, set[tuple[int, int]]] = {}
    for sighting in sightings(config, package):
        if not sighting.pin.json and sighting.version != version:
            spans.setdefault(sighting.pin.file, set()).add(sighting.span)
    contents = {}
    for file, places in sorted(spans.items()):
        content = (config.root / file).read_bytes().decode("utf-8")
        for start, end in sorted(places, reverse=True):
            content = content[:start] + version + content[end:]
        contents[file] = content
    return contents
