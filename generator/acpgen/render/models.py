"""Render the pydantic models of one protocol variant with datamodel-code-generator."""

from __future__ import annotations

import ast
import json
import warnings
from collections import defaultdict
from typing import Any

from datamodel_code_generator import InputFileType, PythonVersion, generate
from datamodel_code_generator._shared_types import LiteralType
from datamodel_code_generator.enums import DataModelType

from acpgen.render.prepare import ModelInput
from acpgen.render.templating import dunder_all
from acpgen.resources import templates_dir

DCG_OPTIONS: dict[str, Any] = {
    "input_file_type": InputFileType.JsonSchema,
    "output_model_type": DataModelType.PydanticV2BaseModel,
    "target_python_version": PythonVersion.PY_311,
    "disable_future_imports": True,
    "disable_timestamp": True,
    "formatters": [],
    "use_annotated": True,
    "use_union_operator": True,
    "use_standard_collections": True,
    "use_schema_description": True,
    "use_field_description": True,
    "use_attribute_docstrings": False,
    "use_type_alias": True,
    "strict_nullable": True,
    "field_constraints": True,
    "enum_field_as_literal": LiteralType.All,
    "snake_case_field": True,
    "keep_model_order": False,
    "type_mappings": ["string+uri=string"],
}
"""datamodel-code-generator's settings, apart from what prepared input adds (templates, their
data, aliases, the file header); the benchmark runs the generator alone with them."""


def render_models(model_input: ModelInput, header: str) -> tuple[str, ast.Module]:
    """The text of ``models.py`` (not yet formatted), from prepared input, and the parsed
    module (without its ``__all__``): read once, for the export list, the class check and the
    builders' fields."""
    imports = [header.rstrip()]
    if model_input.typing_names:
        imports.append(f"from typing import {', '.join(model_input.typing_names)}")
    if model_input.pydantic_names:
        imports.append(f"from pydantic import {', '.join(model_input.pydantic_names)}")
    if model_input.message_names:
        imports.append(f"from ._runtime.wire.message_unions import {', '.join(model_input.message_names)}")
    if model_input.support_names:
        imports.append(f"from ._runtime.wire.model_rules import {', '.join(model_input.support_names)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = generate(
            json.dumps(model_input.schema),
            **DCG_OPTIONS,
            custom_template_dir=templates_dir() / "models",
            extra_template_data=defaultdict(dict, model_input.template_data),
            aliases=model_input.aliases,
            custom_file_header="\n".join(imports),
        )
    assert isinstance(text, str)
    tree = ast.parse(text)
    return text + _export_list(tree), tree


def _export_list(tree: ast.Module) -> str:
    """An ``__all__`` naming every class and type alias the module defines, appended after it.

    The names are read from the rendered module itself, so the list is exactly what it defines.
    """
    names = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    public = [name for name in names if not name.startswith("_")]
    return f"\n\n__all__ = {dunder_all(public)}\n"
