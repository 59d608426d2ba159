"""Pure rendering: IR to ``{relative path: text}``."""

from __future__ import annotations

from acpgen import ir
from acpgen.render.builders import BuilderModule, builder_module
from acpgen.render.capability_views import capability_views, rule_views
from acpgen.render.conformance_views import SCHEMA_FILE, conformance_data, schema_document
from acpgen.render.error_codes import error_code_views
from acpgen.render.fold_views import fold_views
from acpgen.render.formatting import format_files
from acpgen.render.front_door import front_door
from acpgen.render.header import REGENERATE, generator_version, header
from acpgen.render.method_views import connected_roles, method_views, roles
from acpgen.render.model_keys import check_class_names, keyed_by_class
from acpgen.render.models import render_models
from acpgen.render.permission_views import permission_data
from acpgen.render.prepare import prepare
from acpgen.render.pydantic_floor import PYDANTIC_MINIMUM, PYDANTIC_REFUSED, stated
from acpgen.render.remote_routing import remote_routing
from acpgen.render.resume_rules import resume_rules
from acpgen.render.runtime_files import FOLDER as RUNTIME_FOLDER
from acpgen.render.runtime_files import modules as runtime_modules
from acpgen.render.runtime_files import source as runtime_source
from acpgen.render.runtime_files import with_needs
from acpgen.render.templating import render_template
from acpgen.render.testing_views import testing_data


def render(
    protocol: ir.Protocol,
    package: str,
    *,
    folder: str | None = None,
    regenerate: str = REGENERATE,
    tools: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """Every file of one generated package, formatted, keyed by path relative to the output folder.

    ``package`` is the import name the package is documented under, ``folder`` the folder it is
    written to (by default the package name), ``regenerate`` the command its headers name, ``tools``
    the tools it holds besides the bindings and their runtime (:data:`runtime_files.TOOLS`).
    """
    return format_files(render_unformatted(protocol, package, folder=folder, regenerate=regenerate, tools=tools))


def render_unformatted(
    protocol: ir.Protocol,
    package: str,
    *,
    folder: str | None = None,
    regenerate: str = REGENERATE,
    tools: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """What :func:`render` gives before formatting: a command that renders several packages
    formats them all in one run of ruff (:func:`acpgen.render.formatting.format_files`)."""
    tools = with_needs(tools)
    top = header(protocol, regenerate)
    models, tree = render_models(keyed_by_class(prepare(protocol), protocol), top)
    check_class_names(tree, protocol)
    files = {"models.py": models}
    for name, data in template_data(protocol, package, builder_module(protocol, tree), tools).items():
        files[name] = render_template(f"{name}.jinja", header=top.rstrip("\n"), **data)
    if "conformance" in tools:
        files[SCHEMA_FILE] = schema_document(protocol)
    for name in runtime_modules(tools, frozenset(m.wire for m in protocol.methods)):
        files[f"{RUNTIME_FOLDER}/{name}"] = top + runtime_source(name)
    folder = folder or package
    result = {f"{folder}/{name}": text for name, text in sorted(files.items())}
    result[f"{folder}/py.typed"] = ""
    return result


def template_data(
    protocol: ir.Protocol, package: str, builders: BuilderModule, tools: frozenset[str] = frozenset()
) -> dict[str, dict[str, object]]:
    """Each output file rendered from ``templates/package/<file>.jinja``, with the data its
    template reads, named (every template also gets the file's ``header``); a tool's module only
    with the tool."""
    connected = connected_roles(protocol)
    remote = remote_routing(protocol) if connected else None
    fold = fold_views(protocol.session)
    methods = method_views(protocol)
    data: dict[str, dict[str, object]] = {
        "__init__.py": {
            "protocol": protocol,
            "package": package,
            "pydantic_minimum": PYDANTIC_MINIMUM,
            "pydantic_refused": tuple(sorted(PYDANTIC_REFUSED)),
            "pydantic_stated": stated(),
            "exports": front_door(connected=bool(connected), remote=remote is not None, session_state=fold.available),
        },
        "_version.py": {"protocol": protocol, "generator_version": generator_version()},
        "builders.py": {"builders": builders.builders, "builder_imports": builders.imports},
        "connection.py": {},
        "dispatch.py": {},
        "initialization.py": {},
        "mcp.py": {},
        "capabilities.py": {"capabilities": capability_views(protocol), "rules": rule_views(protocol)},
        "errors.py": {"error_codes": error_code_views(protocol)},
        "interfaces.py": {"roles": roles(protocol)},
        "methods.py": {"methods": methods, "constants": sorted({(m.constant, m.wire) for m in protocol.methods})},
        "permissions.py": permission_data(protocol),
        "relay.py": {"remote": remote, "package": package, "command": "relay" in tools},
        "remote.py": {"remote": remote},
        "resume.py": {"resume": resume_rules(protocol), "remote": remote},
        "senders.py": {"roles": roles(protocol)},
        "serve.py": {"connected": connected, "resumable": remote is not None},
        "session_state.py": {"rules": fold},
        "stability.py": {"unstable_items": sorted(protocol.unstable_items), "feature_of": protocol.feature_of},
        "testing.py": testing_data(protocol, bool(connected)),
    }
    if "conformance" in tools:
        data["conformance.py"] = conformance_data(protocol, package)
    if "trace" in tools:
        data["trace.py"] = {"package": package, "rules": fold}
    return data
