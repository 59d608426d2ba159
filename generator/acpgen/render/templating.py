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


LINE_LENGTH = 88
"""The generated code's line length (``formatting``)."""


def docstring(text: str, indent: int = 4) -> str:
    """A triple-quoted docstring literal for ``text`` as PEP 257 lays one out: its summary on the
    line of the opening quotes, the rest indented by ``indent`` spaces and the closing quotes on a
    line of their own; one line when ``text`` is one line that fits."""
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    pad = " " * indent
    first, *rest = body.splitlines() or [""]
    if not rest and not first.endswith('"') and indent + len(first) + 6 <= LINE_LENGTH:
        return f'"""{first}"""'
    lines = [pad + line if line else "" for line in rest]
    return '"""' + "\n".join([first, *lines]) + "\n" + pad + '"""'


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
