"""Pure rendering: IR to ``{relative path: text}``."""

from __future__ import annotations

from acpgen import ir
from acpgen.render.builders import builder_module
from acpgen.render.error_codes import error_code_views
from acpgen.render.fold_rules import fold_rules, permission_data
from acpgen.render.formatting import format_files
from acpgen.render.header import REGENERATE, generator_version, header
from acpgen.render.model_keys import check_class_names, keyed_by_class
from acpgen.render.models import render_models
from acpgen.render.prepare import prepare
from acpgen.render.stubs import capability_views, connected_roles, method_views, remote_routing, roles, rule_views
from acpgen.render.templating import render_template
from acpgen.runtime import MODULES as RUNTIME_MODULES
from acpgen.runtime import source as runtime_source

PYDANTIC_MINIMUM = (2, 11)
"""The oldest pydantic the generated code runs on (its models use ``validate_by_name`` and
``validate_by_alias``, new in 2.11); the package checks it at import."""

# Output files rendered from templates/package/<name>.jinja, besides models.py, py.typed and the
# runtime modules (acpgen.runtime), which are copied.
PACKAGE_TEMPLATES = (
    "__init__.py",
    "_version.py",
    "builders.py",
    "capabilities.py",
    "errors.py",
    "initialization.py",
    "interfaces.py",
    "methods.py",
    "remote.py",
    "senders.py",
    "serve.py",
    "stability.py",
)


def render(
    protocol: ir.Protocol,
    package: str,
    *,
    folder: str | None = None,
    regenerate: str = REGENERATE,
) -> dict[str, str]:
    """Every file of one generated package, formatted, keyed by path relative to the output folder.

    ``package`` is the import name the package is documented under, ``folder`` the folder it is
    written to (by default the package name), ``regenerate`` the command its headers name.
    """
    return format_files(render_unformatted(protocol, package, folder=folder, regenerate=regenerate))


def render_unformatted(
    protocol: ir.Protocol,
    package: str,
    *,
    folder: str | None = None,
    regenerate: str = REGENERATE,
) -> dict[str, str]:
    """What :func:`render` gives before formatting: a command that renders several packages
    formats them all in one run of ruff (:func:`acpgen.render.formatting.format_files`)."""
    top = header(protocol, regenerate)
    models, tree = render_models(keyed_by_class(prepare(protocol), protocol), top)
    check_class_names(tree, protocol)
    files = {"models.py": models}
    builders = builder_module(protocol, tree)
    data = {
        "header": top.rstrip("\n"),
        "protocol": protocol,
        "package": package,
        "generator_version": generator_version(),
        "pydantic_minimum": ".".join(map(str, PYDANTIC_MINIMUM)),
        "pydantic_minimum_tuple": PYDANTIC_MINIMUM,
        "unstable_items": sorted(protocol.unstable_items),
        "methods": method_views(protocol),
        "roles": roles(protocol),
        "connected": connected_roles(protocol),
        "remote": remote_routing(protocol) if connected_roles(protocol) else None,
        "constant_values": sorted({(m.constant, m.wire) for m in protocol.methods}),
        "constants": sorted({m.constant for m in protocol.methods}),
        "capabilities": capability_views(protocol),
        "rules": rule_views(protocol),
        "builders": builders.builders,
        "builder_imports": builders.imports,
        "error_codes": error_code_views(protocol),
    }
    for name in PACKAGE_TEMPLATES:
        files[name] = render_template(f"{name}.jinja", **data)
    rules = fold_rules(protocol)
    files["session_state.py"] = render_template("session_state.py.jinja", header=data["header"], rules=rules)
    files["trace.py"] = render_template("trace.py.jinja", header=data["header"], package=package, rules=rules)
    files["permissions.py"] = render_template(
        "permissions.py.jinja", header=data["header"], **permission_data(protocol)
    )
    for name in RUNTIME_MODULES:
        files[name] = top + runtime_source(name)
    folder = folder or package
    result = {f"{folder}/{name}": text for name, text in sorted(files.items())}
    result[f"{folder}/py.typed"] = ""
    return result
