"""Settings from ``[tool.acpgen]`` in pyproject.toml."""

from __future__ import annotations

import keyword
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from acpgen.errors import AcpgenError, Problem
from acpgen.resources import schema_dir


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the schema and the output live, and what the packages are called."""

    schema_dir: Path = Path("schema")
    """The schema folder; where the configuration names none, the pinned schema shipped with acpgen."""
    output_dir: Path = Path("generated")
    stable_schema: str = "v1/schema.json"
    unstable_schema: str = "v1/schema.unstable.json"
    package: str = "acp_bindings"
    unstable_package: str = "acp_bindings_unstable"
    unstable: bool = False
    """Build the unstable variant when the CLI is not told which."""
    protocol_version: int = 1
    capability_rules: str = "capability-rules.json"
    """The curated gating rule table, relative to the schema folder."""
    conformance_requirements: str = "conformance-requirements.json"
    """The curated conformance requirement table, relative to the schema folder (empty: none, the
    packages carry the requirements derived from the schema only)."""
    feature_manifest: str = "unstable-features.json"
    """The curated unstable feature manifest, relative to the schema folder."""
    strict_capabilities: bool = False
    """Fail generation when a capability is neither gated by a rule nor listed as informational."""
    cache_dir: Path = Path(".acpgen-cache")
    """Where ``acpgen generate`` remembers its last run, to skip a regeneration that changes nothing."""
    unstable_features: tuple[str, ...] = ()
    """Unstable features a bare ``acpgen generate`` adds to the stable protocol (in ``package``)."""
    experimental: bool = False
    """A draft protocol's build (``--protocol 2``): its packages say they may change without notice
    (set by :func:`acpgen.source.protocols.for_protocol`, not by the configuration)."""
    regenerate: str = ""
    """The command that rewrites the output, named in each file's header and by ``--check`` when the
    output is stale (``make generate`` in acpgen's repository); empty: the ``acpgen generate`` command
    line that builds it."""


@dataclass(frozen=True, slots=True)
class Build:
    """One package to render: its variant, or the unstable features selected, and its name."""

    variant: Literal["stable", "unstable"]
    package: str
    """The import name the package is documented under."""
    features: tuple[str, ...] | None = None
    """The selected unstable features, for a selection build."""
    origin: str = "--unstable-feature"
    """Where the selection was given (for problems)."""
    folder: str | None = None
    """The folder it is written to (by default the package's name)."""
    tools: frozenset[str] = frozenset()
    """The tools it holds besides the bindings and their runtime (``conformance``, ``relay``, ``trace``:
    ``acpgen vendor --with``, and the builds acpgen runs its own tools from)."""


_KINDS: dict[str, type] = {  # what [tool.acpgen] may set, and its kind
    "schema_dir": str,
    "output_dir": str,
    "stable_schema": str,
    "unstable_schema": str,
    "package": str,
    "unstable_package": str,
    "unstable": bool,
    "protocol_version": int,
    "capability_rules": str,
    "feature_manifest": str,
    "conformance_requirements": str,
    "strict_capabilities": bool,
    "cache_dir": str,
    "unstable_features": list,
    "regenerate": str,
}


_KIND_NAMES = {list: "list of strings", str: "string", bool: "boolean", int: "integer"}

SUBTABLES = frozenset({"bump"})
"""Tables inside ``[tool.acpgen]`` that a command reads itself (``[tool.acpgen.bump]``:
:mod:`acpgen.source.pins`)."""


def packaged_settings() -> Settings:
    """The settings of the pinned schema shipped with acpgen (what ``acpgen vendor`` builds from):
    the defaults, checked as strictly as acpgen's own repository checks them."""
    return Settings(schema_dir=schema_dir(), strict_capabilities=True)


def load_settings(pyproject: Path) -> Settings:
    """The settings in ``pyproject`` (paths resolved against its folder); defaults where it says
    nothing (the schema: the one shipped with acpgen)."""
    root = pyproject.parent
    table = acpgen_table(pyproject) if pyproject.is_file() else {}
    known = {f.name.replace("_", "-"): f for f in fields(Settings) if f.name in _KINDS}
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key in SUBTABLES:
            continue
        if key not in known:
            raise AcpgenError(
                Problem(
                    what=f"unknown setting {key!r} in [tool.acpgen]",
                    where=f"{pyproject}#/tool/acpgen/{key}",
                    hint=f"Known settings: {', '.join(sorted(known))}.",
                )
            )
        expected = _KINDS[known[key].name]
        if expected is list and isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = tuple(value)
        elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise AcpgenError(
                Problem(
                    what=f"setting {key!r} in [tool.acpgen] must be a {_KIND_NAMES.get(expected, expected.__name__)}, "
                    f"not {value!r}",
                    where=f"{pyproject}#/tool/acpgen/{key}",
                    hint="Correct the value in pyproject.toml.",
                )
            )
        _check_value(key, value, pyproject)
        values[known[key].name] = Path(str(value)) if known[key].name.endswith("_dir") else value
    settings = Settings(**values)
    _check_packages(settings, pyproject)
    return Settings(
        **{
            **{f.name: getattr(settings, f.name) for f in fields(Settings)},
            "schema_dir": root / settings.schema_dir if "schema_dir" in values else schema_dir(),
            "output_dir": root / settings.output_dir,
            "cache_dir": root / settings.cache_dir,
        }
    )


def acpgen_table(pyproject: Path) -> dict[str, Any]:
    """The ``[tool.acpgen]`` table of a pyproject.toml file (empty when it has none)."""
    try:
        document = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise AcpgenError(
            Problem(what=f"cannot read the configuration: {error}", where=str(pyproject), hint="Fix the file.")
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise AcpgenError(
            Problem(
                what=f"the configuration is not valid TOML: {error}", where=str(pyproject), hint="Fix the TOML syntax."
            )
        ) from None
    except RecursionError:
        raise AcpgenError(
            Problem(
                what="the configuration is nested too deeply to read",
                where=str(pyproject),
                hint="Fix the TOML: flatten it.",
            )
        ) from None
    table: Any = document
    for depth, key in enumerate(("tool", "acpgen")):
        table = table.get(key, {})
        if not isinstance(table, dict):
            raise AcpgenError(
                Problem(
                    what=f"`{'.'.join(('tool', 'acpgen')[: depth + 1])}` in the configuration must be a table",
                    where=f"{pyproject}#/tool" + ("/acpgen" if depth else ""),
                    hint="Write the settings under a [tool.acpgen] table.",
                )
            )
    return dict(table)


_PROTOCOL_VERSIONS = range(2**16)
"""The protocol version is a uint16 on the wire (``ProtocolVersion``)."""


def _check_value(key: str, value: Any, pyproject: Path) -> None:
    """Refuse values no run could use: a NUL character in a name or path, an impossible protocol version."""
    where = f"{pyproject}#/tool/acpgen/{key}"
    if isinstance(value, str) and "\0" in value:
        raise AcpgenError(Problem(what=f"setting {key!r} contains a NUL character", where=where, hint="Remove it."))
    if key == "protocol-version" and value not in _PROTOCOL_VERSIONS:
        raise AcpgenError(
            Problem(
                what=f"setting 'protocol-version' must be a protocol version (0 to 65535), not {value!r}",
                where=where,
                hint="Set the version the bindings speak (the integer `initialize` carries, 1 today).",
            )
        )


def _check_packages(settings: Settings, pyproject: Path) -> None:
    """The two package names are distinct importable names (each is also a folder under the output)."""
    for key, name in (("package", settings.package), ("unstable-package", settings.unstable_package)):
        if not name.isidentifier() or keyword.iskeyword(name):
            raise AcpgenError(
                Problem(
                    what=f"setting {key!r} must be a Python package name, not {name!r}",
                    where=f"{pyproject}#/tool/acpgen/{key}",
                    hint="Use an identifier such as acp_bindings: the package is imported by that name.",
                )
            )
    if settings.package == settings.unstable_package:
        raise AcpgenError(
            Problem(
                what=f"settings 'package' and 'unstable-package' are both {settings.package!r}",
                where=f"{pyproject}#/tool/acpgen/unstable-package",
                hint="Give the unstable build a package name of its own.",
            )
        )


def refuse_shipped_schema(settings: Settings, config: str, doing: str) -> None:
    """Refuse to rewrite the schema shipped inside acpgen's own package (a configuration naming no
    ``schema-dir``, or no configuration at all, builds from it): ``doing`` names the command."""
    if settings.schema_dir != schema_dir():
        return
    from acpgen.errors import AcpgenError, Problem

    raise AcpgenError(
        Problem(
            what=f"this project builds from the schema shipped with acpgen, which {doing} must not rewrite",
            where=f"{config}#/tool/acpgen/schema-dir",
            hint="Set schema-dir in [tool.acpgen] to a folder of the project's own (then `acpgen schema "
            "fetch --version x.y.z` pins it there), or upgrade acpgen for a newer shipped schema.",
        )
    )
