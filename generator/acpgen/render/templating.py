"""The one Jinja environment of each template folder: ``templates/package/`` (a generated package),
``templates/project/`` (what ``acpgen init`` writes), ``templates/docs/``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache

import jinja2

from acpgen.resources import templates_dir


@cache
def environment(folder: str = "package") -> jinja2.Environment:
    """The templates of ``templates/<folder>``: strict (a typo in a template fails loudly), with
    whitespace control for readable templates."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir() / folder),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["py"] = repr  # Python literals are emitted through repr, never pasted between quotes
    env.filters["docstring"] = docstring
    env.filters["dunder_all"] = dunder_all
    env.filters["toml"] = json.dumps  # a JSON string is a TOML (and YAML) basic string
    return env


def docstring(text: str, indent: int = 4) -> str:
    """A triple-quoted docstring literal for ``text``, its lines indented by ``indent`` spaces."""
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    pad = " " * indent
    lines = [pad + line if line else "" for line in body.splitlines()]
    return '"""\n' + "\n".join(lines) + "\n" + pad + '"""'


def dunder_all(names: Iterable[str]) -> str:
    """The literal of an ``__all__`` list, sorted as linters expect it (isort style).

    Constants (``SCREAMING_CASE``) first, then classes (``CamelCase``), then the rest, each
    group in natural order (``a2`` before ``a10``).
    """

    def key(name: str) -> tuple[int, list[tuple[int, int | str]]]:
        group = 0 if name.upper() == name else 1 if name[:1].isupper() else 2
        parts = re.split(r"(\d+)", name)
        return group, [(0, int(p)) if p.isdigit() else (1, p) for p in parts]

    return "[" + ", ".join(repr(n) for n in sorted(set(names), key=key)) + "]"


def render_template(name: str, **data: object) -> str:
    """Render ``templates/package/<name>``."""
    return environment().get_template(name).render(**data)
