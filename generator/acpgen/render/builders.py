"""Template data for the builders: one typed function per model that peers commonly write.

Which builders exist, and their names, come from the IR (:attr:`acpgen.ir.Protocol.builders`:
every variant of a union, whose builder sets its tag, and every method's params and result types);
their signatures come from the model classes as datamodel-code-generator rendered them, read
with :mod:`ast` from the rendered models text (never edited): required fields positional, in
field order, optional ones keyword-only (left out of the message when not given, so that
``None`` means null where the schema allows it).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from dataclasses import dataclass

from acpgen import ir
from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.render.model_keys import defined_names

MODELS = "models"


@dataclass(frozen=True, slots=True)
class Param:
    """One argument of a builder: a field of the model."""

    name: str
    annotation: str
    """The field's type, with names from the models module qualified (``models.ContentBlock``);
    a list is taken as any sequence (``Sequence[...]``: a ``list[TextContentBlock]`` is then a
    fine ``list[ContentBlock]``) and passed on as a list."""
    required: bool
    sequence: bool = False

    @property
    def value(self) -> str:
        """The expression that passes the argument on to the model."""
        return f"_as_list({self.name})" if self.sequence else self.name


@dataclass(frozen=True, slots=True)
class Builder:
    """One builder function."""

    function: str
    class_name: str
    tag_attr: str | None
    tag_value: str | None
    params: tuple[Param, ...]
    doc: str


@dataclass(frozen=True, slots=True)
class _Field:
    attr: str
    alias: str
    annotation: ast.expr
    required: bool


@dataclass(frozen=True, slots=True)
class BuilderModule:
    """The builders and the names their annotations need besides ``models``."""

    builders: tuple[Builder, ...]
    imports: tuple[tuple[str, tuple[str, ...]], ...]
    """``(module, names)`` to import, for names such as ``Any`` and ``Literal``."""


def builder_module(protocol: ir.Protocol, tree: ast.Module) -> BuilderModule:
    """Every builder of the protocol, in function-name order, from the IR and the rendered models
    (parsed)."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    missing = [b for b in protocol.builders if b.class_name not in classes]
    if missing:
        raise AcpgenError(
            *(
                Problem(
                    what=f"the builder {b.function} would build {b.class_name}, which the models module does not "
                    "define as a model class",
                    where=pointer("$defs", b.type),
                    hint="Report this to acpgen's maintainers with the schema: the IR and the models disagree.",
                )
                for b in missing
            )
        )
    defined = defined_names(tree)
    used: set[str] = {"Any"}  # the module's own helper needs it
    found = []
    for b in protocol.builders:
        fields = _fields(classes, b.class_name)
        tag = next((f for f in fields if b.tag is not None and f.alias == b.tag[0]), None)
        params = tuple(_param(f, defined, used) for f in fields if f is not tag)
        found.append(
            Builder(
                function=b.function,
                class_name=b.class_name,
                tag_attr=tag.attr if tag is not None else None,
                tag_value=b.tag[1] if b.tag is not None else None,
                params=tuple(p for p in params if p.required) + tuple(p for p in params if not p.required),
                doc=_builder_doc(protocol, b),
            )
        )
    # read in the IR's order, listed by name (reading marks the annotations it has qualified)
    return BuilderModule(builders=tuple(sorted(found, key=lambda b: b.function)), imports=_imports(tree, used))


def _builder_doc(protocol: ir.Protocol, builder: ir.Builder) -> str:
    t = protocol.type(builder.type)
    if builder.variant is None:
        return _summary(t.description)
    variant = next(v for v in t.variants if v.key == builder.variant)
    return _doc(t, variant, builder.class_name)


def _fields(classes: Mapping[str, ast.ClassDef], name: str) -> list[_Field]:
    """The fields of a model class, its bases' first (as pydantic orders them)."""
    node = classes[name]
    inherited: list[_Field] = []
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            inherited += _fields(classes, base.id)
    own = [_field(stmt) for stmt in node.body if isinstance(stmt, ast.AnnAssign)]
    own_fields = [f for f in own if f is not None]
    overridden = {f.attr for f in own_fields}
    return [f for f in inherited if f.attr not in overridden] + own_fields


def _field(stmt: ast.AnnAssign) -> _Field | None:
    if not isinstance(stmt.target, ast.Name) or stmt.target.id == "model_config":
        return None
    annotation, alias = stmt.annotation, stmt.target.id
    while _is_annotated(annotation):
        assert isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple)
        inner, *metadata = annotation.slice.elts
        alias = next((a for m in metadata if (a := _alias(m)) is not None), alias)
        annotation = inner
    return _Field(attr=stmt.target.id, alias=alias, annotation=annotation, required=stmt.value is None)


def _is_annotated(node: ast.expr) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Annotated"


def _alias(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Field":
        for keyword in node.keywords:
            if keyword.arg == "alias" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
    return None


def _param(field: _Field, defined: frozenset[str], used: set[str]) -> Param:
    # the transformers rewrite the tree they visit: a field inherited by several models shares
    # its annotation's nodes, so each builder reads a copy
    qualified = _Qualify(defined, used).visit(copy.deepcopy(field.annotation))
    sequence = _Sequences()
    taken = sequence.visit(qualified)
    return Param(name=field.attr, annotation=ast.unparse(taken), required=field.required, sequence=sequence.found)


class _Sequences(ast.NodeTransformer):
    """``list[X]`` at the top of an annotation (or of one branch of ``|``) becomes ``Sequence[X]``."""

    def __init__(self) -> None:
        self.found = False

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        node.left, node.right = self.visit(node.left), self.visit(node.right)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        if isinstance(node.value, ast.Name) and node.value.id == "list":
            self.found = True
            return ast.Subscript(value=ast.Name(id="Sequence", ctx=ast.Load()), slice=node.slice, ctx=ast.Load())
        return node


class _Qualify(ast.NodeTransformer):
    """Names defined in the models module become ``models.<name>``; others are noted for import."""

    def __init__(self, defined: frozenset[str], used: set[str]) -> None:
        self._defined, self._used = defined, used

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self._defined:
            return ast.Attribute(value=ast.Name(id=MODELS, ctx=ast.Load()), attr=node.id, ctx=ast.Load())
        self._used.add(node.id)
        return node


def _imports(tree: ast.Module, used: set[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Where the models module imported each used name from (builtins need no import)."""
    sources: dict[str, set[str]] = {"typing": {"Any"}}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name in used:
                    sources.setdefault(node.module, set()).add(alias.name)
    return tuple((module, tuple(sorted(names))) for module, names in sorted(sources.items()))


def _doc(union: ir.TypeDef, variant: ir.UnionVariant, class_name: str) -> str:
    what = f'the ``"{variant.tag}"`` kind' if variant.tag is not None else "a kind"
    head = f"A ``{class_name}``: {what} of ``{union.class_name}``."
    summary = _summary(variant.description) or _summary(union.description)
    return f"{head}\n\n{summary}" if summary else head


def _summary(description: str) -> str:
    return description.strip().split("\n\n")[0]
