"""Pure rendering of the project ``acpgen init`` makes (``templates/project/``): every file
but the vendored bindings, keyed by path inside the project. Python decides the names, the
paths and the requirements; the templates lay them out."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

import jinja2

from acpgen.render.pydantic_floor import PYDANTIC_MINIMUM, PYDANTIC_REFUSED
from acpgen.resources import templates_dir

KIT_PATHS = ("conformance.py", "_schema.json", "_runtime/tools/conformance")
"""What the conformance kit adds to a vendored copy (``--with conformance``), inside it: left out
of the project's wheel."""


@dataclass(frozen=True, slots=True)
class ProjectSpec:
    """What a project is: its import name, its distribution name, what it holds."""

    name: str
    """The import name of its package (``my_agent``)."""
    distribution: str
    """The distribution's name (``my-agent``)."""
    command: str
    """The ``acpgen init`` command that made it (for its README)."""
    client: bool = False
    ci: bool = False
    acpgen_source: str = "acpgen"
    """What the CI workflow installs acpgen from (``uvx --from``)."""
    acpgen_note: str = ""

    @property
    def agent_class(self) -> str:
        """The agent's class: the name in CamelCase, ending in ``Agent``."""
        camel = "".join(part[:1].upper() + part[1:] for part in self.name.split("_") if part) or "My"
        return camel if camel.endswith("Agent") else f"{camel}Agent"

    @property
    def bindings(self) -> str:
        """Where the bindings are vendored, inside the project."""
        return f"src/{self.name}/_acp"


def pydantic_requirement() -> str:
    """The requirement the bindings state (``pydantic>=2.12,!=2.13.0``)."""
    floor = "pydantic>=" + ".".join(map(str, PYDANTIC_MINIMUM))
    return ",".join([floor, *(f"!={v}" for v in sorted(PYDANTIC_REFUSED))])


def render_project(spec: ProjectSpec) -> dict[str, str]:
    """Every file of the project but the bindings, by POSIX path inside it."""
    data = {
        "name": spec.name,
        "distribution": spec.distribution,
        "agent_class": spec.agent_class,
        "client": spec.client,
        "ci": spec.ci,
        "command": spec.command,
        "pydantic": pydantic_requirement(),
        "kit_files": [f"{spec.bindings}/{path}" for path in KIT_PATHS],
        "acpgen_source": spec.acpgen_source,
        "acpgen_note": spec.acpgen_note,
    }
    package = f"src/{spec.name}"
    files = {
        "pyproject.toml": "pyproject.toml.jinja",
        "README.md": "README.md.jinja",
        ".gitignore": "gitignore.jinja",
        f"{package}/__init__.py": "__init__.py.jinja",
        f"{package}/__main__.py": "__main__.py.jinja",
        f"{package}/agent.py": "agent.py.jinja",
        "tests/test_agent.py": "tests/test_agent.py.jinja",
        "tests/test_conformance.py": "tests/test_conformance.py.jinja",
    }
    if spec.client:
        files[f"{package}/client.py"] = "client.py.jinja"
        files["tests/test_client.py"] = "tests/test_client.py.jinja"
    if spec.ci:
        files[".github/workflows/ci.yml"] = "ci.yml.jinja"
    return {path: _environment().get_template(template).render(**data) for path, template in sorted(files.items())}


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir() / "project"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["py"] = repr
    env.filters["toml"] = json.dumps  # a JSON string is a TOML (and YAML) basic string
    return env
