"""The one Jinja environment for the package templates (``templates/package/``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@cache
def environment() -> jinja2.Environment:
    """Strict (a typo in a template fails loudly), with whitespace control for readable templates."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES / "package"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["py"] = repr  # Python literals are emitted through repr, never pasted between quotes
    env.filters["docstring"] = docstring
    return env


def docstring(text: str, indent: int = 4) -> str:
    """A triple-quoted docstring literal for ``text``, its lines indented by ``indent`` spaces."""
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    pad = " " * indent
    lines = [pad + line if line else "" for line in body.splitlines()]
    return '"""\n' + "\n".join(lines) + "\n" + pad + '"""'


def render_template(name: str, **data: object) -> str:
    """Render ``templates/package/<name>``."""
    return environment().get_template(name).render(**data)
