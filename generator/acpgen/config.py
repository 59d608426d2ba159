"""Settings from ``[tool.acpgen]`` in pyproject.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from acpgen.errors import AcpgenError, Problem


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the schema and the output live, and what the packages are called."""

    schema_dir: Path = Path("schema")
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
    feature_manifest: str = "unstable-features.json"
    """The curated unstable feature manifest, relative to the schema folder."""
    strict_capabilities: bool = False
    """Fail generation when a capability is neither gated by a rule nor listed as informational."""
    cache_dir: Path = Path(".acpgen-cache")
    """Where ``acpgen generate`` remembers its last run, to skip a regeneration that changes nothing."""
    unstable_features: tuple[str, ...] = ()
    """Unstable features a bare ``acpgen generate`` adds to the stable protocol (in ``package``)."""


_KINDS: dict[str, type] = {
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
    "strict_capabilities": bool,
    "cache_dir": str,
    "unstable_features": list,
}


_KIND_NAMES = {list: "list of strings", str: "string", bool: "boolean", int: "integer"}


def load_settings(pyproject: Path) -> Settings:
    """The settings in ``pyproject`` (paths resolved against its folder); defaults where it says nothing."""
    root = pyproject.parent
    table: dict[str, Any] = {}
    if pyproject.is_file():
        try:
            table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("acpgen", {})
        except tomllib.TOMLDecodeError as error:
            raise AcpgenError(
                Problem(
                    what=f"the configuration is not valid TOML: {error}",
                    where=str(pyproject),
                    hint="Fix the TOML syntax.",
                )
            ) from None
    known = {f.name.replace("_", "-"): f for f in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in table.items():
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
        values[known[key].name] = Path(str(value)) if known[key].name.endswith("_dir") else value
    settings = Settings(**values)
    return Settings(
        **{
            **{f.name: getattr(settings, f.name) for f in fields(Settings)},
            "schema_dir": root / settings.schema_dir,
            "output_dir": root / settings.output_dir,
            "cache_dir": root / settings.cache_dir,
        }
    )
