"""Classes named as the IR names them, whatever the definitions are called.

datamodel-code-generator names a class after the key of its definition, normalised its own way
(``x.y`` even becomes a module ``x``). So the definitions it is given are keyed by the class
names of :mod:`acpgen.ir.naming` (PascalCase ASCII letters and digits, which it keeps as they are),
their references following; and the module it writes is checked to define every class the IR
names, so that the other modules never import a class that is not there.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping
from typing import Any

from acpgen import ir
from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.render.prepare import ModelInput

_PREFIX = "#/$defs/"


def keyed_by_class(model_input: ModelInput, protocol: ir.Protocol) -> ModelInput:
    """``model_input`` with each definition of the IR under its class name, references rewritten."""
    renames = {t.wire: t.class_name for t in protocol.types if t.wire != t.class_name}
    if not renames:
        return model_input
    refs = {f"#{pointer('$defs', wire)}": f"{_PREFIX}{name}" for wire, name in renames.items()}
    schema = _rewritten(model_input.schema, refs)
    schema["$defs"] = {renames.get(name, name): node for name, node in schema["$defs"].items()}
    return dataclasses.replace(model_input, schema=schema)


def _rewritten(node: Any, refs: Mapping[str, str]) -> Any:
    if isinstance(node, list):
        return [_rewritten(value, refs) for value in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            result[key] = _target(value, refs)
        elif key == "mapping" and isinstance(value, dict):
            result[key] = {tag: _target(ref, refs) if isinstance(ref, str) else ref for tag, ref in value.items()}
        else:
            result[key] = _rewritten(value, refs)
    return result


def _target(ref: str, refs: Mapping[str, str]) -> str:
    """A reference to a renamed definition, to its new name (``refs``: old reference -> new)."""
    return refs.get(ref, ref)


def check_class_names(models: ast.Module, protocol: ir.Protocol) -> None:
    """Raise :class:`AcpgenError` for each class the IR names that the models module (parsed) does not define."""
    defined = defined_names(models)
    problems = [
        Problem(
            what=f"definition {wire!r} should become the class {name}, which the models module does not define",
            where=pointer("$defs", wire),
            hint="Rename the definition in the schema "
            "(a PascalCase name of ASCII letters and digits is kept as it is).",
        )
        for wire, name in _expected(protocol)
        if name not in defined
    ]
    if problems:
        raise AcpgenError(*problems)


def _expected(protocol: ir.Protocol) -> list[tuple[str, str]]:
    """(definition, class name) for every type and every branch class the IR names."""
    found = []
    for t in protocol.types:
        found.append((t.wire, t.class_name))
        for v in t.variants:
            if v.hoisted and v.class_name:
                found += [(t.wire, v.class_name), *((t.wire, cls) for _, cls, _ in v.spread)]
    return found


def defined_names(models: ast.Module) -> frozenset[str]:
    """The names the models module (parsed) defines at its top: classes, aliases, annotated names."""
    names: set[str] = set()
    for node in models.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)
