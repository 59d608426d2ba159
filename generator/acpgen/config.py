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


def load_settings(pyproject: Path) -> Settings:
    """The settings in ``pyproject`` (paths resolved against its folder); defaults where it says nothing."""
    root = pyproject.parent
    table: dict[str, Any] = {}
    if pyproject.is_file():
        table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("acpgen", {})
    known = {f.name.replace("_", "-"): f for f in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise AcpgenError(
                Problem(
                    f"unknown setting {key!r} in [tool.acpgen]",
                    f"{pyproject}#/tool/acpgen/{key}",
                    f"Known settings: {', '.join(sorted(known))}.",
                )
            )
        values[known[key].name] = value
    settings = Settings(**values)
    return Settings(
        **{
            **{f.name: getattr(settings, f.name) for f in fields(Settings)},
            "schema_dir": root / settings.schema_dir,
            "output_dir": root / settings.output_dir,
        }
    )
