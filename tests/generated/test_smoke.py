"""The committed builds import side by side and say what they were built from."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_both_builds_import_side_by_side() -> None:
    stable = importlib.import_module("acp_bindings")
    unstable = importlib.import_module("acp_bindings_unstable")
    lock = json.loads((ROOT / "schema" / "schema.lock.json").read_text())
    assert stable.VARIANT == "stable" and unstable.VARIANT == "unstable"
    built = (stable.SCHEMA_VERSION, stable.SCHEMA_SHA256, unstable.SCHEMA_VERSION, unstable.SCHEMA_SHA256)
    locked = (
        lock["version"],
        lock["files"]["v1/schema.json"],
        lock["version"],
        lock["files"]["v1/schema.unstable.json"],
    )
    assert built == locked, f"generated/ is not built from the locked schema ({lock['version']}): run `make generate`"
    assert stable.PROTOCOL_VERSION == unstable.PROTOCOL_VERSION == 1
    assert importlib.import_module("acp_bindings.models").NewSessionRequest is not None


def test_models_export_exactly_what_they_define() -> None:
    from typing_extensions import TypeAliasType

    for package in ("acp_bindings", "acp_bindings_unstable"):
        models = importlib.import_module(f"{package}.models")
        defined = {
            name
            for name, value in vars(models).items()
            if not name.startswith("_")
            and ((isinstance(value, type) and value.__module__ == models.__name__) or isinstance(value, TypeAliasType))
        }
        assert sorted(models.__all__) == sorted(defined)
        assert len(defined) > 150
