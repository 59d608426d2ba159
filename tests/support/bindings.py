"""Helpers for tests of the committed generated packages."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import TypeAdapter

from acpgen.ir.naming import type_class_name

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
PACKAGES = {"stable": "acp_bindings", "unstable": "acp_bindings_unstable"}
SCHEMA_FILES = {
    "stable": ROOT / "schema" / "v1" / "schema.json",
    "unstable": ROOT / "schema" / "v1" / "schema.unstable.json",
}


@cache
def schema(variant: str) -> dict[str, Any]:
    """The pinned JSON schema a build was generated from (parsed once; do not modify it)."""
    loaded: dict[str, Any] = json.loads(SCHEMA_FILES[variant].read_text(encoding="utf-8"))
    return loaded


def models(variant: str) -> ModuleType:
    """The models module of the committed build of ``variant``."""
    return importlib.import_module(f"{PACKAGES[variant]}.models")


@cache
def adapter(variant: str, def_name: str) -> TypeAdapter[Any]:
    """A TypeAdapter for the type generated from ``$defs[def_name]`` (classes and aliases alike), built once."""
    return TypeAdapter(getattr(models(variant), type_class_name(def_name)))


def read(variant: str, def_name: str, value: Any) -> Any:
    """Validate a Python value (parsed JSON) as the type of ``def_name``."""
    return adapter(variant, def_name).validate_python(value)


def wire(variant: str, def_name: str, obj: Any) -> Any:
    """Dump a model back to JSON-compatible data the way a peer would send it."""
    return adapter(variant, def_name).dump_python(obj, mode="json", by_alias=True, exclude_unset=True)


@dataclass(frozen=True)
class CorpusMessage:
    """One message of tests/corpus: the $defs type of its payload and the whole JSON-RPC message."""

    name: str
    folder: str
    def_name: str
    payload_key: str
    message: dict[str, Any]

    @property
    def payload(self) -> Any:
        return self.message[self.payload_key]


def corpus(folder: str) -> list[CorpusMessage]:
    """The messages of ``tests/corpus/<folder>`` (stable or unstable)."""
    found = []
    for path in sorted((CORPUS / folder).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found.append(CorpusMessage(path.stem, folder, data["def"], data["payload"], data["message"]))
    return found


def field_doc(cls: type, attr: str) -> str:
    """The attribute docstring of ``cls.attr`` in the generated source (what an editor shows)."""
    import ast
    import inspect

    body = ast.parse(inspect.getsource(cls)).body[0]
    assert isinstance(body, ast.ClassDef)
    for node, after in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == attr
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            return after.value.value
    return ""
